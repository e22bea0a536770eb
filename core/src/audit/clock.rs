//! The clock of the registry: durations and wall-clock timestamps from two readings per call,
//! and the wall clock for what must be exact to the reading (approval expiries, registration
//! times). Nothing else in the crate reads a clock.
//!
//! A call's audit needs its duration and the time it finished. The counter (`quanta`: the TSC
//! where it is invariant, the monotonic clock elsewhere) is read when the call starts and when
//! it ends; the timestamp is the second reading plus an offset to the wall clock, which is read
//! again at most once a second. So a call reads a clock twice instead of three times, and the
//! cheapest one: on a virtual machine each `clock_gettime` costs 40-60 ns. A step of the wall
//! clock (a manual change, a leap second) shows in timestamps within a second.

use std::sync::LazyLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How old the offset may get before the wall clock is read again.
const REANCHOR_NS: u64 = 1_000_000_000;

/// A reading of the counter, taken with [`Tick::now`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Tick(u64);

struct Anchor {
    clock: quanta::Clock,
    /// The reading all others are measured from.
    base: u64,
    /// Wall-clock nanoseconds since the Unix epoch at `base`.
    offset_ns: AtomicU64,
    /// When the offset was last computed, in nanoseconds after `base`.
    anchored_ns: AtomicU64,
}

static ANCHOR: LazyLock<Anchor> = LazyLock::new(|| {
    let clock = quanta::Clock::new();
    let base = clock.raw();
    Anchor {
        clock,
        base,
        offset_ns: AtomicU64::new(epoch_ns(SystemTime::now())),
        anchored_ns: AtomicU64::new(0),
    }
});

fn epoch_ns(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

impl Tick {
    /// Reads the counter.
    pub(crate) fn now() -> Self {
        Self(ANCHOR.clock.raw())
    }

    /// The time from `earlier` to `self` (zero if `earlier` is later).
    #[cfg(test)]
    pub(crate) fn since(self, earlier: Tick) -> Duration {
        Duration::from_nanos(self.nanos_since(earlier))
    }

    /// The time from `earlier` to `self` in milliseconds, as the audit records it.
    pub(crate) fn millis_since(self, earlier: Tick) -> f64 {
        // One multiplication: no `Duration` and no division on the way.
        self.nanos_since(earlier) as f64 * 1e-6
    }

    fn nanos_since(self, earlier: Tick) -> u64 {
        ANCHOR.clock.delta_as_nanos(earlier.0, self.0)
    }

    /// The wall-clock time of this reading.
    pub(crate) fn wall_time(self) -> SystemTime {
        let anchor = &*ANCHOR;
        let since_base = anchor.clock.delta_as_nanos(anchor.base, self.0);
        let anchored = anchor.anchored_ns.load(Ordering::Relaxed);
        let offset = if since_base.saturating_sub(anchored) > REANCHOR_NS {
            // Re-anchor; threads that race here each store a correct offset.
            let wall = epoch_ns(SystemTime::now());
            let now = anchor.clock.delta_as_nanos(anchor.base, anchor.clock.raw());
            let offset = wall.saturating_sub(now);
            anchor.offset_ns.store(offset, Ordering::Relaxed);
            anchor.anchored_ns.store(now, Ordering::Relaxed);
            offset
        } else {
            anchor.offset_ns.load(Ordering::Relaxed)
        };
        UNIX_EPOCH + Duration::from_nanos(offset.saturating_add(since_base))
    }
}

/// The wall clock, read now: for times kept beyond the call (an approval's expiry, when a tool
/// was registered), where one exact reading per event is worth its cost.
pub(crate) fn wall_now() -> SystemTime {
    SystemTime::now()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn distance(a: SystemTime, b: SystemTime) -> Duration {
        match a.duration_since(b) {
            Ok(d) => d,
            Err(e) => e.duration(),
        }
    }

    #[test]
    fn timestamps_follow_the_wall_clock_across_re_anchoring() {
        for _ in 0..3 {
            let before = SystemTime::now();
            let stamped = Tick::now().wall_time();
            let after = SystemTime::now();
            assert!(
                distance(stamped, before) <= distance(after, before) + Duration::from_millis(5),
                "{stamped:?} is not between {before:?} and {after:?}"
            );
            std::thread::sleep(Duration::from_millis(600));
        }
    }

    #[test]
    fn durations_match_the_monotonic_clock() {
        let (start, std_start) = (Tick::now(), std::time::Instant::now());
        std::thread::sleep(Duration::from_millis(30));
        let (end, std_end) = (Tick::now(), std::time::Instant::now());
        let ours = end.since(start);
        assert!((end.millis_since(start) - ours.as_secs_f64() * 1e3).abs() < 1e-6);
        let theirs = std_end - std_start;
        assert!(
            ours.abs_diff(theirs) < Duration::from_millis(2),
            "{ours:?} vs {theirs:?}"
        );
        assert_eq!(start.since(end), Duration::ZERO);
        let gap = distance(end.wall_time(), start.wall_time());
        assert!(
            gap.abs_diff(ours) < Duration::from_millis(2),
            "{gap:?} vs {ours:?}"
        );
    }
}
