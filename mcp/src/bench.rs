//! Baselines for the MCP benchmark: the steps of an answer with nothing around them.
//!
//! **Unstable, not part of the public API.** Compiled only with the `bench-internals` feature,
//! which the benchmarks turn on; it may change or go away in any release.

use tool_registry_core::{Registry, ToolResult};

/// The line `toolreg mcp` writes on standard output for `result`, the answer of the tool `name`
/// to the request `id`: the same steps as the MCP server's `tools/call` and its stdio
/// transport (the result message, rmcp's `CallToolResult`, the JSON-RPC response as a line).
pub fn mcp_stdio_answer(
    registry: &Registry,
    name: &str,
    result: &ToolResult,
    id: i64,
) -> std::io::Result<Vec<u8>> {
    use rmcp::model::{NumberOrString, ServerJsonRpcMessage, ServerResult};
    let answer = crate::call_tool_result(registry, name, result)
        .map_err(|error| std::io::Error::other(error.message.to_string()))?;
    let message = ServerJsonRpcMessage::response(
        ServerResult::CallToolResult(answer),
        NumberOrString::Number(id),
    );
    crate::server_line(message)
}

/// Serves `server` on `input` and `output` as `toolreg mcp` serves standard input and output
/// (its own bounded transport, not rmcp's), until the client closes the stream.
pub async fn mcp_serve_lines<R, W>(
    server: crate::McpServer,
    input: R,
    output: W,
) -> std::io::Result<()>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
    W: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    server.serve_io(input, output).await
}
