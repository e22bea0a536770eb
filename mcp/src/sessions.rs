//! The sessions of MCP's streamable HTTP (the `initialize` era): each bound to the caller that
//! opened it, and bounded in number for the server, for each caller, and for guests together.
//!
//! rmcp keeps the sessions ([`LocalSessionManager`]); [`Sessions`] wraps it and answers every
//! question about a session id as the caller of the request would see it: a session another
//! caller opened does not exist for it (`404` like an id never given, a `DELETE` of it `202` like
//! any unknown id, and nothing happens to the session). The caller of a request is set around
//! the request by the bearer check ([`Sessions::scope_request`]); rmcp's own calls outside a
//! request (a session's end) act for nobody and are always let through.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use futures::Stream;
use futures::future::Either;
use rmcp::model::{
    CancelledNotification, CancelledNotificationParam, ClientJsonRpcMessage, ClientNotification,
    RequestId, ServerJsonRpcMessage,
};
use rmcp::transport::streamable_http_server::SessionManager;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{ServerSseMessage, SessionId};

use super::resume::Resumable;

/// The bounds on MCP sessions over streamable HTTP ([`McpServer::session_limits`](super::McpServer::session_limits)).
///
/// ```
/// use tool_registry::mcp::SessionLimits;
///
/// let limits = SessionLimits::default().guests(16).per_caller(64);
/// assert_eq!(limits.max_sessions, SessionLimits::DEFAULT_MAX_SESSIONS);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SessionLimits {
    /// Sessions open at once on the server, every caller together.
    pub max_sessions: usize,
    /// Sessions open at once for one token of the callers file.
    pub per_caller: usize,
    /// Sessions open at once for every caller without a token, together: the smallest share,
    /// so that guests cannot take what named callers need.
    pub guests: usize,
    /// How long a session may go without a request before it ends.
    pub idle_expiry: Duration,
}

impl SessionLimits {
    /// [`max_sessions`](Self::max_sessions) unless set.
    pub const DEFAULT_MAX_SESSIONS: usize = 2_048;
    /// [`per_caller`](Self::per_caller) unless set.
    pub const DEFAULT_PER_CALLER: usize = 256;
    /// [`guests`](Self::guests) unless set.
    pub const DEFAULT_GUESTS: usize = 128;
    /// [`idle_expiry`](Self::idle_expiry) unless set.
    pub const DEFAULT_IDLE_EXPIRY: Duration = Duration::from_secs(300);

    /// Sets [`max_sessions`](Self::max_sessions).
    #[must_use]
    pub fn max_sessions(mut self, sessions: usize) -> Self {
        self.max_sessions = sessions;
        self
    }

    /// Sets [`per_caller`](Self::per_caller).
    #[must_use]
    pub fn per_caller(mut self, sessions: usize) -> Self {
        self.per_caller = sessions;
        self
    }

    /// Sets [`guests`](Self::guests).
    #[must_use]
    pub fn guests(mut self, sessions: usize) -> Self {
        self.guests = sessions;
        self
    }

    /// Sets [`idle_expiry`](Self::idle_expiry).
    #[must_use]
    pub fn idle_expiry(mut self, expiry: Duration) -> Self {
        self.idle_expiry = expiry;
        self
    }
}

impl Default for SessionLimits {
    fn default() -> Self {
        Self {
            max_sessions: Self::DEFAULT_MAX_SESSIONS,
            per_caller: Self::DEFAULT_PER_CALLER,
            guests: Self::DEFAULT_GUESTS,
            idle_expiry: Self::DEFAULT_IDLE_EXPIRY,
        }
    }
}

/// Whose session: the credentials that opened it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Owner {
    /// A request without a token.
    Guest,
    /// The token at this place in the callers file.
    Token(usize),
    /// The user of accepted OAuth access tokens (a number for their issuer and subject).
    #[cfg(feature = "oauth")]
    Subject(u64),
}

/// Which bound a new session would pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Full {
    /// The server's own.
    Server,
    /// The caller's share (or the guests').
    Caller,
}

/// Why the sessions refused what a request asked, beyond rmcp's own answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Refused {
    /// A session it would have opened passed this bound.
    Full(Full),
    /// Its `Last-Event-ID` names no stream of its session that can be resumed.
    Resume(String),
}

/// The request being served, as the sessions see it.
struct Current {
    owner: Owner,
    /// What the sessions refused it.
    refused: Arc<OnceLock<Refused>>,
}

tokio::task_local! {
    static CURRENT: Current;
}

fn current_owner() -> Option<Owner> {
    CURRENT.try_with(|current| current.owner).ok()
}

#[derive(Default)]
struct Book {
    owners: HashMap<SessionId, Owner>,
    open: HashMap<Owner, usize>,
    /// When a session was last kept from its expiry by a call answered without rmcp.
    touched: HashMap<SessionId, Instant>,
}

