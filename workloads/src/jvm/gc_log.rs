//! HotSpot's unified GC log (`-Xlog:gc*,safepoint` with the `timenanos` decoration) read into
//! this project's records, so a JVM run is reported like one of ours.
//!
//! Three kinds of line count; every other line is skipped:
//!
//! - a **safepoint** line (`Safepoint "ZMarkStart", Time since last: … ns, Reaching
//!   safepoint: N ns, … Total: N ns`), logged when the world resumes: one pause, from the
//!   request to stop until the release, time to safepoint (*Reaching safepoint*) included, of
//!   any VM operation (every safepoint stops every Java thread, a GC's or not). It becomes a
//!   `PauseRecord` of the nearest of this project's kinds: ZGC's `ZMarkStart…`, `ZMarkEnd…`
//!   and `ZRelocateStart…` their namesakes, every other operation (G1's evacuations, remark
//!   and cleanup, full collections, non-GC operations) `Pause Full`, a pause that does its
//!   work with the world stopped;
//! - a ZGC **stall** line (`Allocation Stall (mutator-0) 12.345ms`, `Relocation Stall (…)
//!   …ms`), logged when the thread goes on: a thread waited for memory (or for a page being
//!   relocated). It becomes a `StallRecord` of that thread (the twins name their threads as
//!   the Rust harness does);
//! - any line of a collection, `GC(n) …`: the first and last such line of each `n` bound one
//!   GC (a ZGC cycle; a G1 young, mixed or full collection, or a concurrent mark cycle; a
//!   Parallel or Serial collection), which becomes a `CycleRecord` with the cause in the
//!   title's last parentheses (ZGC's causes are this project's: `Warmup`, `Allocation Rate`,
//!   `Allocation Stall`, `Proactive`, …) and the heap before and after where the closing line
//!   says `A->B`.
//!
//! Times come from the `timenanos` decoration (`[37922681143097ns]`), which is
//! `System.nanoTime()`: the clock the twins report their measured window on.

use gc_runtime::stats::{CycleRecord, GcCause, GcStats, PauseKind, PauseRecord, StallRecord};
use std::collections::BTreeMap;

/// The `-Xlog` decorations the parser needs (`timenanos`) and the ones that make the file
/// readable for people (`uptime`, `level`, `tags`).
pub const DECORATIONS: &str = "uptime,timenanos,level,tags";

/// One safepoint: a pause as the program felt it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JvmPause {
    /// The VM operation (`ZMarkStart`, `G1CollectForAllocation`, …).
    pub operation: String,
    /// The collection it belongs to: the `GC(n)` of the last line naming a pause before it
    /// (HotSpot logs `GC(n) Pause …` just before the safepoint ends); `None` for a safepoint
    /// of no collection.
    pub gc: Option<u64>,
    /// Clock (`System.nanoTime()`) when the world resumed.
    pub end_ns: u64,
    /// Reaching safepoint: from the request to stop until every thread had stopped.
    pub time_to_safepoint_ns: u64,
    /// The whole safepoint (reaching, cleanup, at and leaving safepoint).
    pub total_ns: u64,
}

/// What a stalled thread waited for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StallKind {
    /// ZGC's allocation stall: no free memory until a cycle frees some.
    Allocation,
    /// ZGC's relocation stall: an object's page was being relocated and no memory was left
    /// to copy it.
    Relocation,
}

/// One ZGC stall.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JvmStall {
    pub kind: StallKind,
    pub thread: String,
    /// Clock when the thread went on.
    pub end_ns: u64,
    pub duration_ns: u64,
}

/// One collection, `GC(n)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JvmCycle {
    pub gc: u64,
    /// Its first line after `GC(n) ` (`Garbage Collection (Warmup)`, `Pause Young (Normal)
    /// (G1 Evacuation Pause)`, `Concurrent Mark Cycle`, …).
    pub title: String,
    /// Clock of its first and last line.
    pub start_ns: u64,
    pub end_ns: u64,
    /// Heap in use before and after, from the `A->B` of its closing line, if it has one.
    pub heap_before: Option<u64>,
    pub heap_after: Option<u64>,
}

impl JvmCycle {
    /// The cause: the title's last parenthesized part (`Warmup`, `G1 Evacuation Pause`), or
    /// the title when it has none (`Concurrent Mark Cycle`).
    pub fn cause(&self) -> &str {
        let t = self.title.trim_end();
        match (t.ends_with(')'), t.rfind('(')) {
            (true, Some(open)) => &t[open + 1..t.len() - 1],
            _ => t,
        }
    }
}

/// A parsed log.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JvmLog {
    /// Clock of the first decorated line (the JVM's start, near enough).
    pub first_ns: Option<u64>,
    pub pauses: Vec<JvmPause>,
    pub stalls: Vec<JvmStall>,
    /// By `GC(n)`, in order.
    pub cycles: Vec<JvmCycle>,
}

