//! The registry over the Model Context Protocol (feature `mcp`), with the official Rust SDK
//! (`rmcp`) for the protocol and its transports; the tools, their schemas and every gate come
//! from the registry.
//!
//! The files are listed from the bottom layer up: each imports only files listed before it, so no
//! circle runs between them.
//!
//! | file | what |
//! | --- | --- |
//! | `confirm.rs` | confirmation: the `input_required` question and its answer, the approval token in `_meta` ([`APPROVAL_TOKEN_META`]) |
//! | `line.rs` | a message as the line that carries it: a block's base64 copied into its place once, never doubled or scanned by serde_json (imports none of the others) |
//! | `peek.rs` | what an answer says of itself before it is read: its id from its first bytes, the blocks of its `result.content` counted without building them, and the errors (marked in their `data`) that stand for an answer too long, of too many blocks, or unreadable (imports none of the others) |
//! | `stdio.rs` | standard input and output: lines read with a bound ([`MAX_LINE_BYTES`]), a JSON-RPC error for every line that cannot be served (too long, not JSON, too deep, a batch, not a message), one writer for every line; the JSON-RPC error answer the HTTP side writes too; the same bounded reading of a mounted server's output, where an answer too long, of more blocks than the registry reads (counted as the line arrives, before rmcp builds them) or that does not read is an error for its request (`Side`) (imports `line.rs`, `peek.rs`) |
//! | `sse.rs` | an SSE answer of a server mounted over streamable HTTP cut into events within a bound in bytes, an event of more blocks than the registry reads replaced by the error for its request; room for a large buffer that is given back once freed (imports `peek.rs`) |
//! | `http_client.rs` | the HTTP under rmcp's client of a server mounted over streamable HTTP: each JSON answer read as bytes within rmcp's bound, each SSE event (a POST's or a `GET` stream's) cut out within its own, and their `result.content` counted by `peek.rs`'s scan before rmcp builds a block; an answer over the bound on blocks (or, in JSON, on bytes) is the error for its request, marked as on stdio; the rest of a request as rmcp's `reqwest` client does it (imports `peek.rs`, `sse.rs`) |
//! | `relay.rs` | a mounted server's questions (`input_required`, 2026-07-28) put to the caller of its tool: [`Ctx::ask`](tool_registry_core::Ctx::ask), [`Ctx::sample`](tool_registry_core::Ctx::sample), [`Ctx::roots`](tool_registry_core::Ctx::roots) (imports none of the others) |
//! | `request.rs` | what a handler reads of the request it answers (its id, `_meta`, revision, capabilities, the client when the call may write to it), from rmcp's context or from `stateless.rs`; a `tools/call`'s parameters with its arguments as an object or as the text the body held (imports none of the others) |
//! | `resume.rs` | streams a call released (`Ctx::release_stream`, SEP-1699): read on by the server, their events held for the client's reconnect with `Last-Event-ID` in the same session only (imports none of the others) |
//! | `sessions.rs` | [`SessionLimits`]: rmcp's sessions, each bound to the caller that opened it, bounded for the server, each token and guests together; every request stream releasable, a resumption read from `resume.rs` first |
//! | `answer.rs` | a registry result as rmcp's `CallToolResult` (`call_tool_result`), and a mounted server's answer as a `ToolResult`: its number of blocks and the text of its value bounded before either is read, every block in order within the content limits, the value unwrapped, repeated text left out, a failure's text bounded before it is joined (imports none of the others) |
//! | `tasks.rs` | the tasks extension (2026-07-28): when a `tools/call` becomes a task, a task as `tasks/get` answers it, a person's answer from `tasks/update`, `tasks/cancel`, the extension's errors |
//! | `rounds.rs` | questions on the 2026-07-28 revision (SEP-2322): a call's `Ctx::ask`, `Ctx::sample` and `Ctx::roots` answered from the request or raised as an `input_required` result, the answers of earlier rounds carried in a sealed, bound, expiring `requestState` ([`STATE_TTL`]) (imports none of the others) |
//! | `link.rs` | a call's client link: `Ctx::log` (`notifications/message` at or above the session's `logging/setLevel`), `Ctx::progress`, in order and written before the answer, never waiting; `Ctx::ask` (`elicitation/create`) and `Ctx::sample` (`sampling/createMessage`) on the call's own stream (imports `peek.rs` for its too-long marker) |
//! | `offers.rs` | resources, resource templates, prompts and completion as rmcp's results, for one caller; a session's resource subscriptions, bounded ([`MAX_SUBSCRIPTIONS`]) |
//! | `pages.rs` | the registry's tool lists as rmcp's tools, converted once and shared, with which carry `x-mcp-header` annotations; `tools/list` pages and their cursors (imports none of the others) |
//! | `watch.rs` | following the registry for one caller: which changes concern it, told to a session of the `initialize` era and to a `subscriptions/listen` stream (imports `offers.rs`) |
//! | `server.rs` | [`McpServer`]: rmcp's server handler, answering from the registry for one caller's [`Scope`](tool_registry_core::Scope), the one the HTTP bearer check found or its own; [`serve_stdio`] |
//! | `tasks_2025.rs` | the 2025-11-25 revision's tasks over HTTP, which rmcp no longer speaks: a `tools/call` with `params.task` and `tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel` answered from the registry's tasks; `capabilities.tasks` and `execution.taskSupport` added to rmcp's answers |
//! | `callers.rs` | [`Callers`]: bearer tokens to scopes (no token is a guest, an unknown one `401`), from code or a TOML file; with an `[oauth]` table, access tokens checked by a `ResourceServer` (feature `oauth`) and the challenge that leads a client to its authorization server |
//! | `layers.rs` | the layers in front of rmcp's HTTP service, one job each: who the request is (`authenticate`), the bounds on sessions, a body longer than rmcp reads (and the question its answer was for), the 2025-11-25 revision's tasks, a task's name from the body; one body read within rmcp's bound |
//! | `stateless.rs` | the stateless revision (2026-07-28) answered without rmcp: a `tools/call` or `tools/list` POST whose every check plainly passes and that asks for no stream, read, run and answered as one JSON body (a list page written once), its arguments handed on as the body's text; every other request passed on to rmcp's service untouched |
//! | `quiet.rs` | a session's `tools/call` (the `initialize` era) of a tool that cannot write to its client (`Registry::may_write_to_client`), in the caller's own session, answered without rmcp as one JSON body, the session kept from its idle expiry; every other request passed on untouched |
//! | `http.rs` | streamable HTTP at `/mcp`: the layers stacked in front of rmcp's service, [`router`], [`serve_http`] (loopback only, browser origins of its own address only); a resource server's protected resource metadata at its well-known paths |
//! | `mounted.rs` | a mounted server's resources, templates and prompts registered under its module's prefix, read and got through it (imports none of the others) |
//! | `client.rs` | [`McpModule`]: an MCP server (a stdio command or a streamable HTTP URL, protected or not) mounted as a module, its tools run-time tools `module.tool` behind the registry's gates (its resources and prompts through `mounted.rs`), its `list_changed` followed, every block of its answers kept; a server on stdio read through `stdio.rs`'s bounded lines, one over streamable HTTP through `http_client.rs`, a new token asked for through the `Reauthorize` that `oauth.rs` gives it; its questions put to the tool's caller through `relay.rs` |
//! | `oauth/` | `oauth` (feature `oauth`; its files listed in `oauth/mod.rs`): the client side of MCP's authorization (OAuth 2.1): an `OAuth` grant (client credentials by secret or `private_key_jwt`, an authorization code with PKCE through a `Browser`), the `TokenFile` a module's tokens are kept in, the authorizer that asks for a token after a `401` or a `403 insufficient_scope`, and `McpModule::connect_oauth` (imports `http_client.rs`, `client.rs`) |
//! | `config.rs` | [`McpServerConfig`]: a module map's `[mcp.NAME]` tables (a command, or a URL with a token or an `oauth` table), read from TOML and mounted (imports `client.rs`, `oauth.rs`) |
//! | `bench.rs` | the steps of an answer alone, for the MCP benchmark (feature `bench-internals`, not API) |
//!
//! ```no_run
//! # async fn run() -> std::io::Result<()> {
//! // One line in `main`: every linked tool, over stdio, as the trusted application.
//! tool_registry::mcp::serve_stdio(tool_registry::Registry::global(), tool_registry::Scope::trusted()).await
//! # }
//! ```
//!
//! - `tools/list`: the tools the caller's scope may see, in MCP's shape (`name`, `title`,
//!   `description`, `inputSchema`, `outputSchema` when known, annotations as hints), sorted by
//!   name, [`PAGE_SIZE`] to a page with an opaque cursor, cached privately by the client.
//! - `tools/call`: through the whole pipeline. A tool that does not exist and one outside the
//!   scope are the same JSON-RPC error -32602 (`Unknown tool: NAME`); bad arguments, a tool's
//!   failure and a rate limit (with when to retry) are results with `isError: true` and the
//!   message a model reads. The answer's `content` is the value as text, then every block of
//!   the result in MCP's shapes (images and audio as base64, resource links, embedded
//!   resources; a file as an embedded resource under the URI `attachment:NAME`, see
//!   [`FILE_SCHEME`]); a tool with an output schema answers `structuredContent` too, as
//!   `{"result": value}` under a wrapped `outputSchema` ([`WRAPPED_KEY`]) when its schema is not
//!   an object schema. A mounted MCP server's answers are read back the same way, into the same
//!   blocks. A progress token turns the tool's
//!   [`Ctx::progress`](tool_registry_core::Ctx::progress) into progress notifications; a cancellation drops
//!   the call, which stops an async tool.
//! - Confirmation: a call of a tool that needs a person's approval waits under a token bound to
//!   its tool, its user and its exact arguments. A 2026-07-28 client that declared form
//!   elicitation gets an `input_required` result asking its user about that exact call
//!   ([`CONFIRM_INPUT`], one boolean `approve`), with the token as `requestState`; the retried
//!   request with an accepted answer runs the call once, on the same tool, user and arguments
//!   only (an answer moved to other arguments is refused and uses nothing up), and a declined
//!   one drops it. Any other client gets an `isError` result naming the approval token, and
//!   runs the call by sending it again with the token in `_meta` under [`APPROVAL_TOKEN_META`]
//!   (or a person runs `toolreg approve TOKEN`).
//! - Tasks: a tool declared `task = "optional"` (a task once it runs past
//!   [`TaskLimits::after`](tool_registry_core::task::TaskLimits::after)) or `"required"` answers a client
//!   that follows tasks with a task handle ([`McpServer::tasks`] says where they are kept): the
//!   2026-07-28 extension (`tasks/get` with progress and the result, `tasks/update` answering
//!   the call's confirmation and the questions it asks while it runs, one at a time or all at
//!   once, `tasks/cancel` dropping the call) over stdio and HTTP; on that revision a call first
//!   runs within its request, so that a question marked
//!   [`Form::in_request`](tool_registry_core::call::Form::in_request) comes back as the
//!   request's `input_required` answer, and it becomes a task when it asks anything else or
//!   runs past `after` (a `"required"` one is a task even when it ends first). And the
//!   2025-11-25 revision's tasks over HTTP (`params.task`, `tasks/get`, `tasks/result`,
//!   `tasks/list`, `tasks/cancel`). A caller reads only its own tasks; another's is the same
//!   `-32602` as an unknown id. A guest's are its session's, or, without a session, reached
//!   by their ids alone, and count against its address's share of the guests' bounds
//!   ([`TaskOwner::guest`](tool_registry_core::task::TaskOwner::guest)). [`McpModule`] follows a task a
//!   mounted server answers with.
//! - Logging: a tool's [`Ctx::log`](tool_registry_core::Ctx::log) reaches the client as
//!   `notifications/message`, from the level the session's `logging/setLevel` asked (`info`
//!   until then), or on the stateless revision the level the request's `_meta` names (none
//!   without one), in order, never waiting; a call's progress and log messages are written
//!   before its answer.
//! - Header checks (SEP-2243): a tool whose input schema carries `x-mcp-header` annotations has
//!   its call's `Mcp-Param-*` headers checked against its arguments by rmcp.
//! - Questions, sampling and roots, written once with
//!   [`Ctx::ask`](tool_registry_core::Ctx::ask), [`Ctx::sample`](tool_registry_core::Ctx::sample)
//!   and [`Ctx::roots`](tool_registry_core::Ctx::roots): for a client of the `initialize` era,
//!   `elicitation/create`, `sampling/createMessage` and `roots/list` on the stream of the request
//!   that made the call; for a 2026-07-28 client (SEP-2322), an `input_required` result naming
//!   each question ([`Form::named`](tool_registry_core::call::Form::named), `q1`, `q2`, ... by
//!   default), the call running again with the answers when the client sends them, over as many
//!   rounds as the tool asks, the answers of earlier rounds carried in a `requestState` sealed
//!   with a key derived from the registry's approval key (so any instance of a fleet sharing
//!   it answers the next round), bound to the caller, the method, its target and arguments,
//!   expiring after [`STATE_TTL`] and redeemed once (a changed, replayed, expired or another
//!   caller's state is the same `-32602`; each round runs the call again through the whole
//!   pipeline, so its rate limit and its audit count every round, and a call that needs a
//!   person's approval and then asks is refused with a typed error, since one approval is
//!   taken by one run); for a call that became a task, the task's
//!   `input_required` status, answered with `tasks/update`. A question the client did not
//!   declare the capability for is [`AskError::Unsupported`](tool_registry_core::call::AskError::Unsupported)
//!   at once, and a call that fails for it on 2026-07-28 is the missing-capability error
//!   (`-32021`). An answer is checked against the form and bounded in size.
//! - Resources, resource templates and prompts ([`offer`](tool_registry_core::offer):
//!   `#[resource]`, `#[prompt]`, or registered at run time): `resources/list`,
//!   `resources/templates/list`, `resources/read`, `prompts/list`, `prompts/get` and
//!   `completion/complete`, each for what the caller's scope sees (a hidden one is answered as an
//!   unknown one, byte for byte), sorted, with caching hints on the stateless revision;
//!   `resources/subscribe` (2025-11-25, at most [`MAX_SUBSCRIPTIONS`] a session) and
//!   `subscriptions/listen` (2026-07-28) with `notifications/resources/updated`
//!   ([`Registry::resource_updated`](tool_registry_core::Registry::resource_updated)) and the
//!   list-changed notifications. A read and a prompt may ask questions as a tool does.
//! - Resumable streams (SEP-1699, HTTP sessions): every request stream's events have ids and
//!   the stream opens with `retry`; a call's [`Ctx::release_stream`](tool_registry_core::Ctx::release_stream)
//!   ends its stream, and the client's `GET` with `Last-Event-ID` in the same session reads
//!   the rest. An id that names no stream of that session is `400` with a JSON-RPC error.
//! - `notifications/tools/list_changed` when a tool the caller sees is registered, removed,
//!   replaced or switched, and only then; `notifications/prompts/list_changed` and
//!   `notifications/resources/list_changed` when one is registered or removed.
//!
//! - Sessions (the `initialize` era over HTTP): each bound to the credentials that opened it
//!   (another caller that sends its id is answered as for an unknown id), bounded for the
//!   server, for each token and for guests together ([`SessionLimits`]; past a bound,
//!   `initialize` answers the JSON-RPC error [`TOO_MANY_SESSIONS`]), ended after an idle
//!   expiry, and taking every task they started with them when they end.
//!
//! Both protocol eras are served: the `initialize` handshake (2025-11-25 and before) and the
//! stateless 2026-07-28 revision (`server/discover`, per-request `_meta`), which rmcp speaks;
//! over HTTP, a stateless `tools/call` or `tools/list` that writes nothing before its answer is
//! read and answered by this crate itself, as one JSON body (`stateless.rs`).

