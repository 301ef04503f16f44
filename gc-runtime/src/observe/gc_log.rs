//! The `-Xlog:gc`-style log, on stderr: one line per cycle and allocation stall (for heap or
//! for direct memory) at level `gc`, plus one per phase and pause at level `phases`, plus one
//! per pacing delay and slow page allocation at level `debug`. Turn it on with the heap's
//! `log` setting, or with the `ZRS_GC_LOG` environment variable in a program that builds its
//! configuration with `HeapConfig::from_env` (the sweep and lox do). Only the event sink
//! (`event_sink`) writes it, with the time base it owns.
//!
//! ```text
//! [1.234s][info][gc] GC(3) Garbage Collection (Allocation Rate) 512M(25%)->128M(6%)
//! [1.230s][info][gc,phases] GC(3) Pause Mark Start 0.021ms
//! [2.001s][info][gc] Allocation Stall (main) 12.345ms
//! [0.000s][info][gc,init] Safepoint barrier: membarrier
//! [2.050s][info][gc] Direct Memory Stall (main) 3.210ms
//! [2.107s][debug][gc,pacing] Pacing (main) 0.750ms
//! [305.0s][info][gc,heap] Uncommitted 192M (committed 256M->64M)
//! ```

use crate::config::LogLevel;
use std::io::Write;
use std::time::{Duration, Instant};

pub(super) struct GcLog {
    level: LogLevel,
    /// The lines written, kept for the crate's unit tests.
    #[cfg(test)]
    pub(super) written: parking_lot::Mutex<Vec<String>>,
}

fn mb(bytes: u64) -> u64 {
    bytes >> 20
}

fn pct(part: u64, whole: u64) -> u64 {
    (part * 100).checked_div(whole).unwrap_or(0)
}

impl GcLog {
    pub(super) fn new(level: LogLevel) -> Self {
        GcLog {
            level,
            #[cfg(test)]
            written: Default::default(),
        }
    }

    fn line(&self, start: Instant, tags: &str, msg: std::fmt::Arguments<'_>) {
        self.line_at(start, "info", tags, msg);
    }

    fn line_at(&self, start: Instant, level: &str, tags: &str, msg: std::fmt::Arguments<'_>) {
        let t = start.elapsed().as_secs_f64();
        #[cfg(test)]
        self.written
            .lock()
            .push(format!("[{t:.3}s][{level}][{tags}] {msg}"));
        let mut e = std::io::stderr().lock();
        let _ = writeln!(e, "[{t:.3}s][{level}][{tags}] {msg}");
    }

    pub(super) fn phase(&self, start: Instant, cycle: u64, name: &str, d: Duration) {
        if self.level >= LogLevel::Phases {
            self.line(
                start,
                "gc,phases",
                format_args!("GC({cycle}) {name} {:.3}ms", d.as_secs_f64() * 1e3),
            );
        }
    }

    pub(super) fn cycle(
        &self,
        start: Instant,
        cycle: u64,
        cause: &str,
        before: u64,
        after: u64,
        cap: u64,
    ) {
        if self.level >= LogLevel::Gc {
            self.line(
                start,
                "gc",
                format_args!(
                    "GC({cycle}) Garbage Collection ({cause}) {}M({}%)->{}M({}%)",
                    mb(before),
                    pct(before, cap),
                    mb(after),
                    pct(after, cap)
                ),
            );
        }
    }

    pub(super) fn stall(&self, start: Instant, thread: &str, d: Duration) {
        if self.level >= LogLevel::Gc {
            self.line(
                start,
                "gc",
                format_args!(
                    "{} ({thread}) {:.3}ms",
                    crate::GcCause::AllocationStall,
                    d.as_secs_f64() * 1e3
                ),
            );
        }
    }

    /// A wait for "Direct Memory" cycles at the direct-memory limit.
    pub(super) fn direct_memory_stall(&self, start: Instant, thread: &str, d: Duration) {
        if self.level >= LogLevel::Gc {
            self.line(
                start,
                "gc",
                format_args!(
                    "Direct Memory Stall ({thread}) {:.3}ms",
                    d.as_secs_f64() * 1e3
                ),
            );
        }
    }

    /// A setting the heap chose when it was created (HotSpot's `gc,init` lines).
    pub(super) fn init(&self, start: Instant, msg: std::fmt::Arguments<'_>) {
        if self.level >= LogLevel::Gc {
            self.line(start, "gc,init", msg);
        }
    }

    /// A heap event between cycles (memory given back to the operating system).
    pub(super) fn heap(&self, start: Instant, msg: std::fmt::Arguments<'_>) {
        if self.level >= LogLevel::Gc {
            self.line(start, "gc,heap", msg);
        }
    }

    /// A pacing delay `d` imposed on `thread` (see `pacer`), `beyond` of it past the floor.
    pub(super) fn pacing(&self, start: Instant, thread: &str, d: Duration, beyond: Duration) {
        if self.level >= LogLevel::Debug {
            let ms = |d: Duration| d.as_secs_f64() * 1e3;
            if beyond.is_zero() {
                self.line_at(
                    start,
                    "debug",
                    "gc,pacing",
                    format_args!("Pacing ({thread}) {:.3}ms", ms(d)),
                );
            } else {
                self.line_at(
                    start,
                    "debug",
                    "gc,pacing",
                    format_args!(
                        "Pacing ({thread}) {:.3}ms, {:.3}ms beyond the floor (free memory low)",
                        ms(d),
                        ms(beyond)
                    ),
                );
            }
        }
    }

    pub(super) fn page_allocation(&self, start: Instant, thread: &str, d: Duration) {
        if self.level >= LogLevel::Debug {
            self.line_at(
                start,
                "debug",
                "gc,alloc",
                format_args!("Page Allocation ({thread}) {:.3}ms", d.as_secs_f64() * 1e3),
            );
        }
    }

    /// A pause that waited longer than the safepoint timeout for its mutators, and the ones
    /// still running then (HotSpot's `safepoint` warning of `-XX:+SafepointTimeout`).
    pub(super) fn safepoint_timeout(
        &self,
        start: Instant,
        cycle: u64,
        pause: &str,
        ttsp: Duration,
        stragglers: &str,
    ) {
        if self.level >= LogLevel::Gc {
            self.line_at(
                start,
                "warning",
                "gc,safepoint",
                format_args!(
                    "GC({cycle}) {pause}: {:.3}ms to safepoint; still running at the timeout: \
                     {stragglers}",
                    ttsp.as_secs_f64() * 1e3
                ),
            );
        }
    }

    pub(super) fn info(&self, start: Instant, cycle: u64, msg: &str) {
        if self.level >= LogLevel::Phases {
            self.line(start, "gc,phases", format_args!("GC({cycle}) {msg}"));
        }
    }
}
