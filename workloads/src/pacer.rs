//! A workload's rate limit: [`Pacer`] spaces operations at a fixed rate per thread, waiting in
//! a blocking region so that a throttled thread never holds up a GC pause (a thread in a
//! blocking region counts as at a safepoint, as a Java thread in native code does for ZGC).
//! The intended start times it returns let a workload measure latency from when an operation
//! was due, which corrects for coordinated omission.

use gc_runtime::Scope;
use std::time::{Duration, Instant};

/// Paces operations at a fixed rate per thread (0 = unthrottled). Waiting happens in a
/// blocking region, so a throttled thread never holds up a pause.
pub struct Pacer {
    start: Instant,
    interval: Option<Duration>,
    n: u64,
}

impl Pacer {
    pub fn new(ops_per_sec_per_thread: f64) -> Self {
        Pacer {
            start: Instant::now(),
            interval: (ops_per_sec_per_thread > 0.0)
                .then(|| Duration::from_secs_f64(1.0 / ops_per_sec_per_thread)),
            n: 0,
        }
    }

    /// The expected interval between operations, if throttled.
    pub fn interval(&self) -> Option<Duration> {
        self.interval
    }

    /// Wait until the next operation is due; returns when it was due (for latency measured
    /// from the intended start, which corrects coordinated omission).
    pub fn wait(&mut self, s: &mut Scope<'_>) -> Instant {
        let Some(iv) = self.interval else {
            return Instant::now();
        };
        let due = self.start + iv * self.n as u32;
        self.n += 1;
        let now = Instant::now();
        if due > now {
            s.blocking(|| std::thread::sleep(due - now));
        }
        due
    }
}
