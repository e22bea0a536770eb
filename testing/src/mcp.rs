//! [`McpClient`]: an MCP client in the same process as the server it tests, over an in-memory
//! pipe: the whole protocol (rmcp's client), no port, no child process.

use std::ops::Deref;

use rmcp::ClientHandler;
use rmcp::model::{CallToolRequestParams, CallToolResult, ProtocolVersion};
use rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, RoleClient, RunningService, ServiceError,
};
use serde_json::Value;
use tokio::task::JoinHandle;
use tool_registry_mcp::McpServer;

/// The bytes the pipe between client and server holds in flight each way.
const PIPE_BYTES: usize = 1 << 20;

/// Which revision of MCP the client speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Revision {
    /// 2026-07-28: `server/discover`, each request standing alone.
    #[default]
    Current,
    /// 2025-11-25: the `initialize` handshake and a session.
    Sessions,
}

/// An MCP client connected to an [`McpServer`] in the same process: what a client written by
/// others sees of a server built from a registry (its tools as `tools/list` lists them, calls
/// through every gate, resources, prompts, completion), in a unit test.
///
/// It derefs to rmcp's client ([`Peer<RoleClient>`](rmcp::service::Peer)), so every request of
/// the protocol is at hand (`list_all_tools`, `call_tool`, `read_resource`, `get_prompt`,
/// `complete`...); [`call`](Self::call) and [`tool_names`](Self::tool_names) are the short
/// forms. A client with its own handler (one that answers a tool's questions) is made with
/// [`connect_with`](Self::connect_with).
///
/// ```
/// use std::sync::Arc;
/// use tool_registry::{Registry, Scope, tool};
/// use tool_registry::mcp::McpServer;
/// use tool_registry::testing::McpClient;
///
/// /// Add two numbers.
/// #[tool]
/// fn add(a: i64, b: i64) -> i64 { a + b }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let registry = Arc::new(Registry::builder().build()?);
/// let client = McpClient::connect(McpServer::new(registry, Scope::trusted())).await?;
/// assert!(client.tool_names().await?.contains(&"add".to_owned()));
/// let result = client.call("add", serde_json::json!({"a": 2, "b": 3})).await?;
/// assert_eq!(result.structured_content, Some(serde_json::json!({"result": 5})));
/// client.close().await?;
/// # Ok(())
/// # }
/// ```
pub struct McpClient<H: ClientHandler = ()> {
    session: RunningService<RoleClient, H>,
    server: JoinHandle<std::io::Result<()>>,
}

impl McpClient<()> {
    /// Connects a client without a handler of its own to `server`, on the current revision.
    pub async fn connect(server: McpServer) -> Result<Self, McpClientError> {
        Self::connect_with(server, (), Revision::Current).await
    }
}

impl<H: ClientHandler> McpClient<H> {
    /// Connects a client whose `handler` answers what the server asks (elicitation, sampling,
    /// roots, notifications) to `server`, on `revision`.
    pub async fn connect_with(
        server: McpServer,
        handler: H,
        revision: Revision,
    ) -> Result<Self, McpClientError> {
        let (client_end, server_end) = tokio::io::duplex(PIPE_BYTES);
        let (server_read, server_write) = tokio::io::split(server_end);
        let server = tokio::spawn(server.serve_io(server_read, server_write));
        let lifecycle = match revision {
            Revision::Current => ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
            Revision::Sessions => ClientLifecycleMode::Initialize,
        };
        let session = handler
            .serve_with_lifecycle(tokio::io::split(client_end), lifecycle)
            .await
            .map_err(|error| McpClientError(error.to_string()))?;
        Ok(Self { session, server })
    }

    /// The names of the tools the server lists, every page read.
    pub async fn tool_names(&self) -> Result<Vec<String>, ServiceError> {
        let tools = self.session.list_all_tools().await?;
        Ok(tools
            .into_iter()
            .map(|tool| tool.name.into_owned())
            .collect())
    }

    /// Calls `name` with `arguments` (a JSON object, or `null` for none): the result as the
    /// server answers it, a tool's failure included (`is_error`); a protocol error (an unknown
    /// tool, arguments not an object) is `Err`.
    pub async fn call(&self, name: &str, arguments: Value) -> Result<CallToolResult, ServiceError> {
        let mut params = CallToolRequestParams::new(name.to_owned());
        if let Value::Object(arguments) = arguments {
            params = params.with_arguments(arguments);
        }
        self.session.call_tool(params).await
    }

    /// Ends the session and waits for the server to stop: `Err` if it stopped with an error.
    pub async fn close(self) -> Result<(), McpClientError> {
        let Self { session, server } = self;
        session
            .cancel()
            .await
            .map_err(|error| McpClientError(error.to_string()))?;
        match server.await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(error)) => Err(McpClientError(format!(
                "the server ended with an error: {error}"
            ))),
            Err(error) => Err(McpClientError(format!("the server's task ended: {error}"))),
        }
    }
}

impl<H: ClientHandler> Deref for McpClient<H> {
    type Target = RunningService<RoleClient, H>;

    fn deref(&self) -> &Self::Target {
        &self.session
    }
}

impl<H: ClientHandler> std::fmt::Debug for McpClient<H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpClient").finish_non_exhaustive()
    }
}

/// Why the in-process client could not connect or close.
#[derive(Debug, thiserror::Error)]
#[error("in-process MCP client: {0}")]
pub struct McpClientError(String);
