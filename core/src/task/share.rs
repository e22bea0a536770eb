//! [`TaskOwner`]: who a task is for, and the shares of the bounds it counts against besides
//! its owner's own ([`TaskShare`]): for a guest of a network server, the guests of its peer
//! address and all the guests together ([`GuestTaskLimits`]).

use std::net::IpAddr;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::scope::{NETWORK_GUEST, Scope};

/// What the guests of a network server may keep and run: a guest has no name to be bounded by,
/// so its tasks count against the share of its peer address and the share of all the guests.
/// One guest (or one address) that starts many tasks uses up its address's share; the other
/// guests still have theirs, within the share of all the guests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuestTaskLimits {
    /// The most tasks the guests of one peer address keep, ended ones included until their
    /// TTL (25 unless set). An IPv6 address counts by its /64 prefix, which one host usually
    /// holds whole.
    pub kept_per_peer: usize,
    /// The most tasks the guests of one peer address run at once (8 unless set).
    pub running_per_peer: usize,
    /// The most tasks all the guests keep together (100 unless set).
    pub kept: usize,
    /// The most tasks all the guests run at once together (32 unless set).
    pub running: usize,
}

impl Default for GuestTaskLimits {
    fn default() -> Self {
        Self {
            kept_per_peer: 25,
            running_per_peer: 8,
            kept: 100,
            running: 32,
        }
    }
}

/// Whose tasks share a bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ShareKind {
    /// The guests of one peer address.
    Peer,
    /// All the guests of a server.
    Guests,
}

/// A bound a task counts against besides its owner's own: every task that names the same share
/// counts, whoever owns it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskShare {
    /// Whose tasks share the bound.
    pub kind: ShareKind,
    /// What those tasks have in common; a peer address only as a digest.
    pub key: String,
    /// The most tasks kept under this share, ended ones included until their TTL.
    pub kept: usize,
    /// The most tasks running at once under this share.
    pub running: usize,
}

/// Who a task is for: the owner that alone reads and changes it, and the shares it counts
/// against besides the owner's own bounds.
///
/// ```
/// use tool_registry::task::{GuestTaskLimits, TaskOwner};
/// use tool_registry::Scope;
///
/// let ann = TaskOwner::of(&Scope::user("ann"));
/// assert!(ann.shares.is_empty());
/// // Two guests' sessions are two owners; both count against the guests' shares.
/// let limits = GuestTaskLimits::default();
/// let peer = Some("192.0.2.7".parse().unwrap());
/// let a = TaskOwner::guest(Some("session-a"), peer, &limits);
/// let b = TaskOwner::guest(Some("session-b"), peer, &limits);
/// assert_ne!(a.id, b.id);
/// assert_eq!(a.shares, b.shares);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskOwner {
    /// Who reads and changes the task (the record's `owner`).
    pub id: String,
    /// The shares of bounds the task counts against besides its owner's.
    pub shares: Vec<TaskShare>,
}

impl TaskOwner {
    /// The caller with `scope`, bounded as itself alone ([`owner_of`]).
    pub fn of(scope: &Scope) -> Self {
        Self {
            id: owner_of(scope),
            shares: Vec::new(),
        }
    }

    /// A guest of a network server: in a session, the session's alone (named by a digest of
    /// the session's id, so a store never holds the id itself); without one, any request
    /// without a session that holds the task's id. Either counts against the share of its peer
    /// address (when known) and the share of all the guests.
    pub fn guest(session: Option<&str>, peer: Option<IpAddr>, limits: &GuestTaskLimits) -> Self {
        let id = match session {
            Some(session) => format!(
                "guest-session:{}@{NETWORK_GUEST}",
                digest(session.as_bytes())
            ),
            None => owner_of(&Scope::network_guest()),
        };
        let mut shares = Vec::with_capacity(2);
        if let Some(peer) = peer {
            shares.push(TaskShare {
                kind: ShareKind::Peer,
                key: format!("guests@{}", digest(&prefix(peer))),
                kept: limits.kept_per_peer,
                running: limits.running_per_peer,
            });
        }
        shares.push(TaskShare {
            kind: ShareKind::Guests,
            key: "guests".to_owned(),
            kept: limits.kept,
            running: limits.running,
        });
        Self { id, shares }
    }

