//! Streams a call lets go of and its client takes up again (SEP-1699): a tool that runs long
//! ends the HTTP stream its answer would come on ([`Ctx::release_stream`](tool_registry_core::Ctx::release_stream)),
//! and the client reconnects with `GET` and `Last-Event-ID` to read the rest, its answer
//! included.
//!
//! rmcp gives every event of a session's request stream an id (`index/stream`) and primes each
//! stream with an event carrying `retry`. A stream released here is not closed in rmcp: the
//! server keeps reading it ([`drain`]), holding up to [`HELD_EVENTS`] of its events for
//! [`HELD_FOR`] after it ends, under its session and stream. A reconnect names its session (the
//! bearer check has made sure it is the caller's) and the last event it read; only that
//! session's streams are looked in, so no event crosses to another session, and an id that
//! names nothing held goes to rmcp's own resumption (of streams it still holds), whose failure
//! the HTTP layer answers as an error.

use std::collections::{HashMap, VecDeque};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::task::{Context, Poll};
use std::time::Duration;

use futures::Stream;
use futures::task::AtomicWaker;
use rmcp::model::RequestId;
use rmcp::transport::streamable_http_server::session::{ServerSseMessage, SessionId};
use tokio::sync::mpsc;

/// The most events of a released stream held for its client's return; older ones are dropped.
pub(super) const HELD_EVENTS: usize = 256;

/// How long a released stream's events are held after the stream ended.
pub(super) const HELD_FOR: Duration = Duration::from_secs(60);

type Stream_ = Pin<Box<dyn Stream<Item = ServerSseMessage> + Send + Sync>>;

/// A released stream's events, shared by the task that reads it and its client's reconnect.
type Shared = Arc<Mutex<Held>>;

/// The released streams of every session, and the streams that may be released.
#[derive(Default)]
pub(super) struct Resumable {
    /// The request streams open now, by session and JSON-RPC request id: what a tool releases.
    open: Mutex<HashMap<(SessionId, RequestId), Arc<Signal>>>,
    /// The streams released, by session and stream (the part of an event id after `/`).
    held: Mutex<HashMap<(SessionId, String), Shared>>,
}

/// A stream's release, told to the stream as it is polled.
#[derive(Default)]
struct Signal {
    released: AtomicBool,
    waker: AtomicWaker,
}

/// What a released stream sent since it was released, and who reads it now.
#[derive(Default)]
struct Held {
    events: VecDeque<ServerSseMessage>,
    ended: bool,
    reader: Option<mpsc::Sender<ServerSseMessage>>,
}

impl Resumable {
    /// `stream`, the answer stream of `request` in `session`, releasable by its call.
    pub(super) fn watch(
        self: &Arc<Self>,
        session: &SessionId,
        request: Option<RequestId>,
        stream: impl Stream<Item = ServerSseMessage> + Send + Sync + 'static,
    ) -> Watched {
        let key = request.map(|request| (session.clone(), request));
        // Only a stream that can be released is kept track of.
        let signal = key.as_ref().map(|key| {
            let signal = Arc::new(Signal::default());
            lock(&self.open).insert(key.clone(), Arc::clone(&signal));
            signal
        });
        Watched {
            inner: Some(Box::pin(stream)),
            signal,
            session: session.clone(),
            stream: None,
            key,
            owner: Arc::downgrade(self),
        }
    }

    /// Ends the answer stream of `request` in `session`, if it is open; the rest of it is held
    /// for the client's reconnect.
    pub(super) fn release(&self, session: &str, request: &RequestId) -> bool {
        let key = (SessionId::from(session), request.clone());
        let Some(signal) = lock(&self.open).remove(&key) else {
            return false;
        };
        signal.released.store(true, Ordering::Release);
        signal.waker.wake();
        true
    }

