//! Resources, resource templates, prompts and completion over MCP: the registry's
//! [`offer`](tool_registry_core::offer)s as rmcp's results, for the caller of a request; a
//! session's resource subscriptions, bounded.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use rmcp::ErrorData;
use rmcp::model::{
    CacheScope, CompleteRequestParams, CompleteResult, GetPromptResult, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult, Reference,
};
use serde_json::{Value, json};
use tool_registry_core::content::{Block, Resource};
use tool_registry_core::format::mcp::content_block;
use tool_registry_core::offer::{
    CompletionRequest, CompletionTarget, OfferError, PromptSpec, ResourceSpec,
};
use tool_registry_core::{Ctx, Registry, Scope};

/// How many resources one session may subscribe to at once; past it, `resources/subscribe`
/// is refused until the client unsubscribes from some.
pub const MAX_SUBSCRIPTIONS: usize = 256;

/// The error for an offer that was not given: an unknown (or hidden) resource is MCP's
/// resource-not-found (`-32002`, which rmcp answers as `-32602` on 2026-07-28) with the URI in
/// `data.uri`; an unknown prompt, a missing or unknown argument, a refused variable are
/// invalid params; a failed read or prompt is an internal error with the registry's message.
pub(super) fn error(error: OfferError) -> ErrorData {
    match &error {
        OfferError::UnknownResource { uri } => {
            ErrorData::resource_not_found(error.to_string(), Some(json!({ "uri": uri })))
        }
        OfferError::Failed(_) => {
            ErrorData::internal_error(error.to_string(), Some(json!({ "code": error.code() })))
        }
        _ => ErrorData::invalid_params(error.to_string(), Some(json!({ "code": error.code() }))),
    }
}

/// `value` as rmcp's result type, marked complete (`resultType`, which rmcp leaves out for a
/// client of the `initialize` era).
fn typed<T: serde::de::DeserializeOwned>(mut value: Value) -> Result<T, ErrorData> {
    value["resultType"] = "complete".into();
    serde_json::from_value(value).map_err(|error| {
        ErrorData::internal_error(format!("an answer is not MCP's shape: {error}"), None)
    })
}

fn described(
    object: &mut serde_json::Map<String, Value>,
    spec_title: Option<&str>,
    description: &str,
) {
    if let Some(title) = spec_title {
        object.insert("title".into(), title.into());
    }
    if !description.is_empty() {
        object.insert("description".into(), description.into());
    }
}

fn resource_entry(resource: &ResourceSpec, key: &str) -> Value {
    let mut object = serde_json::Map::new();
    object.insert(key.into(), resource.uri().into());
    object.insert("name".into(), resource.name().into());
    described(&mut object, resource.title(), resource.description());
    if let Some(mime) = resource.mime_type() {
        object.insert("mimeType".into(), mime.into());
    }
    Value::Object(object)
}

/// `resources/list`: every resource the caller sees, sorted by URI, in one page.
pub(super) fn list_resources(
    registry: &Registry,
    scope: &Scope,
) -> Result<ListResourcesResult, ErrorData> {
    let resources: Vec<Value> = (registry.resources(scope).iter())
        .map(|r| resource_entry(r, "uri"))
        .collect();
    let result: ListResourcesResult = typed(json!({ "resources": resources }))?;
    Ok(result.with_cache_scope(CacheScope::Private))
}

/// `resources/templates/list`: every template the caller sees, sorted by URI template.
pub(super) fn list_templates(
    registry: &Registry,
    scope: &Scope,
) -> Result<ListResourceTemplatesResult, ErrorData> {
    let templates: Vec<Value> = (registry.resource_templates(scope).iter())
        .map(|r| resource_entry(r, "uriTemplate"))
        .collect();
    let result: ListResourceTemplatesResult = typed(json!({ "resourceTemplates": templates }))?;
    Ok(result.with_cache_scope(CacheScope::Private))
}

/// One resource's contents in MCP's shape: `{uri, mimeType, text}` or `{uri, mimeType, blob}`.
fn contents(resource: &Resource) -> Value {
    let mut block = content_block(&Block::Resource(resource.clone()));
    block
        .get_mut("resource")
        .map(Value::take)
        .unwrap_or(Value::Null)
}

/// `resources/read`.
pub(super) async fn read(
    registry: &Registry,
    uri: &str,
    ctx: &Ctx,
) -> Result<ReadResourceResult, ErrorData> {
    let read = registry.read_resource(uri, ctx).await.map_err(error)?;
    let contents: Vec<Value> = read.iter().map(contents).collect();
    let result: ReadResourceResult = typed(json!({ "contents": contents }))?;
    Ok(result.with_cache_scope(CacheScope::Private))
}

