//! Serving a router on a listener within bounds: how many connections are open at once, how long
//! a request's headers may take to arrive, how long a connection may sit idle, and how long a
//! stop may wait for the calls in flight. Both servers (tool modules and MCP over HTTP) serve
//! through [`serve`].
//!
//! A connection is one of three things at any moment: idle (no request, or a request whose
//! headers have not all arrived), streaming (a response that stays open, such as MCP's
//! `GET /mcp` event stream), or running a call (any other request, until its response is
//! written). Idle connections are what a client that holds sockets costs the server, so they are
//! the ones closed: after the idle timeout, when a new client arrives at the connection cap
//! (the one idle longest, else the oldest event stream), and at once when the server stops. A
//! request's headers and its body each have a deadline of their own, so that a client cannot
//! hold a connection by sending them a byte at a time. A stop lets the calls in flight
//! write their answers, then returns by its deadline whatever is left.

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{Method, Request, Response, header};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, watch};
use tokio::task::JoinSet;
use tokio::time::Instant;
use tower::ServiceExt;

/// The bounds a server keeps on its connections. Every server of this crate serves with
/// [`ConnectionLimits::default`] unless given others.
///
/// ```
/// use std::time::Duration;
/// use tool_registry::http::ConnectionLimits;
///
/// let limits = ConnectionLimits::default()
///     .max_connections(256)
///     .header_timeout(Duration::from_secs(5));
/// assert_eq!(limits.idle_timeout, ConnectionLimits::DEFAULT_IDLE_TIMEOUT);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConnectionLimits {
    /// How many connections are open at once. A client that arrives at the cap is served in
    /// place of the connection idle longest (or, when none is idle, of the oldest event
    /// stream); when every connection is running a call, it is answered `503` and closed.
    pub max_connections: usize,
    /// How long a request's headers may take to arrive, from its first byte (or from the
    /// connection's start); then the connection is closed.
    pub header_timeout: Duration,
    /// How long a request's body may take to arrive in all, from the end of its headers; then
    /// the request fails and the connection is closed.
    pub body_timeout: Duration,
    /// How long a connection may stay open with no request in flight; then it is closed.
    pub idle_timeout: Duration,
    /// How long a stop waits for the calls in flight to answer before it returns anyway.
    pub stop_deadline: Duration,
}

impl ConnectionLimits {
    /// [`max_connections`](Self::max_connections) unless set.
    pub const DEFAULT_MAX_CONNECTIONS: usize = 1_024;
    /// [`header_timeout`](Self::header_timeout) unless set.
    pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
    /// [`body_timeout`](Self::body_timeout) unless set.
    pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(30);
    /// [`idle_timeout`](Self::idle_timeout) unless set.
    pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);
    /// [`stop_deadline`](Self::stop_deadline) unless set: the default timeout of a call, so
    /// that a call of an ordinary tool in flight finishes.
    pub const DEFAULT_STOP_DEADLINE: Duration = Duration::from_secs(30);

    /// Sets [`max_connections`](Self::max_connections) (at least one).
    #[must_use]
    pub fn max_connections(mut self, connections: usize) -> Self {
        self.max_connections = connections.max(1);
        self
    }

    /// Sets [`header_timeout`](Self::header_timeout).
    #[must_use]
    pub fn header_timeout(mut self, timeout: Duration) -> Self {
        self.header_timeout = timeout;
        self
    }

    /// Sets [`body_timeout`](Self::body_timeout).
    #[must_use]
    pub fn body_timeout(mut self, timeout: Duration) -> Self {
        self.body_timeout = timeout;
        self
    }

    /// Sets [`idle_timeout`](Self::idle_timeout).
    #[must_use]
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = timeout;
        self
    }

    /// Sets [`stop_deadline`](Self::stop_deadline).
    #[must_use]
    pub fn stop_deadline(mut self, deadline: Duration) -> Self {
        self.stop_deadline = deadline;
        self
    }
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        Self {
            max_connections: Self::DEFAULT_MAX_CONNECTIONS,
            header_timeout: Self::DEFAULT_HEADER_TIMEOUT,
            body_timeout: Self::DEFAULT_BODY_TIMEOUT,
            idle_timeout: Self::DEFAULT_IDLE_TIMEOUT,
            stop_deadline: Self::DEFAULT_STOP_DEADLINE,
        }
    }
}

