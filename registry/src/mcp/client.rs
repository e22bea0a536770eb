//! An MCP server mounted as a module: its tools join the registry as run-time tools named
//! `module.tool`, with the registry's scopes, limits and gates in front of them, and follow its
//! `list_changed` notifications.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ContentBlock, ErrorCode, ResourceContents, Tool,
};
use rmcp::service::{NotificationContext, RoleClient, RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, ServiceExt};
use serde_json::Value;
use tokio::sync::mpsc;

use super::stdio::{StdioTransport, TOO_LONG};
use crate::call::{ToolError, ToolResult};
use crate::def::Annotations;
use crate::format::mcp::{file_name, unwrap_output_schema, unwrap_structured};
use crate::http::MODULE_TIMEOUT;
use crate::media::{
    Audio, Block, BlockKind, ContentLimits, File, Image, Resource, ResourceBody, ResourceLink, wire,
};
use crate::registry::Shared;
use crate::spec::{ToolHandler, ToolSpec};

/// An MCP server whose tools are tools of a registry, as `module.tool`. Dropping it ends the
/// session; its tools stay listed and answer `module_unreachable` until removed
/// ([`McpModule::remove_tools`]).
pub struct McpModule {
    inner: Arc<Inner>,
    session: RunningService<RoleClient, Follower>,
    /// The server's process, for a server on stdio: killed when the module is dropped.
    _process: Option<tokio::process::Child>,
}

struct Inner {
    registry: Shared,
    name: String,
    /// The gateway names of its tools in the registry, each with whether its server wraps its
    /// values (`structuredContent` `{"result": ...}`, see [`crate::format::mcp`]).
    tools: Mutex<BTreeMap<String, bool>>,
}

/// Why an MCP server cannot be mounted.
#[derive(Debug, thiserror::Error)]
#[error("cannot mount the MCP server `{module}`: {reason}")]
pub struct McpModuleError {
    /// The module.
    pub module: String,
    /// What went wrong.
    pub reason: String,
}

/// The client side's handler: it hears `list_changed` and asks for the list again.
#[derive(Clone)]
struct Follower {
    changed: mpsc::UnboundedSender<()>,
}

impl ClientHandler for Follower {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.changed.send(());
    }
}

impl McpModule {
    /// Starts `command` (an MCP server on stdio) and mounts its tools as `name.tool`. The
    /// process is killed when the module is dropped.
    ///
    /// Its output is read one message a line, each line bounded by what the registry's
    /// [`ContentLimits`] let a result hold in base64 and [`MCP_ANSWER_ROOM`] more: an answer
    /// past that is skipped as it arrives, never held whole, and its call is `invalid_output`
    /// at once.
    pub async fn spawn(
        registry: impl Into<Shared>,
        name: &str,
        mut command: tokio::process::Command,
    ) -> Result<Self, McpModuleError> {
        let registry = registry.into();
        let max_line = answer_bound(&registry.policy.content_limits);
        command
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true);
        let mut process = command
            .spawn()
            .map_err(|error| failed(name, error.to_string()))?;
        let (Some(output), Some(input)) = (process.stdout.take(), process.stdin.take()) else {
            return Err(failed(name, "its standard streams are not pipes".into()));
        };
        let transport = StdioTransport::<_, RoleClient>::new(output, input, max_line);
        let mut module = Self::mount(registry, name, transport).await?;
        module._process = Some(process);
        Ok(module)
    }

    /// Connects to the MCP server at `url` (streamable HTTP), with its bearer `token` if any,
    /// and mounts its tools as `name.tool`.
    pub async fn connect(
        registry: impl Into<Shared>,
        name: &str,
        url: &str,
        token: Option<&str>,
    ) -> Result<Self, McpModuleError> {
        let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
        if let Some(token) = token {
            config = config.auth_header(token.to_owned());
        }
        Self::mount(
            registry.into(),
            name,
            StreamableHttpClientTransport::from_config(config),
        )
        .await
    }

    async fn mount<T, E, A>(
        registry: Shared,
        name: &str,
        transport: T,
    ) -> Result<Self, McpModuleError>
    where
        T: rmcp::transport::IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let (changed, mut changes) = mpsc::unbounded_channel();
        let session = Follower { changed }
            .serve(transport)
            .await
            .map_err(|error| failed(name, error.to_string()))?;
        let inner = Arc::new(Inner {
            registry,
            name: name.to_owned(),
            tools: Mutex::new(BTreeMap::new()),
        });
        let module = Self {
            inner,
            session,
            _process: None,
        };
        module.refresh().await?;
        // Follow the server's changes while the session lasts.
        let inner = Arc::clone(&module.inner);
        let peer = module.session.peer().clone();
        tokio::spawn(async move {
            while changes.recv().await.is_some() {
                if let Err(error) = refresh(&inner, &peer).await {
                    tracing::warn!(target: "tool_registry::mcp", module = %inner.name, %error, "cannot list the MCP server's tools again");
                }
            }
        });
        Ok(module)
    }

    /// Lists the server's tools again and brings the registry in line: new ones registered,
    /// changed ones replaced, gone ones removed. Returns how many it has.
    pub async fn refresh(&self) -> Result<usize, McpModuleError> {
        refresh(&self.inner, self.session.peer()).await
    }

    /// The registry names of its tools.
    pub fn tools(&self) -> Vec<String> {
        self.inner
            .tools
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .keys()
            .cloned()
            .collect()
    }

    /// Removes its tools from the registry.
    pub fn remove_tools(&self) {
        let tools =
            std::mem::take(&mut *self.inner.tools.lock().unwrap_or_else(|p| p.into_inner()));
        for tool in tools.into_keys() {
            let _ = self.inner.registry.remove(&tool);
        }
    }
}

