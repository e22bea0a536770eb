//! The resources, resource templates and prompts of a mounted MCP server, as the registry's
//! own: each registered under its module's prefix (`module.name`; a resource keeps its URI),
//! read and got through the server, and listed again when the server says they changed.

use rmcp::model::{GetPromptRequestParams, ReadResourceRequestParams};
use rmcp::{Peer, RoleClient};
use serde_json::Value;
use tool_registry_core::ToolError;
use tool_registry_core::content::{Block, Resource, wire};
use tool_registry_core::offer::{PromptArgument, PromptMessage, PromptSpec, ResourceSpec, Role};
use tool_registry_core::registry::Shared;

/// What a module registered of its server's offers: the URIs of its resources and templates,
/// and the names of its prompts.
#[derive(Default)]
pub(super) struct Offered {
    pub(super) resources: Vec<String>,
    pub(super) prompts: Vec<String>,
}

impl Offered {
    /// Takes everything this module registered out of the registry.
    pub(super) fn remove(&mut self, registry: &Shared) {
        for uri in self.resources.drain(..) {
            registry.remove_resource(&uri);
        }
        for name in self.prompts.drain(..) {
            registry.remove_prompt(&name);
        }
    }
}

/// A failure of the server, as the registry reports it.
fn failed(module: &str, error: impl std::fmt::Display) -> ToolError {
    ToolError::failed(format!("the MCP server `{module}` answered: {error}"))
}

/// One of a server's resource contents as the registry's [`Resource`].
fn resource_of(contents: &Value) -> Result<Resource, String> {
    let block = serde_json::json!([{"type": "resource", "resource": contents}]);
    let blocks = wire::deserialize(block).map_err(|error| error.to_string())?;
    match blocks.into_vec().pop() {
        Some(Block::Resource(resource)) => Ok(resource),
        _ => Err("the server's contents are not a resource".into()),
    }
}

/// One of a server's prompt messages as the registry's [`PromptMessage`].
fn message_of(message: &Value) -> Result<PromptMessage, String> {
    let role = match message["role"].as_str() {
        Some("assistant") => Role::Assistant,
        _ => Role::User,
    };
    let blocks = wire::deserialize(Value::Array(vec![message["content"].clone()]))
        .map_err(|error| error.to_string())?;
    let content = blocks
        .into_vec()
        .pop()
        .ok_or_else(|| "a prompt message without content".to_owned())?;
    Ok(PromptMessage { role, content })
}

/// Lists the server's offers and registers them under `module`'s prefix: what was registered.
/// A server that offers none (or does not say) registers nothing.
pub(super) async fn mount(registry: &Shared, module: &str, peer: &Peer<RoleClient>) -> Offered {
    let mut offered = Offered::default();
    let capabilities = peer.peer_info().map(|info| info.capabilities.clone());
    let resources = capabilities.as_ref().is_some_and(|c| c.resources.is_some());
    let prompts = capabilities.as_ref().is_some_and(|c| c.prompts.is_some());
    let mut specs: Vec<(String, String, Option<String>, Option<String>)> = Vec::new();
    if resources {
        match peer.list_all_resources().await {
            Ok(listed) => specs.extend(listed.into_iter().map(|r| {
                (
                    r.uri.clone(),
                    r.name.clone(),
                    r.description.clone(),
                    r.mime_type.clone(),
                )
            })),
            Err(error) => {
                tracing::warn!(target: "tool_registry::mcp", module, %error, "the MCP server's resources cannot be listed")
            }
        }
        match peer.list_all_resource_templates().await {
            Ok(listed) => specs.extend(listed.into_iter().map(|t| {
                (
                    t.uri_template.clone(),
                    t.name.clone(),
                    t.description.clone(),
                    t.mime_type.clone(),
                )
            })),
            Err(error) => {
                tracing::warn!(target: "tool_registry::mcp", module, %error, "the MCP server's resource templates cannot be listed")
            }
        }
    }
    for (uri, name, description, mime_type) in specs {
        let (peer, owner) = (peer.clone(), module.to_owned());
        let spec = ResourceSpec::new(uri.clone(), format!("{module}.{name}"), move |request| {
            let (peer, owner) = (peer.clone(), owner.clone());
            async move {
                let read = peer
                    .read_resource(ReadResourceRequestParams::new(request.uri))
                    .await
                    .map_err(|error| failed(&owner, error))?;
                let contents =
                    serde_json::to_value(&read.contents).map_err(|e| failed(&owner, e))?;
                (contents.as_array().into_iter().flatten())
                    .map(|contents| resource_of(contents).map_err(|e| failed(&owner, e)))
                    .collect()
            }
        });
        let spec = match spec {
            Ok(spec) => spec.with_description(description.unwrap_or_default()),
            Err(error) => {
                tracing::warn!(target: "tool_registry::mcp", module, %error, "a resource of the MCP server is left out");
                continue;
            }
        };
        let spec = match mime_type {
            Some(mime) => spec.with_mime_type(mime),
            None => spec,
        };
        match registry.register_resource(spec) {
            Ok(()) => offered.resources.push(uri),
            Err(error) => {
                tracing::warn!(target: "tool_registry::mcp", module, %error, "a resource of the MCP server is left out")
            }
        }
    }
    if !prompts {
        return offered;
    }
    let listed = match peer.list_all_prompts().await {
        Ok(listed) => listed,
        Err(error) => {
            tracing::warn!(target: "tool_registry::mcp", module, %error, "the MCP server's prompts cannot be listed");
            return offered;
        }
    };
    for prompt in listed {
        let local = format!("{module}.{}", prompt.name);
        let (peer, owner, remote) = (peer.clone(), module.to_owned(), prompt.name.clone());
        let mut spec = PromptSpec::new(local.clone(), move |request| {
            let (peer, owner, remote) = (peer.clone(), owner.clone(), remote.clone());
            async move {
                let arguments: serde_json::Map<String, Value> = (request.arguments.into_iter())
                    .map(|(key, value)| (key, Value::String(value)))
                    .collect();
                let got = peer
                    .get_prompt(GetPromptRequestParams::new(remote).with_arguments(arguments))
                    .await
                    .map_err(|error| failed(&owner, error))?;
                let messages =
                    serde_json::to_value(&got.messages).map_err(|e| failed(&owner, e))?;
                (messages.as_array().into_iter().flatten())
                    .map(|message| message_of(message).map_err(|e| failed(&owner, e)))
                    .collect()
            }
        })
        .with_description(prompt.description.clone().unwrap_or_default());
        for argument in prompt.arguments.iter().flatten() {
            let description = argument.description.clone().unwrap_or_default();
            spec = spec.with_argument(if argument.required.unwrap_or(false) {
                PromptArgument::required(argument.name.clone(), description)
            } else {
                PromptArgument::optional(argument.name.clone(), description)
            });
        }
        match registry.register_prompt(spec) {
            Ok(()) => offered.prompts.push(local),
            Err(error) => {
                tracing::warn!(target: "tool_registry::mcp", module, %error, "a prompt of the MCP server is left out")
            }
        }
    }
    offered
}
