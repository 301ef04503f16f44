//! The leak detector: Netty's `ResourceLeakDetector` for pooled buffers.
//!
//! A buffer's memory goes back to the pool when its reference count reaches zero. A buffer
//! whose last handle is dropped while the count is still above zero was leaked by the
//! program (a missing `release`). The pool takes the memory back anyway (so it is a leak
//! *report*, not a leak), and for a *tracked* buffer it records and logs where the buffer was
//! allocated. Which buffers are tracked is the level: none ([`LeakDetection::Off`]), one in
//! `n` ([`LeakDetection::Sampled`], Netty's `SIMPLE`), or all ([`LeakDetection::Paranoid`]).
//!
//! The allocation site is the caller of `NativePool::allocate` (`#[track_caller]`: a file, line
//! and column, free to record), not a full backtrace: cheap enough to sample always.

use serde::Serialize;
use std::panic::Location;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Which buffers the leak detector tracks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub enum LeakDetection {
    /// None: a leaked buffer is counted ([`super::PoolStats::unreported_drops`]) but not
    /// reported.
    #[default]
    Off,
    /// One buffer in `n` (the 1st, the `n+1`-th, ...); `n` ≥ 1.
    Sampled(u32),
    /// Every buffer.
    Paranoid,
}

/// One leaked buffer: dropped without its reference count reaching zero.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LeakRecord {
    /// The buffer's id.
    pub buffer_id: u64,
    /// Its length.
    pub len: usize,
    /// Its capacity (the size class, or the mapping of an unpooled buffer).
    pub capacity: usize,
    /// The reference count when its last handle was dropped.
    pub ref_count: u32,
    /// Where it was allocated: `file:line:column`.
    pub site: String,
}

impl std::fmt::Display for LeakRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "LEAK: native buffer #{} ({} bytes, capacity {}) was dropped with reference count {} \
             (a missing release()); allocated at {}. The pool took its memory back.",
            self.buffer_id, self.len, self.capacity, self.ref_count, self.site
        )
    }
}

/// At most this many records are kept; later leaks are only counted.
pub(super) const MAX_KEPT_RECORDS: usize = 4096;

/// The detector of one pool.
#[derive(Debug)]
pub(super) struct LeakDetector {
    level: LeakDetection,
    log: bool,
    pool_name: String,
    allocations: AtomicU64,
    tracked: AtomicU64,
    reported: AtomicU64,
    records: Mutex<Vec<LeakRecord>>,
}

impl LeakDetector {
    pub(super) fn new(level: LeakDetection, log: bool, pool_name: String) -> Self {
        LeakDetector {
            level,
            log,
            pool_name,
            allocations: AtomicU64::new(0),
            tracked: AtomicU64::new(0),
            reported: AtomicU64::new(0),
            records: Mutex::new(Vec::new()),
        }
    }

    pub(super) fn level(&self) -> LeakDetection {
        self.level
    }

    /// For a new buffer allocated at `site`: the site to remember if it is tracked.
    pub(super) fn track(
        &self,
        site: &'static Location<'static>,
    ) -> Option<&'static Location<'static>> {
        let tracked = match self.level {
            LeakDetection::Off => false,
            LeakDetection::Paranoid => true,
            LeakDetection::Sampled(n) => self
                .allocations
                .fetch_add(1, Ordering::Relaxed)
                .is_multiple_of(u64::from(n.max(1))),
        };
        if tracked {
            self.tracked.fetch_add(1, Ordering::Relaxed);
            Some(site)
        } else {
            None
        }
    }

    /// A tracked buffer leaked: record it and log it.
    pub(super) fn report(&self, record: LeakRecord) {
        self.reported.fetch_add(1, Ordering::Relaxed);
        if self.log {
            eprintln!("[native-pool {}] {record}", self.pool_name);
        }
        let mut records = self.records.lock().unwrap_or_else(|e| e.into_inner());
        if records.len() < MAX_KEPT_RECORDS {
            records.push(record);
        }
    }

    /// Buffers tracked so far.
    pub(super) fn tracked(&self) -> u64 {
        self.tracked.load(Ordering::Relaxed)
    }

    /// Leaks reported so far.
    pub(super) fn reported(&self) -> u64 {
        self.reported.load(Ordering::Relaxed)
    }

    /// The kept records.
    pub(super) fn records(&self) -> Vec<LeakRecord> {
        self.records
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}