async fn refresh(
    inner: &Arc<Inner>,
    peer: &rmcp::Peer<RoleClient>,
) -> Result<usize, McpModuleError> {
    let listed = peer
        .list_all_tools()
        .await
        .map_err(|error| failed(&inner.name, error.to_string()))?;
    let mut registered = BTreeMap::new();
    let previous = inner
        .tools
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    for tool in listed {
        let local = format!("{}.{}", inner.name, tool.name);
        let Some((spec, wrapped)) = spec_of(&tool, &local) else {
            tracing::warn!(target: "tool_registry::mcp", module = %inner.name, tool = %tool.name, "a tool of the MCP server cannot be a tool here (its name or schema); it is left out");
            continue;
        };
        let unchanged = previous.get(&local) == Some(&wrapped)
            && inner
                .registry
                .registration(&local)
                .is_some_and(|registration| registration.tool.spec() == spec);
        if !unchanged {
            if previous.contains_key(&local) {
                let _ = inner.registry.remove(&local);
            }
            let handler = handler(
                peer.clone(),
                Mounted {
                    module: inner.name.clone(),
                    remote: tool.name.to_string(),
                    local: local.clone(),
                    wrapped,
                    limits: inner.registry.policy.content_limits,
                },
            );
            if let Err(error) = inner.registry.register(spec, handler) {
                tracing::warn!(target: "tool_registry::mcp", module = %inner.name, %error, "a tool of the MCP server cannot be registered; it is left out");
                continue;
            }
        }
        registered.insert(local, wrapped);
    }
    for gone in previous
        .keys()
        .filter(|name| !registered.contains_key(*name))
    {
        let _ = inner.registry.remove(gone);
    }
    let count = registered.len();
    *inner.tools.lock().unwrap_or_else(|p| p.into_inner()) = registered;
    Ok(count)
}

/// The spec of an MCP tool under the name `local` and whether its values come wrapped, or
/// `None` when it cannot be one. Its output schema is the tool's own (unwrapped), which the
/// registry checks every answer against.
fn spec_of(tool: &Tool, local: &str) -> Option<(ToolSpec, bool)> {
    let mut builder = ToolSpec::builder(local)
        .description(tool.description.as_deref().unwrap_or_default())
        .input_schema(Value::Object((*tool.input_schema).clone()))
        .timeout(MODULE_TIMEOUT);
    let mut wrapped = false;
    if let Some(output) = &tool.output_schema {
        let (schema, was_wrapped) = unwrap_output_schema(Value::Object((**output).clone()));
        wrapped = was_wrapped;
        builder = builder.output_schema(schema);
    }
    if let Some(hints) = &tool.annotations {
        builder = builder.annotations(Annotations {
            read_only: hints.read_only_hint,
            destructive: hints.destructive_hint,
            idempotent: hints.idempotent_hint,
            open_world: hints.open_world_hint,
            requires_confirmation: None,
        });
    }
    builder.build().ok().map(|spec| (spec, wrapped))
}