/// What a connection is doing.
const IDLE: u8 = 0;
const STREAMING: u8 = 1;
const CALLING: u8 = 2;

/// One open connection, as the accept loop and the connection's own task see it.
struct Conn {
    state: AtomicU8,
    /// When the connection last went idle, in milliseconds since the server started.
    idle_since: AtomicU64,
    /// Told when the connection must close now (the cap took its place).
    evicted: Notify,
}

impl Conn {
    fn idle(&self) -> bool {
        self.state.load(Ordering::Acquire) == IDLE
    }

    /// How long it has been idle (or busy, while it is).
    fn idle_for(&self, open: &Open) -> Duration {
        Duration::from_millis(
            open.now_ms()
                .saturating_sub(self.idle_since.load(Ordering::Relaxed)),
        )
    }
}

/// The open connections, to find the one idle longest.
struct Open {
    started: Instant,
    next_id: AtomicU64,
    conns: Mutex<HashMap<u64, Arc<Conn>>>,
}

impl Open {
    fn now_ms(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Makes room for one more connection: `false` when every connection is busy.
    fn make_room(&self, max: usize) -> bool {
        let mut conns = self.conns.lock().unwrap_or_else(PoisonError::into_inner);
        if conns.len() < max {
            return true;
        }
        // The connection idle longest, else the oldest event stream (its client reconnects);
        // never a call in flight.
        let oldest = conns
            .iter()
            .map(|(&id, conn)| (conn.state.load(Ordering::Acquire), conn, id))
            .filter(|&(state, _, _)| state != CALLING)
            .min_by_key(|&(state, conn, _)| (state, conn.idle_since.load(Ordering::Relaxed)))
            .map(|(_, _, id)| id);
        match oldest.and_then(|id| conns.remove(&id)) {
            Some(conn) => {
                conn.evicted.notify_one();
                true
            }
            None => false,
        }
    }

    fn add(self: &Arc<Self>) -> Registered {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let conn = Arc::new(Conn {
            state: AtomicU8::new(IDLE),
            idle_since: AtomicU64::new(self.now_ms()),
            evicted: Notify::new(),
        });
        self.conns
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id, Arc::clone(&conn));
        Registered {
            open: Arc::clone(self),
            id,
            conn,
        }
    }
}

/// A connection's place among the open ones, given up when its task ends.
struct Registered {
    open: Arc<Open>,
    id: u64,
    conn: Arc<Conn>,
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.open
            .conns
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.id);
    }
}

/// Marks its connection busy while a request runs, idle again when its response is written
/// (or dropped).
struct Busy {
    open: Arc<Open>,
    conn: Arc<Conn>,
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.conn
            .idle_since
            .store(self.open.now_ms(), Ordering::Relaxed);
        self.conn.state.store(IDLE, Ordering::Release);
    }
}

pin_project_lite::pin_project! {
    /// A response body that keeps its connection marked busy until it is written.
    struct Tracked {
        #[pin]
        inner: Body,
        busy: Option<Busy>,
    }
}

