//! Comparisons in alternating rounds, and the executor they use. Both sides run in turns, so
//! that both see the same machine load; the statistic is taken per round, then the median over
//! the rounds.

// Each bench uses its own part of this module.
#![allow(dead_code)]

use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::Instant;

const ROUNDS: usize = 201;
const ROUND_TIME_NS: f64 = 2_000_000.0;

/// Nanoseconds per call of `f`, over `iters` calls.
pub fn time<T>(iters: u64, mut f: impl FnMut() -> T) -> f64 {
    let start = Instant::now();
    for _ in 0..iters {
        black_box(f());
    }
    start.elapsed().as_nanos() as f64 / iters as f64
}

pub fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// Median ns per call of `a` and `b` and the 10th percentile, median and 90th percentile of
/// `a / b` over the rounds.
pub fn paired<A, B>(a: impl FnMut() -> A, b: impl FnMut() -> B) -> (f64, f64, [f64; 3]) {
    rounds(a, b, |x, y| x / y)
}

/// Median ns per call of `a` and `b`, and the 10th percentile, median and 90th percentile of
/// `a - b` (ns per call) over the rounds.
pub fn paired_difference<A, B>(a: impl FnMut() -> A, b: impl FnMut() -> B) -> (f64, f64, [f64; 3]) {
    rounds(a, b, |x, y| x - y)
}

fn rounds<A, B>(
    mut a: impl FnMut() -> A,
    mut b: impl FnMut() -> B,
    statistic: fn(f64, f64) -> f64,
) -> (f64, f64, [f64; 3]) {
    // Warm up, and size a round to about ROUND_TIME_NS per side.
    let probe = time(10_000, &mut a).max(time(10_000, &mut b));
    let iters = (ROUND_TIME_NS / probe).max(100.0) as u64;
    let (mut ta, mut tb, mut stats) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        // Alternate which side goes first, so neither always runs on a warmer cache.
        let (x, y) = if round % 2 == 0 {
            let x = time(iters, &mut a);
            (x, time(iters, &mut b))
        } else {
            let y = time(iters, &mut b);
            (time(iters, &mut a), y)
        };
        ta.push(x);
        tb.push(y);
        stats.push(statistic(x, y));
    }
    let middle = median(&mut stats);
    let spread = [percentile(&stats, 0.1), middle, percentile(&stats, 0.9)];
    (median(&mut ta), median(&mut tb), spread)
}

/// Polls a future to completion with a no-op waker. Every future here is ready on first poll,
/// so this measures the call and not an executor; both sides of a comparison use it.
pub fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
    }
}