/// What the handler of one mounted tool knows of it.
#[derive(Clone)]
struct Mounted {
    module: String,
    /// Its name on the server.
    remote: String,
    /// Its name here.
    local: String,
    /// Whether the server wraps its values (see [`crate::format::mcp`]).
    wrapped: bool,
    /// The registry's bounds on blocks, checked before a block is decoded.
    limits: ContentLimits,
}

/// The handler of one mounted tool: `tools/call` on the session, every failure typed.
fn handler(peer: rmcp::Peer<RoleClient>, mounted: Mounted) -> ToolHandler {
    ToolHandler::from_results(move |arguments, _ctx| {
        let (peer, mounted) = (peer.clone(), mounted.clone());
        async move {
            let arguments = match arguments {
                Value::Object(map) => map,
                _ => serde_json::Map::new(),
            };
            let request =
                CallToolRequestParams::new(mounted.remote.clone()).with_arguments(arguments);
            let local = mounted.local.clone();
            match peer.call_tool(request).await {
                Ok(result) => answer(result, &mounted),
                // An answer too long to read, skipped by the transport.
                Err(ServiceError::McpError(error))
                    if error
                        .data
                        .as_ref()
                        .is_some_and(|d| d.get(TOO_LONG).is_some()) =>
                {
                    Err(ToolError::InvalidOutput {
                        tool: local,
                        path: String::new(),
                        message: error.message.to_string(),
                    })
                }
                Err(ServiceError::McpError(error)) if error.code == ErrorCode::INVALID_PARAMS => {
                    Err(ToolError::InvalidArguments {
                        tool: local,
                        path: String::new(),
                        message: error.message.to_string(),
                    })
                }
                Err(ServiceError::McpError(error)) => Err(ToolError::Handler {
                    tool: local,
                    message: error.message.to_string(),
                }),
                Err(ServiceError::Timeout { timeout }) => Err(ToolError::TimedOut {
                    tool: local,
                    after: timeout,
                }),
                Err(error) => Err(ToolError::ModuleUnreachable {
                    tool: local,
                    module: mounted.module,
                    reason: error.to_string(),
                }),
            }
        }
    })
}

/// An MCP result as a tool result, every block kept in order:
///
/// - with `structuredContent` (unwrapped when the tool's schema says the server wraps it), that
///   is the value, and a text block that only repeats it (as JSON, or as the string it is) is
///   left out; any other text is a text block;
/// - without, the text blocks joined are the value, read as JSON where they are JSON (no value
///   when there is no text), and the other blocks follow;
/// - `isError` is a handler error with the text.
///
/// A block that cannot be read (base64 that is not, a kind this version does not know, more
/// bytes than a block may hold) makes the answer `invalid_output`; the registry then checks the
/// blocks it reads (MIME types against bytes, link schemes, sizes) and the value against the
/// tool's output schema.
fn answer(result: CallToolResult, mounted: &Mounted) -> Result<ToolResult, ToolError> {
    if result.is_error == Some(true) {
        let text: Vec<&str> = (result.content.iter())
            .filter_map(|block| block.as_text().map(|text| text.text.as_str()))
            .collect();
        return Err(ToolError::Handler {
            tool: mounted.local.clone(),
            message: text.join("\n"),
        });
    }
    let structured = result
        .structured_content
        .map(|value| match mounted.wrapped {
            true => unwrap_structured(value),
            false => value,
        });
    let mut texts = Vec::new();
    let mut blocks = Vec::with_capacity(result.content.len());
    for block in result.content {
        let block = match (block, &structured) {
            (ContentBlock::Text(text), None) => {
                texts.push(text.text);
                continue;
            }
            (ContentBlock::Text(text), Some(value)) if repeats(&text.text, value) => continue,
            (other, _) => {
                block_of(other, &mounted.limits).map_err(|message| ToolError::InvalidOutput {
                    tool: mounted.local.clone(),
                    path: format!("blocks[{}]", blocks.len()),
                    message,
                })?
            }
        };
        blocks.push(block);
    }
    let content = match structured {
        Some(value) => value,
        None if texts.is_empty() => Value::Null,
        None => {
            let text = texts.join("\n");
            serde_json::from_str(&text).unwrap_or(Value::String(text))
        }
    };
    let mut result = ToolResult::ok(content);
    result.blocks = blocks.into();
    Ok(result)
}