impl http_body::Body for Tracked {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        let this = self.project();
        let frame = this.inner.poll_frame(cx);
        if let Poll::Ready(None | Some(Err(_))) = frame {
            this.busy.take();
        }
        frame
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

pin_project_lite::pin_project! {
    /// A request body that must arrive whole by its deadline.
    struct Timed {
        #[pin]
        inner: Incoming,
        #[pin]
        deadline: tokio::time::Sleep,
    }
}

impl http_body::Body for Timed {
    type Data = axum::body::Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        let this = self.project();
        if this.deadline.poll(cx).is_ready() {
            let late = io::Error::new(
                io::ErrorKind::TimedOut,
                "the request body did not arrive in time",
            );
            return Poll::Ready(Some(Err(late.into())));
        }
        this.inner.poll_frame(cx).map_err(Into::into)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

/// A long-lived event stream (`GET` asking for `text/event-stream`) is not a call: a stop does
/// not wait for it.
fn is_stream(request: &Request<Incoming>) -> bool {
    request.method() == Method::GET
        && request
            .headers()
            .get(header::ACCEPT)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|accept| accept.contains("text/event-stream"))
}

/// Serves `router` on `listener` within `limits` until `shutdown` completes; then no new
/// connection is taken, idle ones and event streams are closed at once, and the calls in flight
/// answer before it returns, or until the stop deadline.
pub(crate) async fn serve(
    listener: TcpListener,
    router: Router,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()> {
    let open = Arc::new(Open {
        started: Instant::now(),
        next_id: AtomicU64::new(0),
        conns: Mutex::new(HashMap::new()),
    });
    let (stopping, stop_seen) = watch::channel(false);
    let mut tasks = JoinSet::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // Out of descriptors, or a connection reset before it was taken: the
                    // listener itself is fine, so wait a moment and go on.
                    tracing::warn!(target: "tool_registry::http", %error, "accepting a connection failed");
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        while tasks.try_join_next().is_some() {}
        if !open.make_room(limits.max_connections) {
            tasks.spawn(refuse(stream));
            continue;
        }
        let _ = stream.set_nodelay(true);
        let registered = open.add();
        tasks.spawn(connection(
            stream,
            peer,
            registered,
            router.clone(),
            limits.clone(),
            stop_seen.clone(),
        ));
    }
    drop(listener);
    let _ = stopping.send(true);
    let drained = async { while tasks.join_next().await.is_some() {} };
    if tokio::time::timeout(limits.stop_deadline, drained)
        .await
        .is_err()
    {
        tracing::warn!(
            target: "tool_registry::http",
            left = tasks.len(),
            "the stop deadline passed with calls still running; they are dropped"
        );
    }
    Ok(())
}

/// The answer to a client that finds every connection busy.
async fn refuse(mut stream: TcpStream) {
    const BODY: &str = "the server is at its connection limit; try again shortly";
    let answer = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\nretry-after: 1\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{BODY}",
        BODY.len()
    );
    let write = async {
        stream.write_all(answer.as_bytes()).await?;
        stream.shutdown().await
    };
    let _ = tokio::time::timeout(Duration::from_secs(1), write).await;
}

/// One connection, served until it ends, idles out, is evicted, or the server stops. Each of
/// its requests carries the client's address as axum's `ConnectInfo<SocketAddr>`.
async fn connection(
    stream: TcpStream,
    peer: std::net::SocketAddr,
    registered: Registered,
    router: Router,
    limits: ConnectionLimits,
    mut stopping: watch::Receiver<bool>,
) {
    let (conn, open) = (&registered.conn, &registered.open);
    let service = {
        let (conn, open) = (Arc::clone(conn), Arc::clone(open));
        let body_timeout = limits.body_timeout;
        hyper::service::service_fn(move |mut request: Request<Incoming>| {
            request
                .extensions_mut()
                .insert(axum::extract::ConnectInfo(peer));
            let state = if is_stream(&request) {
                STREAMING
            } else {
                CALLING
            };
            conn.idle_since.store(open.now_ms(), Ordering::Relaxed);
            conn.state.store(state, Ordering::Release);
            let busy = Busy {
                open: Arc::clone(&open),
                conn: Arc::clone(&conn),
            };
            let deadline = tokio::time::sleep(body_timeout);
            let answer = router.clone().oneshot(request.map(|body| {
                Body::new(Timed {
                    inner: body,
                    deadline,
                })
            }));
            async move {
                let response: Response<Body> = match answer.await {
                    Ok(response) => response,
                    Err(never) => match never {},
                };
                Ok::<_, std::convert::Infallible>(response.map(|inner| {
                    Body::new(Tracked {
                        inner,
                        busy: Some(busy),
                    })
                }))
            }
        })
    };
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .keep_alive(true);
    let served = builder.serve_connection(TokioIo::new(stream), service);
    let mut served = std::pin::pin!(served);
    let mut stop_heard = false;
    loop {
        // A busy connection is looked at again a whole timeout later at the earliest.
        let wake = if conn.idle() {
            limits.idle_timeout.saturating_sub(conn.idle_for(open))
        } else {
            limits.idle_timeout
        };
        tokio::select! {
            _ = served.as_mut() => return,
            () = conn.evicted.notified() => return,
            () = tokio::time::sleep(wake) => {
                if conn.idle() && conn.idle_for(open) >= limits.idle_timeout {
                    return;
                }
            }
            changed = stopping.changed(), if !stop_heard => {
                stop_heard = true;
                if changed.is_err() || conn.state.load(Ordering::Acquire) != CALLING {
                    return;
                }
                // The call in flight writes its answer, then the connection closes.
                served.as_mut().graceful_shutdown();
            }
        }
    }
}