fn prompt_entry(prompt: &PromptSpec) -> Value {
    let mut object = serde_json::Map::new();
    object.insert("name".into(), prompt.name().into());
    described(&mut object, prompt.title(), prompt.description());
    if !prompt.arguments().is_empty() {
        let arguments: Vec<Value> = (prompt.arguments().iter())
            .map(|argument| {
                let mut object = serde_json::Map::new();
                object.insert("name".into(), argument.name.clone().into());
                if !argument.description.is_empty() {
                    object.insert("description".into(), argument.description.clone().into());
                }
                object.insert("required".into(), argument.required.into());
                Value::Object(object)
            })
            .collect();
        object.insert("arguments".into(), arguments.into());
    }
    Value::Object(object)
}

/// `prompts/list`: every prompt the caller sees, sorted by name, in one page.
pub(super) fn list_prompts(
    registry: &Registry,
    scope: &Scope,
) -> Result<ListPromptsResult, ErrorData> {
    let prompts: Vec<Value> = registry.prompts(scope).iter().map(prompt_entry).collect();
    let result: ListPromptsResult = typed(json!({ "prompts": prompts }))?;
    Ok(result.with_cache_scope(CacheScope::Private))
}

/// `prompts/get`.
pub(super) async fn get(
    registry: &Registry,
    name: &str,
    arguments: Option<serde_json::Map<String, Value>>,
    ctx: &Ctx,
) -> Result<GetPromptResult, ErrorData> {
    let mut given = BTreeMap::new();
    for (key, value) in arguments.unwrap_or_default() {
        let Value::String(value) = value else {
            return Err(ErrorData::invalid_params(
                format!(
                    "the prompt argument `{}` must be a string",
                    key.escape_debug()
                ),
                None,
            ));
        };
        given.insert(key, value);
    }
    let spec = registry.prompt(name, ctx.scope());
    let messages = registry.get_prompt(name, given, ctx).await.map_err(error)?;
    let messages: Vec<Value> = (messages.iter())
        .map(|message| json!({ "role": message.role, "content": content_block(&message.content) }))
        .collect();
    let mut answer = json!({ "messages": messages });
    if let Some(description) = spec
        .map(|p| p.description().to_owned())
        .filter(|d| !d.is_empty())
    {
        answer["description"] = description.into();
    }
    typed(answer)
}

/// `completion/complete`.
pub(super) fn complete(
    registry: &Registry,
    request: CompleteRequestParams,
    scope: &Scope,
) -> Result<CompleteResult, ErrorData> {
    let target = match &request.r#ref {
        Reference::Prompt(prompt) => CompletionTarget::Prompt(prompt.name.clone()),
        Reference::Resource(resource) => CompletionTarget::Resource(resource.uri.clone()),
        _ => {
            return Err(ErrorData::invalid_params(
                "completion refers to a prompt (`ref/prompt`) or a resource template (`ref/resource`)",
                None,
            ));
        }
    };
    let context = request
        .context
        .and_then(|context| context.arguments)
        .unwrap_or_default()
        .into_iter()
        .collect();
    let asked = CompletionRequest {
        value: request.argument.value,
        context,
    };
    let completion = registry
        .complete(&target, &request.argument.name, &asked, scope)
        .map_err(error)?;
    typed(json!({ "completion": completion }))
}

/// The resources one session subscribed to (`resources/subscribe`, 2025-11-25), at most
/// [`MAX_SUBSCRIPTIONS`].
#[derive(Clone, Default)]
pub(super) struct Subscriptions(Arc<Mutex<BTreeSet<String>>>);

impl Subscriptions {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeSet<String>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Subscribes to `uri`, which must be a resource the caller may read.
    pub(super) fn add(
        &self,
        registry: &Registry,
        uri: &str,
        scope: &Scope,
    ) -> Result<(), ErrorData> {
        registry.resource_exists(uri, scope).map_err(error)?;
        let mut set = self.lock();
        if set.len() >= MAX_SUBSCRIPTIONS && !set.contains(uri) {
            return Err(ErrorData::invalid_params(
                format!(
                    "this session holds {MAX_SUBSCRIPTIONS} resource subscriptions, the most it may; unsubscribe from some first"
                ),
                None,
            ));
        }
        set.insert(uri.to_owned());
        Ok(())
    }

    /// Ends the subscription to `uri`, if there was one.
    pub(super) fn remove(&self, uri: &str) {
        self.lock().remove(uri);
    }

    /// Whether the session follows `uri`.
    pub(super) fn follows(&self, uri: &str) -> bool {
        self.lock().contains(uri)
    }
}