/// Whether `text` only repeats `value`: the string it is, or its JSON. A value that is one
/// `result` member (the Python SDK's wrapper, which carries no marker) is repeated by its
/// member too.
fn repeats(text: &str, value: &Value) -> bool {
    let inner = match value {
        Value::Object(map) if map.len() == 1 => map.get("result"),
        _ => None,
    };
    let mut parsed = None;
    let mut is = |candidate: &Value| match candidate {
        Value::String(string) if string == text => true,
        _ => parsed
            .get_or_insert_with(|| serde_json::from_str::<Value>(text).ok())
            .as_ref()
            .is_some_and(|parsed| parsed == candidate),
    };
    is(value) || inner.is_some_and(is)
}

/// One non-text MCP content block as a block: an embedded binary resource under the
/// `attachment:` scheme is a [`File`] again; binary data is decoded only when its base64 can
/// hold no more than `limits` allow a block.
fn block_of(block: ContentBlock, limits: &ContentLimits) -> Result<Block, String> {
    Ok(match block {
        ContentBlock::Text(text) => Block::Text(text.text),
        ContentBlock::Image(image) => Block::Image(Image::new(
            image.mime_type,
            binary(BlockKind::Image, &image.data, limits)?,
        )),
        ContentBlock::Audio(audio) => Block::Audio(Audio::new(
            audio.mime_type,
            binary(BlockKind::Audio, &audio.data, limits)?,
        )),
        ContentBlock::ResourceLink(link) => Block::ResourceLink(ResourceLink {
            uri: link.uri,
            name: link.name,
            title: link.title,
            description: link.description,
            mime_type: link.mime_type,
            size: link.size,
        }),
        ContentBlock::Resource(embedded) => match embedded.resource {
            ResourceContents::TextResourceContents {
                uri,
                mime_type,
                text,
                ..
            } => Block::Resource(Resource {
                uri,
                mime_type,
                body: ResourceBody::Text(text),
            }),
            ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => {
                let data = binary(BlockKind::Resource, &blob, limits)?;
                match (file_name(&uri), mime_type) {
                    (Some(name), Some(mime_type)) => {
                        Block::File(File::new(name, data).with_mime_type(mime_type))
                    }
                    (Some(name), None) => Block::File(File::new(name, data)),
                    (None, mime_type) => Block::Resource(Resource {
                        uri,
                        mime_type,
                        body: ResourceBody::Blob(data),
                    }),
                }
            }
            _ => return Err("an embedded resource of a kind this version does not read".into()),
        },
        _ => return Err("a content block of a kind this version does not read".into()),
    })
}

/// Base64 text as bytes, refused before decoding when it holds more than a block may.
fn binary(kind: BlockKind, text: &str, limits: &ContentLimits) -> Result<bytes::Bytes, String> {
    // Four characters of base64 make three bytes, less up to two of padding.
    let at_least = (text.len() / 4 * 3).saturating_sub(2);
    if at_least > limits.max_block_bytes {
        return Err(format!(
            "the {kind} block holds at least {at_least} bytes, more than the limit of {} bytes a block",
            limits.max_block_bytes
        ));
    }
    wire::decode(text)
}

fn failed(module: &str, reason: String) -> McpModuleError {
    McpModuleError {
        module: module.to_owned(),
        reason,
    }
}

