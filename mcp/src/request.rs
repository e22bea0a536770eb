//! What a handler reads of the request it answers ([`Request`]), whichever transport read it:
//! rmcp's service (a session's request, or a stateless one rmcp served) or the stateless
//! transport of `stateless.rs`, which answers a 2026-07-28 request itself (imports none of the
//! others).

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, Extensions, InputResponses, JsonObject,
    ProtocolVersion, RequestId, RequestMetaObject,
};
use rmcp::service::RequestContext;
use rmcp::{Peer, RoleServer};
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use tool_registry_core::ToolArgs;

/// The request a handler answers: its id, its `_meta`, where the call may write to its client
/// before the answer, and (read when asked) the revision and capabilities it speaks with.
pub(super) struct Request {
    /// The JSON-RPC id.
    pub(super) id: RequestId,
    /// The request's own `_meta`.
    pub(super) meta: RequestMetaObject,
    /// The client, where the call may send it notifications and requests: rmcp's peer for
    /// what rmcp serves; `None` for what this crate's transport answers itself, which takes
    /// only requests that let nothing be written before their answer.
    pub(super) peer: Option<Peer<RoleServer>>,
    /// The HTTP request's parts (rmcp puts them here), for a session's resumable streams.
    pub(super) extensions: Extensions,
    /// Cancelled when the client cancels the request.
    pub(super) cancelled: CancellationToken,
    /// The revision the transport read in the request's header, for a request of a session
    /// it answers without rmcp's peer.
    pub(super) revision: Option<ProtocolVersion>,
}

impl Request {
    /// The request rmcp's `context` describes.
    pub(super) fn of(context: RequestContext<RoleServer>) -> Self {
        Self {
            id: context.id,
            meta: context.meta,
            peer: Some(context.peer),
            extensions: context.extensions,
            cancelled: context.ct,
            revision: None,
        }
    }

    /// A request this crate's transport answers itself: nothing can be written before its
    /// answer, and no client cancels it (a closed connection drops its future).
    pub(super) fn answered_here(
        id: RequestId,
        meta: RequestMetaObject,
        revision: Option<ProtocolVersion>,
    ) -> Self {
        Self {
            id,
            meta,
            peer: None,
            extensions: Extensions::new(),
            cancelled: CancellationToken::new(),
            revision,
        }
    }

    /// The revision the request names in its `_meta`, or else its session's. Read when asked:
    /// most calls never ask.
    pub(super) fn version(&self) -> Option<ProtocolVersion> {
        (self.meta.protocol_version())
            .or_else(|| self.revision.clone())
            .or_else(|| Some(self.peer.as_ref()?.peer_info()?.protocol_version.clone()))
    }

    /// The client's capabilities, as the request declares them (a request of the stateless
    /// revision always does), or else as its session's `initialize` did.
    pub(super) fn capabilities(&self) -> Option<ClientCapabilities> {
        (self.meta.client_capabilities())
            .or_else(|| Some(self.peer.as_ref()?.peer_info()?.capabilities.clone()))
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
        self.version()
            .is_some_and(|version| !version.has_initialize())
    }
}

/// A `tools/call`'s parameters, whichever transport read them.
pub(super) struct CallParams<'a> {
    /// The tool's name.
    pub(super) name: std::borrow::Cow<'a, str>,
    /// Its arguments.
    pub(super) arguments: Arguments<'a>,
    /// The `requestState` of an earlier answer.
    pub(super) request_state: Option<String>,
    /// The answers to the questions of an earlier answer.
    pub(super) input_responses: Option<InputResponses>,
}

impl From<CallToolRequestParams> for CallParams<'static> {
    fn from(params: CallToolRequestParams) -> Self {
        Self {
            name: params.name,
            arguments: Arguments::Object(params.arguments.unwrap_or_default()),
            request_state: params.request_state,
            input_responses: params.input_responses,
        }
    }
}

/// A call's arguments: an object rmcp read, or the text of the object as the request held it,
/// handed to the tool's shim as it is.
pub(super) enum Arguments<'a> {
    /// An object already read.
    Object(JsonObject),
    /// The text of a JSON object (a borrowed slice of the request's body).
    Text(&'a str),
}

impl<'a> Arguments<'a> {
    /// A request's `arguments` as the transport found them, left as their text: an object, or
    /// nothing (`{}`); `None` for anything else, which rmcp refuses.
    pub(super) fn of_raw(raw: Option<&'a serde_json::value::RawValue>) -> Option<Self> {
        match raw.map(serde_json::value::RawValue::get) {
            None | Some("null") => Some(Self::Object(JsonObject::new())),
            Some(text) if text.starts_with('{') => Some(Self::Text(text)),
            Some(_) => None,
        }
    }

    /// The arguments as a value (the text read; a repeated key keeps its last value, as
    /// `serde_json` reads one).
    pub(super) fn to_value(&self) -> Value {
        match self {
            Self::Object(object) => Value::Object(object.clone()),
            Self::Text(text) => serde_json::from_str(text).unwrap_or_default(),
        }
    }

    /// What writes the arguments for a call's binding once they are handed on: their text
    /// (borrowed from the request), or an object's, written now when `needed`.
    pub(super) fn for_binding(&self, needed: bool) -> Written<'a> {
        match self {
            Self::Text(text) => Written::Text(text),
            Self::Object(object) if needed => {
                Written::Done(serde_json::to_string(object).unwrap_or_default())
            }
            Self::Object(_) => Written::Done(String::new()),
        }
    }

    /// The arguments as a value, taken.
    pub(super) fn into_value(self) -> Value {
        match self {
            Self::Object(object) => Value::Object(object),
            Self::Text(text) => serde_json::from_str(text).unwrap_or_default(),
        }
    }

    /// The arguments as the registry takes them.
    pub(super) fn into_args(self) -> ToolArgs<'a> {
        match self {
            Self::Object(object) => ToolArgs::Value(Value::Object(object)),
            Self::Text(text) => ToolArgs::Text(text),
        }
    }
}

/// Arguments as `serde_json` writes them, the same for an object and for its text.
pub(super) enum Written<'a> {
    /// Text to read and write again.
    Text(&'a str),
    /// Written already.
    Done(String),
}

impl Written<'_> {
    /// The written arguments.
    pub(super) fn written(&self) -> String {
        match self {
            Self::Text(text) => serde_json::from_str::<Value>(text)
                .map_or_else(|_| (*text).to_owned(), |value| value.to_string()),
            Self::Done(written) => written.clone(),
        }
    }
}
