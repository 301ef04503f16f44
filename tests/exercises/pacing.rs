//! Exercises of the chapter *Pacing*: the pacer's interval for a given free memory and cycle
//! time, worked out from the rule and checked against `gc_runtime::pacing_interval`, the
//! function the pacer itself calls.

use crate::{GIB, MIB};
use gc_runtime::{pacing_interval, PacingConfig};
use std::time::Duration;

/// Exercise 1: The longest of the last five cycles took 400 ms; the running one started 100 ms ago;
/// mutators may still take 512 MiB. With the default quantum and margin, how far apart (in
/// microseconds) must the quanta of all mutators together be?
fn interval_early_in_a_cycle_us() -> f64 {
    // expected = 400 ms x 1.25 = 500 ms; remaining = 500 - 100 = 400 ms.
    // budget = 512 MiB - 64 KiB = 8191 quanta; interval = 400 ms x 64 KiB / budget.
    400_000.0 / 8191.0 // 48.8 us: a mutator slower than 1.3 GB/s is never delayed
}

/// Exercise 2: The same cycle overran: it has run 600 ms and 8 MiB are left. The interval now?
fn interval_after_an_overrun_us() -> f64 {
    // remaining = max(500 - 600, 500 / 4) = 125 ms; budget = 8 MiB - 64 KiB = 127 quanta.
    125_000.0 / 127.0 // 984 us: nearly the 1 ms cap on every quantum
}

/// Exercise 3: The first cycle of a heap (none completed yet) has just started with 1 GiB free. The
/// interval?
fn interval_in_the_first_cycle_us() -> f64 {
    // No history: expected = 100 ms x 1.25 = 125 ms, all of it remaining; 16383 quanta.
    125_000.0 / 16383.0
}

/// Exercise 4: How many pacing decisions does a mutator make while it fills one small page?
fn decisions_per_small_page() -> u64 {
    // 2 MiB / 64 KiB.
    32
}

fn real_us(free: u64, expected: Option<Duration>, elapsed: Duration) -> f64 {
    let c = PacingConfig::default();
    pacing_interval(free, c.quantum, expected, c.duration_margin, elapsed).as_secs_f64() * 1e6
}

fn assert_close(answer: f64, real: f64) {
    assert!(
        (answer - real).abs() < 0.01,
        "answer {answer:.3} us, the pacer {real:.3} us"
    );
}

#[test]
fn interval_early() {
    let real = real_us(
        512 * MIB,
        Some(Duration::from_millis(400)),
        Duration::from_millis(100),
    );
    assert_close(interval_early_in_a_cycle_us(), real);
}

#[test]
fn interval_overrun() {
    let real = real_us(
        8 * MIB,
        Some(Duration::from_millis(400)),
        Duration::from_millis(600),
    );
    assert_close(interval_after_an_overrun_us(), real);
}

#[test]
fn interval_first_cycle() {
    assert_close(
        interval_in_the_first_cycle_us(),
        real_us(GIB, None, Duration::ZERO),
    );
}

#[test]
fn decisions() {
    let real = gc_core::GRANULE_SIZE / PacingConfig::default().quantum;
    assert_eq!(decisions_per_small_page(), real);
}
