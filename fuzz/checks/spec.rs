//! `spec`: a tool defined at run time from JSON text: a `ToolSpec` as it reads and writes
//! itself, and a definition in any provider's shape (`ToolSpec::from_provider`).
//!
//! - A spec that reads writes JSON that reads back into the same spec, registers in a
//!   registry of its own (or is refused with a typed error), and is listed for every provider.
//! - A definition that imports registers, and the definition the registry writes for that
//!   provider imports back into the same spec once it has been written once: import and write
//!   reach a fixed point. The first import already keeps every field but the argument schema
//!   (which a provider's definition normalises) and, for Gemini, its types; Anthropic's
//!   `defer_loading` and MCP's task support, which a plain list does not write, aside.

use serde_json::Value;
use tool_registry::format::Provider;
use tool_registry::spec::ToolHandler;
use tool_registry::{Ctx, Listing, Registry, ToolSpec};

const PROVIDERS: [Provider; 5] = [
    Provider::OpenAi,
    Provider::Responses,
    Provider::Anthropic,
    Provider::Gemini,
    Provider::Mcp,
];

pub fn check(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(spec) = serde_json::from_str::<ToolSpec>(text) {
        let written = serde_json::to_string(&spec).expect("a spec writes itself");
        let again: ToolSpec = serde_json::from_str(&written).unwrap_or_else(|error| {
            panic!("a spec does not read what it wrote: {error}: {written}")
        });
        assert_eq!(again, spec, "read back: {written}");
        let registry = fresh();
        if registry.register(spec, handler()).is_ok() {
            for provider in PROVIDERS {
                let _ = registry.provider_tools(provider, Listing::every());
            }
            let _ = registry.prompt_block(Listing::every());
        }
    }
    let Ok(definition) = serde_json::from_str::<Value>(text) else {
        return;
    };
    let Ok(imported) = ToolSpec::from_provider(&definition) else {
        return;
    };
    let provider = imported.provider;
    let first = written_again(&imported.spec, provider);
    let again = reimported(&first, provider);
    // Written back and imported again, the spec is a fixed point.
    let third = reimported(&written_again(&again, provider), provider);
    assert_eq!(
        third, again,
        "{provider:?}, imported a third time: {definition}"
    );
    // And the first import keeps what the definition said, but for the argument schema's
    // normalisation and Gemini's types.
    if provider != Provider::Gemini {
        assert_eq!(
            fields(&again, provider, &definition),
            fields(&imported.spec, provider, &definition),
            "{provider:?}, imported again: {definition}"
        );
    }
}

/// A spec's fields, its name as the provider is given it, but the argument schema (written as providers take it: `properties` even
/// when empty, no top-level `title`) and those a provider's definition writes back only where
/// they apply: Anthropic's `defer_loading` (in a list with its tool search), MCP's task support
/// (written by the server of the revision that runs tasks); and MCP's hints, when the
/// definition gave none (they are written out whole, MCP's defaults where absent).
fn fields(spec: &ToolSpec, provider: Provider, definition: &Value) -> Value {
    let mut fields = serde_json::to_value(spec).expect("a spec writes itself");
    let object = fields.as_object_mut().expect("a spec is an object");
    object.remove("input_schema");
    // The name as the provider is given it: a name its rule refuses (a `.` but for MCP) is
    // written in its wire form (`Provider::wire_name`).
    let name = spec.tool_name();
    object.insert("tool_name".into(), provider.wire_name(name).into());
    match provider {
        Provider::Anthropic => object.remove("defer_loading"),
        Provider::Mcp => object.remove("task"),
        _ => None,
    };
    // MCP's hints are written out whole (MCP's defaults where the tool says nothing): a
    // definition without them gets them.
    if provider == Provider::Mcp && definition.get("annotations").is_none() {
        object.remove("annotations");
    }
    fields
}

/// A registry without this program's tools.
fn fresh() -> Registry {
    Registry::builder()
        .without_linked()
        .build()
        .expect("an empty registry builds")
}

fn handler() -> ToolHandler {
    ToolHandler::new(|_args: Value, _ctx: Ctx| async move { Ok::<_, String>(Value::Null) })
}

/// The definition a registry holding only `spec` writes for `provider`.
fn written_again(spec: &ToolSpec, provider: Provider) -> Value {
    let registry = fresh();
    registry
        .register(spec.clone(), handler())
        .unwrap_or_else(|error| panic!("an imported spec is refused: {error}: {spec:?}"));
    let tools = registry.provider_tools(provider, Listing::every());
    let list = match provider {
        Provider::Gemini => &tools[0]["functionDeclarations"],
        _ => &tools,
    };
    match list.as_array().map(Vec::as_slice) {
        Some([one]) => one.clone(),
        _ => panic!("{provider:?} lists one tool as {tools}"),
    }
}

/// `definition` imported as `provider`'s.
fn reimported(definition: &Value, provider: Provider) -> ToolSpec {
    ToolSpec::from_provider_as(definition, provider)
        .unwrap_or_else(|error| {
            panic!("{provider:?} does not read what it wrote: {error}: {definition}")
        })
        .spec
}