    /// The owner of a task started by the caller with `scope` on a network server: a guest
    /// ([`Scope::network_guest`]) by [`TaskOwner::guest`], any other caller by
    /// [`TaskOwner::of`].
    pub fn of_caller(
        scope: &Scope,
        session: Option<&str>,
        peer: Option<IpAddr>,
        limits: &GuestTaskLimits,
    ) -> Self {
        if is_network_guest(scope) {
            Self::guest(session, peer, limits)
        } else {
            Self::of(scope)
        }
    }
}

/// Who a task belongs to, for the caller with `scope`: its user (or, without one, what it
/// counts under for limits) and its permission level.
pub fn owner_of(scope: &Scope) -> String {
    let who = scope
        .user_id()
        .map(|user| format!("user:{user}"))
        .unwrap_or_else(|| format!("anonymous:{}", scope.limit_key()));
    format!("{who}@{}", scope.level())
}

/// Whether `scope` is a guest of a network server: no user, counted as [`NETWORK_GUEST`].
pub(crate) fn is_network_guest(scope: &Scope) -> bool {
    scope.user_id().is_none() && scope.limit_key() == NETWORK_GUEST
}

/// The part of an address that one host holds: an IPv4 address whole, an IPv6 address's /64
/// (an IPv4 address mapped into IPv6 as the IPv4 address).
fn prefix(peer: IpAddr) -> Vec<u8> {
    match peer {
        IpAddr::V4(v4) => v4.octets().to_vec(),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.octets().to_vec(),
            None => v6.octets()[..8].to_vec(),
        },
    }
}

/// 128 bits of SHA-256, as hex.
fn digest(bytes: &[u8]) -> String {
    Sha256::digest(bytes)[..16]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guests_are_apart_by_session_and_share_by_address() {
        let limits = GuestTaskLimits::default();
        let here: IpAddr = "127.0.0.1".parse().unwrap();
        let there: IpAddr = "127.0.0.2".parse().unwrap();
        let a = TaskOwner::guest(Some("a"), Some(here), &limits);
        let b = TaskOwner::guest(Some("b"), Some(here), &limits);
        let c = TaskOwner::guest(None, Some(there), &limits);
        assert_ne!(a.id, b.id);
        assert_ne!(a.id, c.id);
        assert_eq!(a.shares, b.shares);
        assert_ne!(a.shares[0], c.shares[0]);
        assert_eq!(a.shares[1], c.shares[1]);
        // A session id never reaches a store as it is.
        let secret = TaskOwner::guest(Some("0123456789abcdef-secret"), None, &limits);
        assert!(!secret.id.contains("secret"), "{}", secret.id);
        // A named caller is itself, whatever its transport.
        let ann = TaskOwner::of_caller(&Scope::user("ann"), Some("a"), Some(here), &limits);
        assert_eq!(ann, TaskOwner::of(&Scope::user("ann")));
        // A user named `guest` is no guest.
        let named = Scope::network_guest().with_user("guest");
        assert!(
            TaskOwner::of_caller(&named, None, Some(here), &limits)
                .shares
                .is_empty()
        );
    }

    #[test]
    fn an_ipv6_host_counts_by_its_prefix_and_a_mapped_ipv4_as_itself() {
        let limits = GuestTaskLimits::default();
        let share = |peer: &str| {
            TaskOwner::guest(None, Some(peer.parse().unwrap()), &limits).shares[0].clone()
        };
        assert_eq!(share("2001:db8::1"), share("2001:db8::ffff:2"));
        assert_ne!(share("2001:db8::1"), share("2001:db8:0:1::1"));
        assert_eq!(share("::ffff:192.0.2.7"), share("192.0.2.7"));
    }

    #[test]
    fn a_share_refuses_past_its_bounds_saying_whose_they_are() {
        let share = &TaskOwner::guest(
            None,
            Some("192.0.2.7".parse().unwrap()),
            &GuestTaskLimits::default(),
        )
        .shares[0];
        assert_eq!(share.admit(0, 7), Ok(()));
        let refused = share.admit(0, 8).unwrap_err().to_string();
        assert!(
            refused.contains("8 running among the guests of your address"),
            "{refused}"
        );
        assert!(share.admit(25, 0).is_err());
    }
}