/// How to reach one MCP server of a module map: `[mcp.NAME]` with `command = ["prog", "arg"]`
/// (a stdio server) or `url = "http://host:port/mcp"` (streamable HTTP), and for a URL
/// optionally `token` or `token_env`.
///
/// ```toml
/// [mcp.files]
/// command = ["toolreg", "--modules", "file_manager", "mcp"]
///
/// [mcp.remote]
/// url = "http://127.0.0.1:8002/mcp"
/// token_env = "REMOTE_MCP_TOKEN"
/// ```
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpServerConfig {
    #[serde(default)]
    command: Option<Vec<String>>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    token: Option<String>,
    #[serde(default)]
    token_env: Option<String>,
}

#[derive(serde::Deserialize)]
struct McpTables {
    #[serde(default)]
    mcp: std::collections::BTreeMap<String, McpServerConfig>,
}

impl McpServerConfig {
    /// The `[mcp.NAME]` tables of a module map's TOML text (other tables are left to their
    /// readers).
    pub fn from_toml(text: &str) -> Result<std::collections::BTreeMap<String, Self>, String> {
        let tables: McpTables = toml::from_str(text).map_err(|error| {
            format!("the MCP servers of the module map are not valid: {error}; write `[mcp.NAME]` with `command = [\"prog\", \"arg\"]` or `url = \"http://host:port/mcp\"`")
        })?;
        for (name, config) in &tables.mcp {
            if config.command.is_some() == config.url.is_some() {
                return Err(format!(
                    "MCP server `{name}`: give exactly one of `command` and `url`"
                ));
            }
            if config.command.as_ref().is_some_and(Vec::is_empty) {
                return Err(format!("MCP server `{name}`: `command` names no program"));
            }
        }
        Ok(tables.mcp)
    }
}

impl McpModule {
    /// Mounts the server `config` describes as the module `name`.
    pub async fn mount_config(
        registry: impl Into<Shared>,
        name: &str,
        config: &McpServerConfig,
    ) -> Result<Self, McpModuleError> {
        match (&config.command, &config.url) {
            (Some(command), _) => {
                let mut process = tokio::process::Command::new(&command[0]);
                process.args(&command[1..]);
                Self::spawn(registry, name, process).await
            }
            (None, Some(url)) => {
                let token = config.token.clone().or_else(|| {
                    config
                        .token_env
                        .as_deref()
                        .and_then(|var| std::env::var(var).ok())
                });
                Self::connect(registry, name, url, token.as_deref()).await
            }
            (None, None) => Err(failed(name, "give `command` or `url`".to_owned())),
        }
    }
}

/// How long a mounted tool's call may take before it is `timed_out`: the HTTP modules' 30 s.
pub const MCP_MODULE_TIMEOUT: Duration = MODULE_TIMEOUT;

/// What one message from a server on stdio may hold beyond its blocks' base64: its text and
/// value, and the JSON around them. 4 MiB, what this registry's own server reads of a message.
pub const MCP_ANSWER_ROOM: usize = super::MAX_LINE_BYTES;

/// The longest line read from a server on stdio: the most a result's blocks may hold, in
/// base64, and [`MCP_ANSWER_ROOM`].
fn answer_bound(limits: &ContentLimits) -> usize {
    (limits.max_result_bytes.div_ceil(3))
        .saturating_mul(4)
        .saturating_add(MCP_ANSWER_ROOM)
}

#[cfg(test)]
mod tests {
    use rmcp::model::{ContentBlock, ResourceContents};
    use serde_json::json;

    use super::*;

    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

    fn mounted(wrapped: bool) -> Mounted {
        Mounted {
            module: "m".into(),
            remote: "t".into(),
            local: "m.t".into(),
            wrapped,
            limits: ContentLimits::new(64, 1024),
        }
    }

    fn result(content: Vec<ContentBlock>, structured: Option<Value>) -> CallToolResult {
        let mut result = CallToolResult::success(content);
        result.structured_content = structured;
        result
    }

    fn image() -> ContentBlock {
        ContentBlock::image(wire::encode(PNG), "image/png")
    }

    fn kinds(result: &ToolResult) -> Vec<BlockKind> {
        result.blocks.iter().map(Block::kind).collect()
    }

