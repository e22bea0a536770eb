//! Serving a router on a listener within bounds: how many connections are open at once, how long
//! a request's headers and body may take to arrive, how long a connection may sit idle, and how
//! long a stop may wait for the calls in flight. Both servers (tool modules and MCP over HTTP)
//! serve through [`serve`].
//!
//! A connection is one of four things at any moment: idle (no request, or a request whose
//! headers have not all arrived), receiving (a request whose headers have arrived but whose body
//! has not ended), streaming (a response that stays open, such as MCP's `GET /mcp` event
//! stream), or running a call (a request that is whole, from the end of its body until its
//! response is written). Only the client decides when its request is whole, so a request counts
//! as a call only then: idle and receiving connections are what a client that holds sockets
//! costs the server, and they are the ones closed: after the idle timeout (counted for a
//! receiving one from the end of its headers), when a new client arrives at the connection cap
//! (the one idle or receiving longest, else the oldest event stream; never a call), and at once
//! when the server stops. A request's headers and its body each have a deadline of their own,
//! and a body must keep up a minimum rate (so many bytes in each 5 s window from the end of its
//! headers, unless it ends within the window), so that a client cannot hold a connection by
//! sending them a byte at a time. A stop lets the calls in flight write their answers, then
//! returns by its deadline whatever is left.

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
    /// place of the connection idle longest (idle, or receiving a request whose body has not
    /// ended: a request is a call only once it is whole), or, when none is, of the oldest event
    /// stream; when every connection is running a call, it is answered `503` and closed.
    pub max_connections: usize,
    /// How long a request's headers may take to arrive, from its first byte (or from the
    /// connection's start); then the connection is closed.
    pub header_timeout: Duration,
    /// How long a request's body may take to arrive in all, from the end of its headers; then
    /// the request fails and the connection is closed.
    pub body_timeout: Duration,
    /// The fewest bytes a second a request's body must bring, counted over each
    /// [`BODY_RATE_WINDOW`](Self::BODY_RATE_WINDOW) from the end of its headers: a window
    /// that brings fewer than its share, and in which the body does not end, fails the request
    /// and closes the connection. The first window is the body's grace; a body smaller than a
    /// window's share must arrive whole within it. `0`: no minimum, only
    /// [`body_timeout`](Self::body_timeout).
    pub min_body_rate: u64,
    /// How long a connection may stay open with no call in flight (no request, or a request
    /// whose body has not ended, counted from the end of its headers); then it is closed.
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
    /// [`min_body_rate`](Self::min_body_rate) unless set, in bytes a second: far below any
    /// real client's upload, far above a byte at a time.
    pub const DEFAULT_MIN_BODY_RATE: u64 = 1_024;
    /// The window [`min_body_rate`](Self::min_body_rate) is counted over.
    pub const BODY_RATE_WINDOW: Duration = Duration::from_secs(5);
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

    /// Sets [`min_body_rate`](Self::min_body_rate), in bytes a second (`0`: no minimum).
    #[must_use]
    pub fn min_body_rate(mut self, bytes_per_second: u64) -> Self {
        self.min_body_rate = bytes_per_second;
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
            min_body_rate: Self::DEFAULT_MIN_BODY_RATE,
            idle_timeout: Self::DEFAULT_IDLE_TIMEOUT,
            stop_deadline: Self::DEFAULT_STOP_DEADLINE,
        }
    }
}

/// What a connection is doing: waiting for a request, or for the rest of its headers.
const IDLE: u8 = 0;
/// Reading a request's body. The client decides when that ends, so until it does the
/// connection weighs as an idle one: evicted, idled out and closed at a stop like one.
const RECEIVING: u8 = 1;
/// Writing a response that stays open (an event stream).
const STREAMING: u8 = 2;
/// Running a call: its request is whole, its response not yet written.
const CALLING: u8 = 3;

/// One open connection, as the accept loop and the connection's own task see it.
struct Conn {
    /// [`IDLE`], [`RECEIVING`], [`STREAMING`] or [`CALLING`].
    state: AtomicU8,
    /// When the connection last went idle, or began its latest request, in milliseconds since
    /// the server started.
    idle_since: AtomicU64,
    /// Told when the connection must close now (the cap took its place).
    evicted: Notify,
}

impl Conn {
    /// Whether it waits on its client: idle, or receiving a request's body.
    fn waiting(&self) -> bool {
        matches!(self.state.load(Ordering::Acquire), IDLE | RECEIVING)
    }

    /// How long it has been idle or receiving (or busy, while it is).
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
        // The connection idle or receiving longest, else the oldest event stream (its client
        // reconnects); never a call in flight.
        let oldest = conns
            .iter()
            .map(|(&id, conn)| (conn.state.load(Ordering::Acquire), conn, id))
            .filter(|&(state, _, _)| state != CALLING)
            .min_by_key(|&(state, conn, _)| {
                (state == STREAMING, conn.idle_since.load(Ordering::Relaxed))
            })
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
    /// A request body that must arrive whole by its deadline, keeping up the minimum rate; its
    /// connection runs a call once it has.
    struct Timed {
        #[pin]
        inner: Incoming,
        // The fields' notes are plain comments: pin-project-lite takes no attribute on a field
        // but `#[pin]`.
        // The next check: the end of the current rate window, or the deadline.
        #[pin]
        check: tokio::time::Sleep,
        // When the whole body must have arrived.
        deadline: Instant,
        // What each rate window must bring (0: no minimum).
        window_bytes: u64,
        // What the current rate window has brought.
        arrived: u64,
        // The connection, marked as running a call when the body ends.
        receiving: Option<Arc<Conn>>,
    }
}