#![warn(missing_docs)]

mod answer;
mod callers;
mod client;
mod config;
mod confirm;
mod http;
mod http_client;
mod layers;
mod line;
mod link;
mod mounted;
#[cfg(feature = "oauth")]
pub mod oauth;
mod offers;
mod pages;
mod peek;
mod quiet;
mod relay;
mod request;
mod resume;
mod rounds;
mod server;
mod sessions;
mod sse;
mod stateless;
mod stdio;
mod tasks;
mod tasks_2025;
mod watch;

pub use callers::Callers;
pub use client::{MCP_ANSWER_ROOM, MCP_MODULE_TIMEOUT, McpModule, McpModuleError};
#[cfg(feature = "oauth")]
pub use config::McpOAuthConfig;
pub use config::McpServerConfig;
pub use confirm::{APPROVAL_TOKEN_META, CONFIRM_INPUT, MAX_QUESTION_BYTES};
pub use http::{router, serve_http};
pub use layers::TOO_MANY_SESSIONS;
pub use offers::MAX_SUBSCRIPTIONS;
pub use rounds::{MAX_STATE_BYTES, STATE_TTL};
pub use server::{McpServer, PAGE_SIZE, serve_stdio};
pub use sessions::SessionLimits;
pub use stdio::MAX_LINE_BYTES;
pub use tool_registry_core::format::mcp::{FILE_SCHEME, WRAPPED_KEY};
#[cfg(feature = "bench-internals")]
pub mod bench;
#[cfg(feature = "bench-internals")]
use {answer::call_tool_result, line::server_line};