/// A line's decorations (without brackets) and its message.
fn split_line(line: &str) -> (Vec<&str>, &str) {
    let mut decorations = Vec::new();
    let mut rest = line;
    while let Some(tail) = rest.strip_prefix('[') {
        match tail.find(']') {
            Some(close) => {
                decorations.push(tail[..close].trim());
                rest = &tail[close + 1..];
            }
            None => break,
        }
    }
    (decorations, rest.trim())
}

/// The `timenanos` decoration: digits followed by `ns`.
fn clock(decorations: &[&str]) -> Option<u64> {
    decorations.iter().find_map(|d| {
        let digits = d.strip_suffix("ns")?;
        (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
            .then(|| digits.parse().ok())?
    })
}

/// The number after `key` up to the next space (`Total: 4078827 ns` → 4078827).
fn number_after(message: &str, key: &str) -> Option<u64> {
    let at = message.find(key)? + key.len();
    message[at..].split_whitespace().next()?.parse().ok()
}

/// `GC(12)` → 12, and the text after `GC(12) `.
fn gc_id(message: &str) -> Option<(u64, &str)> {
    let at = message.find("GC(")?;
    let tail = &message[at + 3..];
    let close = tail.find(')')?;
    let id = tail[..close].parse().ok()?;
    Some((id, tail[close + 1..].trim_start()))
}

/// `12.345ms` → nanoseconds.
fn millis(text: &str) -> Option<u64> {
    let ms: f64 = text.strip_suffix("ms")?.parse().ok()?;
    (ms >= 0.0).then(|| (ms * 1e6).round() as u64)
}

/// `156M(61%)` or `12M` → bytes.
fn size(text: &str) -> Option<u64> {
    let t = text.split('(').next()?.trim();
    let (digits, unit) = t.split_at(t.len().checked_sub(1)?);
    let n: f64 = digits.parse().ok()?;
    let mult = match unit {
        "B" => 1u64,
        "K" => 1 << 10,
        "M" => 1 << 20,
        "G" => 1 << 30,
        "T" => 1 << 40,
        _ => return None,
    };
    Some((n * mult as f64) as u64)
}

/// The `A->B` of a collection's closing line.
fn heap_change(text: &str) -> Option<(u64, u64)> {
    let arrow = text.find("->")?;
    let before = text[..arrow].rsplit(' ').next()?;
    let after = text[arrow + 2..].split(' ').next()?;
    Some((size(before)?, size(after)?))
}

/// A stall line's kind, thread and duration.
fn stall(message: &str) -> Option<(StallKind, String, u64)> {
    let (kind, at) = [
        (StallKind::Allocation, "Allocation Stall ("),
        (StallKind::Relocation, "Relocation Stall ("),
    ]
    .into_iter()
    .find_map(|(k, key)| message.find(key).map(|at| (k, at + key.len())))?;
    let tail = &message[at..];
    let close = tail.rfind(')')?;
    let duration = millis(tail[close + 1..].trim())?;
    Some((kind, tail[..close].to_string(), duration))
}

/// Read a whole log. Lines without the `timenanos` decoration are skipped; a log in which no
/// line has it is an error (the run's `-Xlog` lacked the decoration).
pub fn parse(text: &str) -> Result<JvmLog, String> {
    let mut log = JvmLog::default();
    let mut cycles: BTreeMap<u64, JvmCycle> = BTreeMap::new();
    let mut pause_gc = None;
    for line in text.lines() {
        let (decorations, message) = split_line(line);
        let Some(now) = clock(&decorations) else {
            continue;
        };
        log.first_ns.get_or_insert(now);
        if let Some(rest) = message.strip_prefix("Safepoint \"") {
            let Some(close) = rest.find('"') else {
                continue;
            };
            let (Some(tts), Some(total)) = (
                number_after(message, "Reaching safepoint: "),
                number_after(message, "Total: "),
            ) else {
                continue;
            };
            log.pauses.push(JvmPause {
                operation: rest[..close].to_string(),
                gc: pause_gc.take(),
                end_ns: now,
                time_to_safepoint_ns: tts.min(total),
                total_ns: total,
            });
            continue;
        }
        if let Some((kind, thread, duration_ns)) = stall(message) {
            log.stalls.push(JvmStall {
                kind,
                thread,
                end_ns: now,
                duration_ns,
            });
            continue;
        }
        if let Some((id, text)) = gc_id(message) {
            if text.contains("Pause") {
                pause_gc = Some(id);
            }
            let c = cycles.entry(id).or_insert_with(|| JvmCycle {
                gc: id,
                title: text.to_string(),
                start_ns: now,
                end_ns: now,
                heap_before: None,
                heap_after: None,
            });
            c.end_ns = now;
            // The closing line repeats the title and adds the heap change.
            if text.starts_with(c.title.as_str()) {
                if let Some((before, after)) = heap_change(&text[c.title.len()..]) {
                    c.heap_before = Some(before);
                    c.heap_after = Some(after);
                }
            }
        }
    }
    if log.first_ns.is_none() && !text.trim().is_empty() {
        return Err(
            "the GC log has no line with the timenanos decoration ([123456789ns])".to_string(),
        );
    }
    log.cycles = cycles.into_values().collect();
    Ok(log)
}

/// The pause kind of a VM operation (see the module documentation).
pub fn pause_kind(operation: &str) -> PauseKind {
    if operation.starts_with("ZMarkStart") {
        PauseKind::MarkStart
    } else if operation.starts_with("ZMarkEnd") {
        PauseKind::MarkEnd
    } else if operation.starts_with("ZRelocateStart") {
        PauseKind::RelocateStart
    } else {
        PauseKind::Full
    }
}

impl JvmLog {
    /// The log as this project's records, times counted from the clock value `origin_ns`
    /// (the twin's measured window is placed on the same base by the caller).
    pub fn to_gc_stats(&self, origin_ns: u64, heap_bytes: u64) -> GcStats {
        let at = |ns: u64| ns.saturating_sub(origin_ns);
        GcStats {
            pauses: self
                .pauses
                .iter()
                .map(|p| PauseRecord {
                    kind: pause_kind(&p.operation),
                    cycle: p.gc.unwrap_or(0),
                    start_at_ns: at(p.end_ns.saturating_sub(p.total_ns)),
                    time_to_safepoint_ns: p.time_to_safepoint_ns,
                    at_safepoint_ns: p.total_ns - p.time_to_safepoint_ns,
                    total_ns: p.total_ns,
                    time_to_safepoint_cpu_wait_ns: None,
                    work_items: 0,
                    verify_ns: 0,
                })
                .collect(),
            stalls: self
                .stalls
                .iter()
                .map(|s| StallRecord {
                    thread: s.thread.clone(),
                    start_at_ns: at(s.end_ns.saturating_sub(s.duration_ns)),
                    duration_ns: s.duration_ns,
                    failed: false,
                })
                .collect(),
            cycles: self
                .cycles
                .iter()
                .map(|c| CycleRecord {
                    cycle: c.gc,
                    cause: GcCause::from_name(c.cause()),
                    start_at_ns: at(c.start_ns),
                    duration_ns: c.end_ns - c.start_ns,
                    heap_before: c.heap_before.unwrap_or(0),
                    heap_after: c.heap_after.unwrap_or(0),
                    heap_capacity: heap_bytes,
                    ..CycleRecord::default()
                })
                .collect(),
            ..GcStats::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_splits_into_decorations_and_message() {
        let (d, m) = split_line(
            "[0.414s][37922681143097ns][info][safepoint   ] Safepoint \"ZMarkStart\", x",
        );
        assert_eq!(d, ["0.414s", "37922681143097ns", "info", "safepoint"]);
        assert_eq!(m, "Safepoint \"ZMarkStart\", x");
        assert_eq!(clock(&d), Some(37_922_681_143_097));
        assert_eq!(clock(&["0.414s", "info"]), None);
    }

    #[test]
    fn sizes_stalls_and_causes() {
        assert_eq!(size("156M(61%)"), Some(156 << 20));
        assert_eq!(size("12K"), Some(12 << 10));
        assert_eq!(size("x"), None);
        assert_eq!(
            heap_change(" 12M->11M(256M) 45.728ms"),
            Some((12 << 20, 11 << 20))
        );
        assert_eq!(
            stall("Allocation Stall (mutator-0) 692.246ms"),
            Some((StallKind::Allocation, "mutator-0".into(), 692_246_000))
        );
        assert_eq!(
            stall("Relocation Stall (a (b)) 4.110ms"),
            Some((StallKind::Relocation, "a (b)".into(), 4_110_000))
        );
        assert_eq!(
            stall("GC(0) Y: Allocation Stalls:          0                0"),
            None
        );
        let c = |t: &str| JvmCycle {
            gc: 0,
            title: t.into(),
            start_ns: 0,
            end_ns: 0,
            heap_before: None,
            heap_after: None,
        };
        assert_eq!(c("Garbage Collection (Warmup)").cause(), "Warmup");
        assert_eq!(
            c("Pause Young (Normal) (G1 Evacuation Pause)").cause(),
            "G1 Evacuation Pause"
        );
        assert_eq!(c("Concurrent Mark Cycle").cause(), "Concurrent Mark Cycle");
        assert_eq!(pause_kind("ZMarkStartYoungAndOld"), PauseKind::MarkStart);
        assert_eq!(pause_kind("ZRelocateStartOld"), PauseKind::RelocateStart);
        assert_eq!(pause_kind("G1CollectForAllocation"), PauseKind::Full);
    }

    #[test]
    fn a_log_without_timenanos_is_refused() {
        let e = parse("[0.414s][info][gc] GC(0) Pause Young 1M->1M(8M) 1.0ms\n").unwrap_err();
        assert!(e.contains("timenanos"), "{e}");
        assert_eq!(parse("").unwrap(), JvmLog::default());
    }
}
