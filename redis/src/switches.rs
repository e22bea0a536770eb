//! Switches in Redis: three sets (`switches:names`, `switches:tags`, `switches:categories`)
//! changed together with a message on the channel `switches`, so that every instance that
//! [`join`](Fleet::join)ed applies the change at once; an instance that starts or reconnects
//! reads the sets first.

use std::time::Duration;

use futures::StreamExt;

use super::Fleet;
use super::connection::FleetError;
use tool_registry_core::registry::{Selector, Shared, SwitchSet};

/// How long a follower waits before it connects again after losing Redis.
const RECONNECT_AFTER: Duration = Duration::from_millis(250);

/// How often a follower reads the switches again without being told.
const RESYNC_EVERY: Duration = Duration::from_secs(5);

/// The task that applies the fleet's switches to a registry; it stops when dropped.
#[must_use = "the switches are followed only while this lives"]
pub struct Following {
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Following {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Fleet {
    fn switch_keys(&self) -> [String; 3] {
        [
            self.redis.key(&["switches", "names"]),
            self.redis.key(&["switches", "tags"]),
            self.redis.key(&["switches", "categories"]),
        ]
    }

    fn channel(&self) -> String {
        self.redis.key(&["switches"])
    }

    /// Switches tools off across the fleet: stored, then announced; every joined instance
    /// applies it within moments (and one that starts later reads it).
    pub async fn disable(&self, selector: &Selector) -> Result<(), FleetError> {
        self.switch(selector, true).await
    }

    /// Switches tools back on across the fleet (undoes [`Fleet::disable`] with the same
    /// selector).
    pub async fn enable(&self, selector: &Selector) -> Result<(), FleetError> {
        self.switch(selector, false).await
    }

    async fn switch(&self, selector: &Selector, off: bool) -> Result<(), FleetError> {
        let [names, tags, categories] = self.switch_keys();
        let (key, value) = match selector {
            Selector::Name(name) => (names, name.clone()),
            Selector::Tag(tag) => (tags, tag.clone()),
            Selector::Category(category) => (categories, category.clone()),
        };
        let channel = self.channel();
        self.redis
            .run(|mut connection| async move {
                let mut pipe = redis::pipe();
                pipe.atomic();
                if off {
                    pipe.sadd(&key, &value).ignore();
                } else {
                    pipe.srem(&key, &value).ignore();
                }
                pipe.publish(&channel, "changed").ignore();
                pipe.query_async::<()>(&mut connection).await
            })
            .await
    }

    /// The switches stored now.
    pub async fn switches(&self) -> Result<SwitchSet, FleetError> {
        let [names, tags, categories] = self.switch_keys();
        self.redis
            .run(|mut connection| async move {
                let (names, tags, categories) = redis::pipe()
                    .smembers(&names)
                    .smembers(&tags)
                    .smembers(&categories)
                    .query_async(&mut connection)
                    .await?;
                Ok(SwitchSet {
                    names,
                    tags,
                    categories,
                })
            })
            .await
    }

    /// Makes `registry` a member of the fleet: applies the stored switches now (an error if
    /// Redis cannot be read), then follows every change until the returned handle is dropped.
    /// When the connection is lost the last switches stay in force; on reconnecting they are
    /// read again, so a change made meanwhile is not missed.
    pub async fn join(&self, registry: impl Into<Shared>) -> Result<Following, FleetError> {
        let registry = registry.into();
        let first = self.switches().await?;
        SwitchSet::default().apply(&first, &registry);
        Ok(self.follow_from(registry, first))
    }

    /// Follows the fleet's switches without waiting for them: what [`Fleet::join`] does after
    /// its first read, for an instance that must start while Redis is away. The switches are
    /// applied as soon as Redis answers.
    pub fn follow(&self, registry: impl Into<Shared>) -> Following {
        self.follow_from(registry.into(), SwitchSet::default())
    }

    fn follow_from(&self, registry: Shared, first: SwitchSet) -> Following {
        let fleet = self.clone();
        let task = tokio::spawn(async move {
            let mut applied = first;
            loop {
                if let Err(error) = fleet.follow_once(&registry, &mut applied).await {
                    tracing::warn!(%error, "lost the fleet's switch channel; the last switches stay in force");
                }
                tokio::time::sleep(RECONNECT_AFTER).await;
            }
        });
        Following { task }
    }

    /// Subscribes, reads the switches, and applies each change announced, until the
    /// subscription ends.
    async fn follow_once(
        &self,
        registry: &Shared,
        applied: &mut SwitchSet,
    ) -> Result<(), FleetError> {
        let timeout = self.redis.timeout();
        let mut subscription =
            tokio::time::timeout(timeout, self.redis.client().get_async_pubsub())
                .await
                .map_err(|_| self.redis.unavailable("no subscription connection in time"))?
                .map_err(|error| self.redis.unavailable(error))?;
        tokio::time::timeout(timeout, subscription.subscribe(self.channel()))
            .await
            .map_err(|_| self.redis.unavailable("no subscription in time"))?
            .map_err(|error| self.redis.unavailable(error))?;
        // Subscribed first, read second: a change between the two is read or heard.
        let now = self.switches().await?;
        applied.apply(&now, registry);
        *applied = now;
        let mut messages = subscription.on_message();
        loop {
            // Read again now and then too, should a message be lost on a connection that died
            // without closing.
            tokio::select! {
                message = messages.next() => if message.is_none() {
                    return Err(self.redis.unavailable("the subscription ended"));
                },
                () = tokio::time::sleep(RESYNC_EVERY) => {}
            }
            let now = self.switches().await?;
            applied.apply(&now, registry);
            *applied = now;
        }
    }
}
