//! Tools whose arguments all have standard types get their input schema from a short
//! description built at first use, not from a derived `JsonSchema`: it must be, byte for byte,
//! the schema the derive gives for the same arguments.

use schemars::JsonSchema;
use serde::Deserialize;
use tool_registry::Listing;
use tool_registry::{Ctx, Registry, tool};

/// Every standard scalar type.
#[tool]
#[allow(clippy::too_many_arguments)]
async fn scalars(
    a: String,
    b: bool,
    c: char,
    d: u8,
    e: u16,
    f: u32,
    g: u64,
    h: usize,
    i: i8,
    j: i16,
    k: i32,
    l: i64,
    m: isize,
    n: f32,
    o: f64,
) -> String {
    format!("{a}{b}{c}{d}{e}{f}{g}{h}{i}{j}{k}{l}{m}{n}{o}")
}

/// Options and vectors of them, nested.
#[tool]
async fn wrapped(
    a: Option<String>,
    b: Vec<u32>,
    c: Option<Vec<i64>>,
    d: Vec<Option<bool>>,
    e: Vec<Vec<f64>>,
) -> usize {
    a.map_or(0, |a| a.len()) + b.len() + c.map_or(0, |c| c.len()) + d.len() + e.len()
}

/// Descriptions, defaults, renames and length limits.
#[tool]
async fn described(
    #[arg(desc = "What to look for", max_len = 40)] query: String,
    #[arg(desc = "How many", default = 5, min = 1, max = 50)] limit: u32,
    #[arg(rename = "type")] kind: Option<String>,
    ids: Vec<u8>,
    #[arg(default = "plain".to_owned())] style: String,
    #[arg(default = vec![1, 2])] pages: Vec<u16>,
) -> String {
    format!("{query} {limit} {kind:?} {ids:?} {style} {pages:?}")
}

/// No arguments at all.
#[tool]
async fn nothing() -> &'static str {
    "nothing"
}

// The same arguments as derived structs, with the attributes `#[tool]` used to write.

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Scalars {
    a: String,
    b: bool,
    c: char,
    d: u8,
    e: u16,
    f: u32,
    g: u64,
    h: usize,
    i: i8,
    j: i16,
    k: i32,
    l: i64,
    m: isize,
    n: f32,
    o: f64,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Wrapped {
    a: Option<String>,
    b: Vec<u32>,
    c: Option<Vec<i64>>,
    d: Vec<Option<bool>>,
    e: Vec<Vec<f64>>,
}

fn five() -> u32 {
    5
}
fn plain() -> String {
    "plain".to_owned()
}
fn one_two() -> Vec<u16> {
    vec![1, 2]
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Described {
    #[schemars(description = "What to look for")]
    #[schemars(length(max = 40))]
    query: String,
    #[schemars(description = "How many")]
    #[serde(default = "five")]
    #[schemars(default = "five")]
    #[schemars(range(min = 1, max = 50))]
    limit: u32,
    #[serde(rename = "type")]
    kind: Option<String>,
    ids: Vec<u8>,
    #[serde(default = "plain")]
    #[schemars(default = "plain")]
    style: String,
    #[serde(default = "one_two")]
    #[schemars(default = "one_two")]
    pages: Vec<u16>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Nothing {}

fn schema_text(name: &str) -> String {
    let registry = Registry::global();
    serde_json::to_string(
        registry
            .get(name, Listing::every())
            .unwrap()
            .input_schema()
            .as_value(),
    )
    .unwrap()
}

fn derived<T: JsonSchema>() -> String {
    serde_json::to_string(tool_registry::__private::schema_for::<T>().as_value()).unwrap()
}

#[test]
fn the_schema_of_standard_arguments_is_the_derived_one() {
    assert_eq!(schema_text("scalars"), derived::<Scalars>());
    assert_eq!(schema_text("wrapped"), derived::<Wrapped>());
    assert_eq!(schema_text("described"), derived::<Described>());
    assert_eq!(schema_text("nothing"), derived::<Nothing>());
    // Not vacuous: the schemas say what the arguments are.
    let described = schema_text("described");
    for part in [
        r#""description":"What to look for""#,
        r#""maxLength":40"#,
        r#""default":5"#,
        r#""type":{"type":["string","null"]}"#,
        r#""default":[1,2]"#,
    ] {
        assert!(described.contains(part), "{part} in {described}");
    }
}

#[tokio::test]
async fn standard_arguments_are_read_with_their_defaults_and_names() {
    let registry = Registry::global();
    let ctx = Ctx::new();
    let result = registry
        .call(
            "described",
            r#"{"query": "rust", "type": "book", "ids": [1, 2]}"#,
            &ctx,
        )
        .await
        .unwrap();
    assert_eq!(
        result.content,
        serde_json::json!("rust 5 Some(\"book\") [1, 2] plain [1, 2]")
    );
    let refused = registry
        .call(
            "described",
            r#"{"query": "rust", "kind": "book", "ids": []}"#,
            &ctx,
        )
        .await
        .unwrap_err();
    assert_eq!(refused.code(), "invalid_arguments");
    assert!(refused.to_string().contains("kind"), "{refused}");
    // `min` and `max` hold before the tool runs, as the schema says.
    for (limit, says) in [
        (0, "less than the least allowed, 1"),
        (51, "more than the most allowed, 50"),
    ] {
        let out = registry
            .call(
                "described",
                serde_json::json!({"query": "rust", "ids": [], "limit": limit}),
                &ctx,
            )
            .await
            .unwrap_err();
        assert!(
            matches!(&out, tool_registry::ToolError::InvalidArguments { path, .. } if path == "limit"),
            "{out}"
        );
        assert!(out.to_string().contains(says), "{out}");
    }
    let nothing = registry.call("nothing", "{}", &ctx).await.unwrap();
    assert_eq!(nothing.content, serde_json::json!("nothing"));
}
