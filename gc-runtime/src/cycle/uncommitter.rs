//! Giving memory back (ZGC's `ZUncommitter`): physical memory the heap committed for a peak it
//! no longer needs is uncommitted after a delay (ZGC's `ZUncommitDelay`), so a program that
//! once needed a large heap does not keep it committed forever, while one whose usage swings
//! does not pay for committing the same memory again and again.
//!
//! The rule: between cycles, at each director tick, the driver reports the bytes in pages in
//! use. The uncommitter keeps the peak of that over the last `delay`, in a few buckets; once
//! the heap has lived for a whole `delay`, committed memory above that peak (rounded up to
//! whole granules, and never below the initial heap) is uncommitted: the page cache is
//! flushed and free physical memory beyond the peak is punched out of the backing file.

use crate::context::PageRegistry;
use gc_core::GRANULE_SIZE;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// Buckets the peak is kept in (the window slides by one bucket at a time).
const BUCKETS: u32 = 16;

pub(super) struct Uncommitter {
    delay: Duration,
    bucket: Duration,
    /// (start of bucket, peak bytes in use during it), oldest first.
    peaks: VecDeque<(Instant, u64)>,
    born: Instant,
}

/// What one uncommit did.
pub(super) struct Uncommit {
    pub(super) bytes: u64,
    pub(super) committed_before: u64,
    pub(super) committed_after: u64,
}

impl Uncommitter {
    pub(super) fn new(delay: Duration) -> Self {
        Uncommitter {
            delay,
            bucket: (delay / BUCKETS).max(Duration::from_millis(1)),
            peaks: VecDeque::new(),
            born: Instant::now(),
        }
    }

    /// Record the bytes in use now and uncommit what the last `delay` did not need.
    /// Returns what was uncommitted, if anything.
    pub(super) fn tick(&mut self, pages: &PageRegistry) -> std::io::Result<Option<Uncommit>> {
        let now = Instant::now();
        let used = pages.used();
        match self.peaks.back_mut() {
            Some((start, peak)) if now.duration_since(*start) < self.bucket => {
                *peak = (*peak).max(used)
            }
            _ => self.peaks.push_back((now, used)),
        }
        while self
            .peaks
            .front()
            .is_some_and(|(start, _)| now.duration_since(*start) > self.delay + self.bucket)
        {
            self.peaks.pop_front();
        }
        if now.duration_since(self.born) < self.delay {
            return Ok(None);
        }
        let peak = self.peaks.iter().map(|(_, p)| *p).max().unwrap_or(used);
        let keep = peak.div_ceil(GRANULE_SIZE) * GRANULE_SIZE;
        let before = pages.usage().committed;
        if before <= keep + GRANULE_SIZE {
            return Ok(None);
        }
        let bytes = pages.memory().uncommit(keep)?;
        Ok((bytes > 0).then(|| Uncommit {
            bytes,
            committed_before: before,
            committed_after: pages.usage().committed,
        }))
    }
}