    #[test]
    fn structured_content_is_the_value_and_its_repeats_are_left_out() {
        let link = rmcp::model::Resource::new("https://e.com/a", "a").with_size(3);
        let answer = result(
            vec![
                ContentBlock::text("[1, 2]"),
                image(),
                ContentBlock::text("a caption"),
                ContentBlock::resource_link(link),
            ],
            Some(json!({"result": [1, 2]})),
        );
        let read = super::answer(answer, &mounted(true)).unwrap();
        assert_eq!(read.content, json!([1, 2]));
        assert_eq!(
            kinds(&read),
            [BlockKind::Image, BlockKind::Text, BlockKind::ResourceLink]
        );
        assert_eq!(read.blocks[0], Block::from(Image::png(PNG)));
        assert_eq!(
            read.blocks[2],
            Block::from(ResourceLink::new("https://e.com/a", "a").with_size(3))
        );

        // Unmarked, the wrapper stays; a text of its one `result` member is still a repeat, and
        // so is a string value's own text.
        let theirs = result(vec![ContentBlock::text("3")], Some(json!({"result": 3})));
        let read = super::answer(theirs, &mounted(false)).unwrap();
        assert_eq!(read.content, json!({"result": 3}));
        assert!(read.blocks.is_empty());
        let string = result(
            vec![ContentBlock::text("hi")],
            Some(json!({"result": "hi"})),
        );
        let read = super::answer(string, &mounted(true)).unwrap();
        assert_eq!(read.content, json!("hi"));
        assert!(read.blocks.is_empty());
    }

    #[test]
    fn without_structured_content_the_text_is_the_value_and_the_rest_follows() {
        let answer = result(
            vec![
                ContentBlock::text("{\"n\":"),
                image(),
                ContentBlock::text("1}"),
            ],
            None,
        );
        let read = super::answer(answer, &mounted(false)).unwrap();
        assert_eq!(read.content, json!({"n": 1}));
        assert_eq!(kinds(&read), [BlockKind::Image]);
        let only_image = super::answer(result(vec![image()], None), &mounted(false)).unwrap();
        assert_eq!(only_image.content, Value::Null);
        let plain = super::answer(
            result(vec![ContentBlock::text("hi")], None),
            &mounted(false),
        );
        assert_eq!(plain.unwrap().content, json!("hi"));
    }

    #[test]
    fn an_attachment_is_a_file_again_and_other_resources_stay_resources() {
        let file = ContentBlock::resource(
            ResourceContents::blob(wire::encode(b"a,b\n"), "attachment:q3%20data.csv")
                .with_mime_type("text/csv"),
        );
        let blob = ContentBlock::resource(
            ResourceContents::blob(wire::encode(PNG), "kb://p").with_mime_type("image/png"),
        );
        let text = ContentBlock::embedded_text("kb://t", "body");
        let read = super::answer(result(vec![file, blob, text], None), &mounted(false)).unwrap();
        assert_eq!(
            read.blocks,
            [
                Block::from(File::new("q3 data.csv", b"a,b\n".to_vec())),
                Block::from(Resource::blob("kb://p", "image/png", PNG)),
                Block::from(Resource::text("kb://t", "body")),
            ]
        );
    }

    #[test]
    fn unreadable_blocks_are_invalid_output_naming_the_block() {
        let refused = |content: Vec<ContentBlock>| match super::answer(
            result(content, None),
            &mounted(false),
        ) {
            Err(ToolError::InvalidOutput {
                tool,
                path,
                message,
            }) => {
                assert_eq!(tool, "m.t");
                format!("{path}: {message}")
            }
            other => panic!("{other:?}"),
        };
        let bad = ContentBlock::image("not base64!", "image/png");
        let message = refused(vec![ContentBlock::text("x"), image(), bad]);
        assert!(
            message.starts_with("blocks[1]: invalid base64"),
            "{message}"
        );
        let big = ContentBlock::image(wire::encode(&[0; 100]), "image/png");
        let message = refused(vec![big]);
        assert!(
            message.contains("image block holds at least 100 bytes, more than the limit of 64"),
            "{message}"
        );
        let failed = CallToolResult::error(vec![ContentBlock::text("no"), image()]);
        match super::answer(failed, &mounted(false)) {
            Err(ToolError::Handler { message, .. }) => assert_eq!(message, "no"),
            other => panic!("{other:?}"),
        }
    }
}
