//! Following the registry for one caller: which of its changes concern the caller (a change
//! of tools only when it changes what the caller sees), and telling a session of the
//! `initialize` era and a `subscriptions/listen` stream of them (imports `offers.rs`).

use std::hash::{Hash, Hasher};

use rmcp::service::SubscriptionContext;
use rmcp::{Peer, RoleServer};
use tokio::sync::{broadcast, watch};
use tool_registry_core::Scope;
use tool_registry_core::registry::Shared;
use tool_registry_core::spec::RegistryChange;

use super::offers::Subscriptions;

/// The registry as one caller sees it, for following its changes.
pub(super) struct Watcher {
    pub(super) registry: Shared,
    pub(super) scope: Scope,
}

/// A change a session or a listen stream is told of.
pub(super) enum Heard {
    /// What the caller sees of the tools changed.
    Tools,
    /// The resources or templates changed.
    Resources,
    /// The prompts changed.
    Prompts,
    /// The contents of the resource at this URI changed.
    Updated(String),
}

impl Watcher {
    /// A digest of the names of the tools the caller sees now: what decides whether a change
    /// concerns it. Kept as 8 bytes, not the names, so that a session costs the same whatever
    /// the number of tools.
    pub(super) fn visible(&self) -> u64 {
        let mut hasher = rustc_hash::FxHasher::default();
        for tool in self.registry.tools(&self.scope) {
            tool.name().hash(&mut hasher);
        }
        hasher.finish()
    }

    /// Waits for the next change of the registry that may concern the caller (a change of
    /// tools only when it changes what the caller sees); `None` when the registry's change
    /// channel is gone.
    pub(super) async fn next_change(
        &self,
        changes: &mut tokio::sync::broadcast::Receiver<RegistryChange>,
        seen: &mut u64,
    ) -> Option<Heard> {
        loop {
            let heard = match changes.recv().await {
                Ok(RegistryChange::Resources) => return Some(Heard::Resources),
                Ok(RegistryChange::Prompts) => return Some(Heard::Prompts),
                Ok(RegistryChange::ResourceUpdated { uri }) => return Some(Heard::Updated(uri)),
                Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => Heard::Tools,
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return None,
            };
            let now = self.visible();
            if now != *seen {
                *seen = now;
                return Some(heard);
            }
        }
    }
}

/// Tells a session of the `initialize` era of every change that concerns its caller, and of
/// updates of the resources it subscribed to, until the session ends (`ended`) or its stream
/// closes.
pub(super) async fn tell_session(
    watcher: Watcher,
    peer: Peer<RoleServer>,
    mut ended: watch::Receiver<()>,
    mut changes: broadcast::Receiver<RegistryChange>,
    subscriptions: Subscriptions,
) {
    let mut seen = watcher.visible();
    loop {
        tokio::select! {
            _ = ended.changed() => return,
            heard = watcher.next_change(&mut changes, &mut seen) => {
                if peer.is_transport_closed() {
                    return;
                }
                let sent = match heard {
                    None => return,
                    Some(Heard::Tools) => peer.notify_tool_list_changed().await,
                    Some(Heard::Resources) => peer.notify_resource_list_changed().await,
                    Some(Heard::Prompts) => peer.notify_prompt_list_changed().await,
                    Some(Heard::Updated(uri)) if subscriptions.follows(&uri) => {
                        peer.notify_resource_updated(
                            rmcp::model::ResourceUpdatedNotificationParam::new(uri),
                        )
                        .await
                    }
                    Some(Heard::Updated(_)) => Ok(()),
                };
                if sent.is_err() {
                    return;
                }
            }
        }
    }
}

/// Tells a `subscriptions/listen` stream (the 2026-07-28 revision) of what it opted into, until
/// the client ends it.
pub(super) async fn tell_listener(
    watcher: Watcher,
    mut changes: broadcast::Receiver<RegistryChange>,
    context: SubscriptionContext,
) {
    let mut seen = watcher.visible();
    loop {
        tokio::select! {
            () = context.cancelled() => return,
            heard = watcher.next_change(&mut changes, &mut seen) => {
                let accepted = context.accepted();
                let sink = context.sink();
                let sent = match heard {
                    None => return,
                    Some(Heard::Tools) if accepted.tools_list_changed == Some(true) => {
                        sink.notify_tool_list_changed().await
                    }
                    Some(Heard::Resources) if accepted.resources_list_changed == Some(true) => {
                        sink.notify_resource_list_changed().await
                    }
                    Some(Heard::Prompts) if accepted.prompts_list_changed == Some(true) => {
                        sink.notify_prompt_list_changed().await
                    }
                    Some(Heard::Updated(uri))
                        if accepted
                            .resource_subscriptions
                            .as_ref()
                            .is_some_and(|uris| uris.contains(&uri)) =>
                    {
                        sink.notify_resource_updated(uri).await
                    }
                    Some(_) => Ok(()),
                };
                if sent.is_err() {
                    return;
                }
            }
        }
    }
}
