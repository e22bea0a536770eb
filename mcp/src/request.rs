//! What a handler reads of the request it answers ([`Request`]), whichever transport read it:
//! rmcp's service (a session's request, or a stateless one rmcp served) or the stateless
//! transport of `stateless.rs`, which answers a 2026-07-28 request itself (imports none of the
//! others).

use rmcp::model::{ClientCapabilities, Extensions, ProtocolVersion, RequestId, RequestMetaObject};
use rmcp::service::RequestContext;
use rmcp::{Peer, RoleServer};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// The request a handler answers: its id, its `_meta`, the revision and the capabilities it
/// speaks with, and where the call may write to its client before the answer.
pub(super) struct Request {
    /// The JSON-RPC id.
    pub(super) id: RequestId,
    /// The request's own `_meta`.
    pub(super) meta: RequestMetaObject,
    /// The revision the request names in its `_meta`, or else its session's.
    pub(super) version: Option<ProtocolVersion>,
    /// The client's capabilities, as the request declares them (the session's for a request
    /// of the `initialize` era that declares none).
    pub(super) capabilities: Option<ClientCapabilities>,
    /// The client, where the call may send it notifications and requests: rmcp's peer for
    /// what rmcp serves; `None` for what the stateless transport answers itself, which takes
    /// only requests that let nothing be written before their answer.
    pub(super) peer: Option<Peer<RoleServer>>,
    /// The HTTP request's parts (rmcp puts them here), for a session's resumable streams.
    pub(super) extensions: Extensions,
    /// Cancelled when the client cancels the request.
    pub(super) cancelled: CancellationToken,
}

impl Request {
    /// The request rmcp's `context` describes.
    pub(super) fn of(context: RequestContext<RoleServer>) -> Self {
        Self {
            version: context.protocol_version(),
            capabilities: context.client_capabilities(),
            id: context.id,
            meta: context.meta,
            peer: Some(context.peer),
            extensions: context.extensions,
            cancelled: context.ct,
        }
    }

    /// Whether this is a request of the stateless revision (2026-07-28), which a server asks
    /// through `input_required` results. Every request of that revision names it in its
    /// `_meta` (a transport refuses one that does not), and no request of a session does: one
    /// lookup in the request's own `_meta`, never the session's.
    pub(super) fn stateless(&self) -> bool {
        self.meta
            .get("io.modelcontextprotocol/protocolVersion")
            .and_then(Value::as_str)
            .is_some_and(|version| version >= "2026-07-28")
    }

    /// Whether the request speaks a revision without `initialize` (2026-07-28 and later).
    pub(super) fn modern(&self) -> bool {
        (self.version.as_ref()).is_some_and(|version| !version.has_initialize())
    }
}