/// rmcp's sessions, each bound to its opener and bounded in number.
pub(super) struct Sessions {
    inner: LocalSessionManager,
    limits: SessionLimits,
    book: Mutex<Book>,
    /// The request streams a call may release, and those released (SEP-1699).
    resumable: Arc<Resumable>,
}

/// What the wrapper answers besides rmcp's own errors.
#[derive(Debug, thiserror::Error)]
pub(super) enum SessionsError {
    /// rmcp's sessions failed.
    #[error(transparent)]
    Local(#[from] LocalSessionManagerError),
    /// A bound is reached.
    #[error("too many sessions")]
    Full(Full),
    /// The session is not the caller's, or does not exist.
    #[error("Session not found")]
    NotFound,
}

impl Sessions {
    pub(super) fn new(limits: SessionLimits) -> Self {
        let mut inner = LocalSessionManager::default();
        inner.session_config.keep_alive = Some(limits.idle_expiry);
        Self {
            inner,
            limits,
            book: Mutex::new(Book::default()),
            resumable: Arc::default(),
        }
    }

    /// The streams a call may release, for the calls of a request.
    pub(super) fn resumable(&self) -> &Arc<Resumable> {
        &self.resumable
    }

    /// Runs `request` as `owner`'s; with its output, the bound a session it would have opened
    /// passed, if it was refused one.
    pub(super) async fn scope_request<F: Future>(
        owner: Owner,
        request: F,
    ) -> (F::Output, Option<Refused>) {
        let refused = Arc::new(OnceLock::new());
        let current = Current {
            owner,
            refused: Arc::clone(&refused),
        };
        let output = CURRENT.scope(current, request).await;
        (output, refused.get().cloned())
    }

    /// The bounds kept.
    pub(super) fn limits(&self) -> &SessionLimits {
        &self.limits
    }

    fn book(&self) -> std::sync::MutexGuard<'_, Book> {
        self.book.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The bound `owner` would pass with one more session, if any.
    pub(super) fn full_for(&self, owner: Owner) -> Option<Full> {
        let book = self.book();
        self.full(&book, owner)
    }

    fn full(&self, book: &Book, owner: Owner) -> Option<Full> {
        let share = match owner {
            Owner::Guest => self.limits.guests,
            Owner::Token(_) => self.limits.per_caller,
            #[cfg(feature = "oauth")]
            Owner::Subject(_) => self.limits.per_caller,
        };
        if book.owners.len() >= self.limits.max_sessions {
            Some(Full::Server)
        } else if book.open.get(&owner).copied().unwrap_or(0) >= share {
            Some(Full::Caller)
        } else {
            None
        }
    }

    /// Whether the request's caller may use `id`: a session it opened, or any outside a
    /// request (rmcp ending a session).
    fn mine(&self, id: &SessionId) -> bool {
        match current_owner() {
            None => true,
            Some(caller) => self
                .book()
                .owners
                .get(id)
                .is_some_and(|owner| *owner == caller),
        }
    }

    /// Whether the session `id` exists and was opened by `owner`.
    pub(super) fn is_of(&self, id: &str, owner: Owner) -> bool {
        self.book()
            .owners
            .get(id)
            .is_some_and(|opener| *opener == owner)
    }

    fn check(&self, id: &SessionId) -> Result<(), SessionsError> {
        if self.mine(id) {
            Ok(())
        } else {
            Err(SessionsError::NotFound)
        }
    }

    /// Keeps the session `id` from its idle expiry after a request answered without rmcp:
    /// rmcp counts a session idle while nothing reaches it, so it is sent a notification that
    /// changes nothing (the cancellation of a request it never had), at most once a tenth of
    /// the expiry.
    pub(super) async fn touch(&self, id: &str) {
        let now = Instant::now();
        let id = SessionId::from(id.to_owned());
        {
            let mut book = self.book();
            let recent = (book.touched.get(&id))
                .is_some_and(|at| now.duration_since(*at) < self.limits.idle_expiry / 10);
            if recent || !book.owners.contains_key(&id) {
                return;
            }
            book.touched.insert(id.clone(), now);
        }
        let nothing = CancelledNotificationParam::new(
            Some(RequestId::String("tool-registry/keep-alive".into())),
            None,
        );
        let message = ClientJsonRpcMessage::notification(
            ClientNotification::CancelledNotification(CancelledNotification::new(nothing)),
        );
        if let Err(error) = self.inner.accept_message(&id, message).await {
            tracing::debug!(target: "tool_registry::mcp", %error, "a session could not be kept alive");
        }
    }

