//! Generated code must not clash with the user's names: types called like std or registry
//! items, a module called `tool_registry`, and functions named like generated helpers.

#![allow(dead_code, non_camel_case_types, unused_macros)]

use ::tool_registry::tool;

struct Result;
struct Option;
struct Ok;
struct Err;
struct Some;
struct None;
struct Box;
struct String;
struct Vec;
struct Value;
struct Schema;
struct ToolDef;
struct ToolParts;
struct ToolArgs;
struct CallEnv;
struct Ctx;
struct State;
struct Tier;
struct Cost;
struct Permission;
struct Annotations;
struct ArgInfo;
struct SourceLocation;
struct TagForm;
struct Serialize;
struct Deserialize;
struct JsonSchema;
struct __tool_registry_Args;
struct PhantomData;
struct Pin;
struct Sized;
trait From {}
trait Into {}
trait Default {}
trait Send {}
trait Sync {}
trait Future {}
trait Fn {}
type Typed = ();

mod tool_registry {}
mod core {}
mod std_like {}
mod serde {}
mod schemars {}
mod linkme {}

fn __tool_registry_call() {}
fn __tool_registry_checks() {}
fn drop() {}
fn format() {}
fn into() {}
fn from() {}
fn parse_args() {}
fn schema_for() {}
fn assert_arg() {}

macro_rules! concat {
    () => {};
}
macro_rules! line {
    () => {};
}
macro_rules! file {
    () => {};
}

static __TOOL_REGISTRY_DEF: u8 = 0;

/// Add two numbers.
#[::tool_registry::tool(tier = "low", cost = "cheap", permission = "user", cooldown = "1s")]
async fn add(a: i64, b: i64) -> ::std::result::Result<i64, ::std::string::String> {
    ::std::result::Result::Ok(a + b)
}

/// Echo the text back, with a default repeat count.
#[tool(
    name = "text.echo",
    tag = "ECHO",
    pattern = r"(\d+)\s+(.+)",
    groups(times, text)
)]
fn echo(
    text: ::std::string::String,
    #[arg(desc = "How often", default = 1)] times: u32,
) -> ::std::string::String {
    text.repeat(times as usize)
}

fn main() {
    let registry = ::tool_registry::Registry::global();
    assert!(
        registry
            .get("add", ::tool_registry::Listing::every())
            .is_some()
    );
    assert!(
        registry
            .get("text.echo", ::tool_registry::Listing::every())
            .is_some()
    );
}