impl Timed {
    /// `inner`, bounded by `limits` from now; `receiving` is its connection, when the body
    /// has not ended yet.
    fn new(inner: Incoming, limits: &ConnectionLimits, receiving: Option<Arc<Conn>>) -> Self {
        let now = Instant::now();
        let deadline = now + limits.body_timeout;
        let window_bytes = limits
            .min_body_rate
            .saturating_mul(ConnectionLimits::BODY_RATE_WINDOW.as_secs());
        let check = if window_bytes == 0 {
            deadline
        } else {
            deadline.min(now + ConnectionLimits::BODY_RATE_WINDOW)
        };
        Self {
            inner,
            check: tokio::time::sleep_until(check),
            deadline,
            window_bytes,
            arrived: 0,
            receiving,
        }
    }
}

/// Marks the connection of a body that has just ended as running a call.
fn received(receiving: &mut Option<Arc<Conn>>) {
    if let Some(conn) = receiving.take() {
        // Only this request's own mark: had its response been written already, the connection
        // would be idle or on its next request, and stays so.
        let _ =
            conn.state
                .compare_exchange(RECEIVING, CALLING, Ordering::AcqRel, Ordering::Relaxed);
    }
}

/// The error a request body that came too slowly fails with.
fn too_slow(why: &'static str) -> Box<dyn std::error::Error + Send + Sync> {
    io::Error::new(io::ErrorKind::TimedOut, why).into()
}

impl http_body::Body for Timed {
    type Data = axum::body::Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        let mut this = self.project();
        let frame = this.inner.as_mut().poll_frame(cx);
        if let Poll::Ready(Some(Ok(frame))) = &frame
            && let Some(data) = frame.data_ref()
        {
            *this.arrived = this.arrived.saturating_add(data.len() as u64);
        }
        if matches!(frame, Poll::Ready(None)) || this.inner.is_end_stream() {
            // Whole: its connection runs a call, and nothing is left to time.
            received(this.receiving);
            return frame.map_err(Into::into);
        }
        // The deadline fails a body however it arrives; a rate window is judged only once
        // nothing more is waiting, so that all that has arrived counts.
        while this.check.as_mut().poll(cx).is_ready() {
            let at = this.check.deadline();
            if at >= *this.deadline {
                return Poll::Ready(Some(Err(too_slow(
                    "the request body did not all arrive within the server's body timeout; send it whole right after the headers",
                ))));
            }
            if frame.is_ready() {
                break;
            }
            if *this.arrived < *this.window_bytes {
                return Poll::Ready(Some(Err(too_slow(
                    "the request body arrived more slowly than the server's minimum rate; send it whole right after the headers",
                ))));
            }
            *this.arrived = 0;
            let next = (at + ConnectionLimits::BODY_RATE_WINDOW).min(*this.deadline);
            this.check.as_mut().reset(next);
        }
        frame.map_err(Into::into)
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
/// connection is taken, idle ones, ones receiving a body and event streams are closed at once,
/// and the calls in flight answer before it returns, or until the stop deadline.
pub async fn serve(
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
            tracing::warn!(target: "tool_registry::http", %peer, max = limits.max_connections, "a connection was refused: the server is at its connection limit");
            tool_registry_telemetry::report::refused("http", "too_many_connections");
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

/// A connection, counted in the open connections' gauge while it lasts.
struct Counted;

impl Counted {
    fn open() -> Self {
        tool_registry_telemetry::report::connection_opened();
        Self
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        tool_registry_telemetry::report::connection_closed();
    }
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
    let _counted = Counted::open();
    let (conn, open) = (&registered.conn, &registered.open);
    let service = {
        let (conn, open) = (Arc::clone(conn), Arc::clone(open));
        let limits = limits.clone();
        hyper::service::service_fn(move |mut request: Request<Incoming>| {
            request
                .extensions_mut()
                .insert(axum::extract::ConnectInfo(peer));
            let state = if is_stream(&request) {
                STREAMING
            } else if http_body::Body::is_end_stream(request.body()) {
                CALLING
            } else {
                RECEIVING
            };
            conn.idle_since.store(open.now_ms(), Ordering::Relaxed);
            conn.state.store(state, Ordering::Release);
            let busy = Busy {
                open: Arc::clone(&open),
                conn: Arc::clone(&conn),
            };
            let receiving = (state == RECEIVING).then(|| Arc::clone(&conn));
            let answer = router
                .clone()
                .oneshot(request.map(|body| Body::new(Timed::new(body, &limits, receiving))));
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
        let wake = if conn.waiting() {
            limits.idle_timeout.saturating_sub(conn.idle_for(open))
        } else {
            limits.idle_timeout
        };
        tokio::select! {
            _ = served.as_mut() => return,
            () = conn.evicted.notified() => return,
            () = tokio::time::sleep(wake) => {
                if conn.waiting() && conn.idle_for(open) >= limits.idle_timeout {
                    return;
                }
            }
            changed = stopping.changed(), if !stop_heard => {
                stop_heard = true;
                // Idle, receiving a body or streaming: nothing a stop waits for.
                if changed.is_err() || conn.state.load(Ordering::Acquire) != CALLING {
                    return;
                }
                // The call in flight writes its answer, then the connection closes.
                served.as_mut().graceful_shutdown();
            }
        }
    }
}