    /// How many sessions are open.
    #[cfg(test)]
    fn open(&self) -> usize {
        self.book().owners.len()
    }
}

impl SessionManager for Sessions {
    type Error = SessionsError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        // Outside a request nobody opens sessions; count such a one as a guest's.
        let owner = current_owner().unwrap_or(Owner::Guest);
        {
            let mut book = self.book();
            if let Some(full) = self.full(&book, owner) {
                let _ = CURRENT.try_with(|current| current.refused.set(Refused::Full(full)));
                return Err(SessionsError::Full(full));
            }
            // The place is taken before the session exists, so that concurrent requests
            // cannot pass the bound together; it is given back below if creation fails.
            *book.open.entry(owner).or_default() += 1;
        }
        match self.inner.create_session().await {
            Ok((id, transport)) => {
                self.book().owners.insert(id.clone(), owner);
                tool_registry_telemetry::report::session_opened("mcp");
                Ok((id, transport))
            }
            Err(error) => {
                release(&mut self.book(), owner);
                Err(error.into())
            }
        }
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.check(id)?;
        Ok(self.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.mine(id) && self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        // Another caller's session is left as it is, answered like an unknown one.
        if !self.mine(id) {
            return Ok(());
        }
        let result = self.inner.close_session(id).await;
        let mut book = self.book();
        book.touched.remove(id);
        if let Some(owner) = book.owners.remove(id) {
            release(&mut book, owner);
            tool_registry_telemetry::report::session_closed("mcp");
        }
        Ok(result?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.check(id)?;
        // Only a tool's call can release its stream: other requests are not kept track of.
        let request = match &message {
            ClientJsonRpcMessage::Request(request)
                if matches!(
                    request.request,
                    rmcp::model::ClientRequest::CallToolRequest(_)
                ) =>
            {
                Some(request.id.clone())
            }
            _ => None,
        };
        let stream = self.inner.create_stream(id, message).await?;
        Ok(self.resumable.watch(id, request, stream))
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.check(id)?;
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.check(id)?;
        Ok(self.inner.create_standalone_stream(id).await?)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.check(id)?;
        if let Some(reader) = self.resumable.resume(id, &last_event_id) {
            return Ok(Either::Left(reader));
        }
        match self.inner.resume(id, last_event_id.clone()).await {
            Ok(stream) => Ok(Either::Right(stream)),
            Err(error) => {
                // rmcp answers a failed resumption with an empty stream; the HTTP layer
                // answers it as the error it is.
                let why = format!(
                    "`Last-Event-ID: {}` names no stream of this session that can be resumed",
                    last_event_id.chars().take(64).collect::<String>()
                );
                let _ = CURRENT.try_with(|current| current.refused.set(Refused::Resume(why)));
                Err(error.into())
            }
        }
    }
}

fn release(book: &mut Book, owner: Owner) {
    if let Some(open) = book.open.get_mut(&owner) {
        *open = open.saturating_sub(1);
        if *open == 0 {
            book.open.remove(&owner);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> SessionLimits {
        SessionLimits::default()
            .max_sessions(3)
            .per_caller(2)
            .guests(1)
    }

    #[tokio::test]
    async fn each_caller_has_its_share_and_the_server_its_bound() {
        let sessions = Sessions::new(limits());
        let guest = Sessions::scope_request(Owner::Guest, sessions.create_session())
            .await
            .0;
        assert!(guest.is_ok());
        let second = Sessions::scope_request(Owner::Guest, sessions.create_session())
            .await
            .0;
        assert!(matches!(second, Err(SessionsError::Full(Full::Caller))));
        for _ in 0..2 {
            let named = Sessions::scope_request(Owner::Token(0), sessions.create_session())
                .await
                .0;
            assert!(named.is_ok());
        }
        assert_eq!(sessions.full_for(Owner::Token(1)), Some(Full::Server));
        let (other, refused) =
            Sessions::scope_request(Owner::Token(1), sessions.create_session()).await;
        assert!(matches!(other, Err(SessionsError::Full(Full::Server))));
        assert_eq!(refused, Some(Refused::Full(Full::Server)));
        assert_eq!(sessions.open(), 3);
    }

    #[tokio::test]
    async fn a_session_exists_only_for_its_opener_and_ends_only_by_it() {
        let sessions = Sessions::new(limits());
        let (id, _transport) = Sessions::scope_request(Owner::Token(0), sessions.create_session())
            .await
            .0
            .unwrap();
        for stranger in [Owner::Guest, Owner::Token(1)] {
            let seen = Sessions::scope_request(stranger, sessions.has_session(&id)).await;
            assert!(!seen.0.unwrap());
            Sessions::scope_request(stranger, sessions.close_session(&id))
                .await
                .0
                .unwrap();
            assert_eq!(sessions.open(), 1, "{stranger:?} ended another's session");
        }
        let seen = Sessions::scope_request(Owner::Token(0), sessions.has_session(&id)).await;
        assert!(seen.0.unwrap());
        Sessions::scope_request(Owner::Token(0), sessions.close_session(&id))
            .await
            .0
            .unwrap();
        assert_eq!(sessions.open(), 0);
        // Its place is free again.
        assert_eq!(sessions.full_for(Owner::Token(0)), None);
    }
}