    /// The events of the released stream `last_event_id` names in `session` after that one,
    /// then the rest as it comes; `None` when it names no stream held here.
    pub(super) fn resume(&self, session: &SessionId, last_event_id: &str) -> Option<Reader> {
        let (index, stream) = parse(last_event_id)?;
        let held = lock(&self.held)
            .get(&(session.clone(), stream.to_owned()))
            .cloned()?;
        let mut held = lock(&held);
        let (sender, receiver) = mpsc::channel(HELD_EVENTS + 16);
        for event in &held.events {
            if event
                .event_id
                .as_deref()
                .and_then(parse)
                .is_some_and(|(at, _)| at > index)
            {
                let _ = sender.try_send(event.clone());
            }
        }
        // One reader at a time: a second reconnect takes the stream from the first.
        held.reader = (!held.ended).then_some(sender);
        Some(Reader(receiver))
    }
}

/// `index/stream`, rmcp's id of a request stream's event.
fn parse(event_id: &str) -> Option<(usize, &str)> {
    let (index, stream) = event_id.split_once('/')?;
    Some((index.parse().ok()?, stream))
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A request's answer stream, ended early when its call releases it.
pub(super) struct Watched {
    inner: Option<Stream_>,
    /// Told when the stream is released; `None` for a stream that cannot be.
    signal: Option<Arc<Signal>>,
    session: SessionId,
    /// The stream's part of its event ids, once an event has shown it.
    stream: Option<String>,
    key: Option<(SessionId, RequestId)>,
    owner: Weak<Resumable>,
}

impl Stream for Watched {
    type Item = ServerSseMessage;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        let Some(inner) = this.inner.as_mut() else {
            return Poll::Ready(None);
        };
        let released = this.signal.as_ref().is_some_and(|signal| {
            signal.waker.register(cx.waker());
            signal.released.load(Ordering::Acquire)
        });
        match inner.as_mut().poll_next(cx) {
            Poll::Ready(Some(event)) => {
                if this.stream.is_none()
                    && let Some((_, stream)) = event.event_id.as_deref().and_then(parse)
                {
                    this.stream = Some(stream.to_owned());
                }
                Poll::Ready(Some(event))
            }
            Poll::Ready(None) => {
                this.inner = None;
                Poll::Ready(None)
            }
            // Released: what was ready has gone out; the rest is held for the reconnect.
            Poll::Pending if released => {
                let inner = this.inner.take().expect("checked above");
                match (this.owner.upgrade(), this.stream.clone()) {
                    (Some(owner), Some(stream)) => {
                        let held = Arc::new(Mutex::new(Held::default()));
                        let key = (this.session.clone(), stream);
                        lock(&owner.held).insert(key.clone(), Arc::clone(&held));
                        tokio::spawn(drain(inner, held, key, Arc::downgrade(&owner)));
                    }
                    // A stream that never showed its id cannot be resumed: it goes on unread
                    // until its call ends.
                    _ => {
                        tokio::spawn(async move {
                            let mut inner = inner;
                            while futures::StreamExt::next(&mut inner).await.is_some() {}
                        });
                    }
                }
                Poll::Ready(None)
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        if let (Some(key), Some(owner)) = (self.key.take(), self.owner.upgrade()) {
            let mut open = lock(&owner.open);
            if open.get(&key).is_some_and(|signal| {
                self.signal
                    .as_ref()
                    .is_some_and(|own| Arc::ptr_eq(signal, own))
            }) {
                open.remove(&key);
            }
        }
    }
}

/// Reads a released stream to its end, holding its events for the client's reconnect and
/// handing them to the client that reconnected; forgets them [`HELD_FOR`] after the end.
async fn drain(mut inner: Stream_, held: Shared, key: (SessionId, String), owner: Weak<Resumable>) {
    while let Some(event) = futures::StreamExt::next(&mut inner).await {
        let mut held = lock(&held);
        if held.events.len() == HELD_EVENTS {
            held.events.pop_front();
        }
        if let Some(reader) = &held.reader
            && reader.try_send(event.clone()).is_err()
        {
            held.reader = None;
        }
        held.events.push_back(event);
    }
    {
        let mut held = lock(&held);
        held.ended = true;
        held.reader = None;
    }
    tokio::time::sleep(HELD_FOR).await;
    if let Some(owner) = owner.upgrade() {
        lock(&owner.held).remove(&key);
    }
}

/// A reconnected client's read of a released stream.
pub(super) struct Reader(mpsc::Receiver<ServerSseMessage>);

impl Stream for Reader {
    type Item = ServerSseMessage;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.0.poll_recv(cx)
    }
}
