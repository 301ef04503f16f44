//! `trace.json`: the runs as a Chrome Trace Event file, which Perfetto (ui.perfetto.dev) and
//! `chrome://tracing` open. Each run is a process (pid 1, 2, ... in table order) named after it,
//! with six thread tracks: "GC cycles" (one slice per cycle, with cause and heap figures),
//! "GC phases" (the cycle's phases, pauses included), "Pauses" (every pause, with time to
//! safepoint), "Allocation stalls", "Pacing delays" and "Page allocations" (slow ones, memory
//! committed and mapped; each with the thread that waited). A
//! global instant event marks the start of the measured phase. Times are the heap's clock: `ts` and `dur` in microseconds (fractional, so
//! nanoseconds survive), as the format requires.
//!
//! Layout: `{"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}}` with
//! `"ph": "M"` metadata events (`process_name`, `thread_name`, sort indices) and `"ph": "X"`
//! complete events.

use crate::run_result::RunResult;
use serde_json::{json, Value};
use std::path::Path;

/// Thread id of the "GC cycles" track.
pub const TID_CYCLES: u64 = 1;
/// Thread id of the "GC phases" track.
pub const TID_PHASES: u64 = 2;
/// Thread id of the "Pauses" track.
pub const TID_PAUSES: u64 = 3;
/// Thread id of the "Allocation stalls" track.
pub const TID_STALLS: u64 = 4;
/// Thread id of the "Pacing delays" track.
pub const TID_PACING: u64 = 5;
/// Thread id of the "Page allocations" track (slow ones: memory committed and mapped).
pub const TID_PAGE_ALLOCATIONS: u64 = 6;

const TRACKS: [(u64, &str); 6] = [
    (TID_CYCLES, "GC cycles"),
    (TID_PHASES, "GC phases"),
    (TID_PAUSES, "Pauses"),
    (TID_STALLS, "Allocation stalls"),
    (TID_PACING, "Pacing delays"),
    (TID_PAGE_ALLOCATIONS, "Page allocations"),
];

fn us(ns: u64) -> f64 {
    ns as f64 / 1e3
}

fn complete(
    name: &str,
    cat: &str,
    pid: u64,
    tid: u64,
    at_ns: u64,
    dur_ns: u64,
    args: Value,
) -> Value {
    json!({
        "name": name,
        "cat": cat,
        "ph": "X",
        "ts": us(at_ns),
        "dur": us(dur_ns),
        "pid": pid,
        "tid": tid,
        "args": args,
    })
}

fn metadata(name: &str, pid: u64, tid: u64, args: Value) -> Value {
    json!({"name": name, "ph": "M", "pid": pid, "tid": tid, "args": args})
}

/// The trace of `results` (in table order: by heap, then mode).
pub fn chrome_trace(results: &[RunResult]) -> Value {
    let mut runs: Vec<&RunResult> = results.iter().collect();
    runs.sort_by_key(|r| (r.config.heap_bytes, r.config.jvm.is_some(), r.config.mode));
    let mut events = Vec::new();
    for (i, r) in runs.iter().enumerate() {
        let pid = i as u64 + 1;
        let name = format!("{} {}", r.config.workload, r.label());
        events.push(metadata("process_name", pid, 0, json!({ "name": name })));
        events.push(metadata(
            "process_sort_index",
            pid,
            0,
            json!({ "sort_index": pid }),
        ));
        for (tid, track) in TRACKS {
            events.push(metadata("thread_name", pid, tid, json!({ "name": track })));
            events.push(metadata(
                "thread_sort_index",
                pid,
                tid,
                json!({ "sort_index": tid }),
            ));
        }
        events.push(json!({
            "name": "measured phase starts",
            "ph": "i",
            "s": "p",
            "ts": us(r.measure_start_at_ns),
            "pid": pid,
            "tid": TID_CYCLES,
        }));
        for c in &r.gc.cycles {
            events.push(complete(
                &format!("GC({}) {}", c.cycle, c.cause),
                "gc",
                pid,
                TID_CYCLES,
                c.start_at_ns,
                c.duration_ns,
                json!({
                    "cycle": c.cycle,
                    "cause": c.cause,
                    "heap_before": c.heap_before,
                    "heap_after": c.heap_after,
                    "heap_capacity": c.heap_capacity,
                    "live_bytes": c.live_bytes,
                    "bytes_relocated": c.bytes_relocated,
                    "pages_relocated": c.pages_relocated,
                    "pages_freed_empty": c.pages_freed_empty,
                    "gc_cpu_ms": c.gc_cpu_ns as f64 / 1e6,
                    "mark_end_retries": c.mark_end_retries,
                    "phases_on_idle_workers": c.phases_on_idle_workers,
                    "idle_class_starvations": c.idle_class_starvations,
                    "idle_class_raised": c.idle_class_raised,
                }),
            ));
            for ph in &c.phases {
                events.push(complete(
                    ph.name.name(),
                    "gc_phase",
                    pid,
                    TID_PHASES,
                    ph.start_at_ns,
                    ph.duration_ns,
                    json!({ "cycle": c.cycle }),
                ));
            }
        }
        for p in &r.gc.pauses {
            let mut args = json!({
                "cycle": p.cycle,
                "time_to_safepoint_us": us(p.time_to_safepoint_ns),
                "at_safepoint_us": us(p.at_safepoint_ns),
            });
            if let Some(w) = p.time_to_safepoint_cpu_wait_ns {
                args["time_to_safepoint_cpu_wait_us"] = json!(us(w));
            }
            events.push(complete(
                p.kind.name(),
                "pause",
                pid,
                TID_PAUSES,
                p.start_at_ns,
                p.total_ns,
                args,
            ));
        }
        for s in &r.gc.stalls {
            events.push(complete(
                "Allocation Stall",
                "stall",
                pid,
                TID_STALLS,
                s.start_at_ns,
                s.duration_ns,
                json!({ "thread": s.thread, "failed": s.failed }),
            ));
        }
        for d in &r.gc.pacing {
            events.push(complete(
                "Pacing Delay",
                "pacing",
                pid,
                TID_PACING,
                d.start_at_ns,
                d.duration_ns,
                // The event lasts as long as the thread was held; the delay the pacer asked
                // for (0 in results written before it was recorded) is an argument.
                json!({ "thread": d.thread, "asked_us": us(d.imposed_ns) }),
            ));
        }
        for a in &r.gc.page_allocations {
            events.push(complete(
                "Page Allocation",
                "page_allocation",
                pid,
                TID_PAGE_ALLOCATIONS,
                a.start_at_ns,
                a.duration_ns,
                json!({ "thread": a.thread }),
            ));
        }
    }
    json!({
        "traceEvents": events,
        "displayTimeUnit": "ms",
        "otherData": {
            "generator": format!("pause-sweep {}", env!("CARGO_PKG_VERSION")),
            "clock": "nanoseconds since each run's heap was created, shown in µs",
        },
    })
}

/// Write `trace.json` to `path`.
pub fn write_trace_json(path: &Path, results: &[RunResult]) -> std::io::Result<()> {
    let text = serde_json::to_string(&chrome_trace(results)).expect("a JSON value serializes");
    std::fs::write(path, text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run_result::Mode;
    use crate::test_support::sample_result;
    use gc_runtime::stats::{PacingRecord, PageAllocationRecord, StallRecord};

    /// A µs value in the JSON equals `ns` (to float-parsing precision).
    fn close(us_value: &Value, ns: u64) -> bool {
        let got = us_value.as_f64().unwrap() * 1e3;
        (got - ns as f64).abs() <= 1e-6 * (ns as f64).max(1.0)
    }

    #[test]
    fn trace_has_named_tracks_and_one_event_per_pause() {
        let mut conc = sample_result(Mode::Concurrent, 1 << 30, &[100_000, 250_500, 150_000]);
        conc.gc.stalls.push(StallRecord {
            thread: "mutator-0".into(),
            start_at_ns: 1_234_567,
            duration_ns: 89_001,
            failed: true,
        });
        conc.gc.pacing.push(PacingRecord {
            thread: "mutator-0".into(),
            start_at_ns: 2_345_678,
            duration_ns: 12_345,
            imposed_ns: 10_000,
            beyond_floor_ns: 0,
        });
        conc.gc.page_allocations.push(PageAllocationRecord {
            thread: "mutator-0".into(),
            start_at_ns: 3_456_789,
            duration_ns: 1_500_000,
        });
        let stw = sample_result(Mode::Stw, 256 << 20, &[40_000_000]);
        let results = [conc.clone(), stw.clone()];
        let text = serde_json::to_string(&chrome_trace(&results)).unwrap();
        let v: Value = serde_json::from_str(&text).unwrap();
        let events = v["traceEvents"].as_array().unwrap();

        for e in events {
            let ph = e["ph"].as_str().unwrap();
            assert!(
                e["pid"].is_u64() && e["tid"].is_u64() && e["name"].is_string(),
                "{e}"
            );
            match ph {
                "X" => assert!(
                    e["ts"].is_f64() && e["dur"].is_f64() && e["cat"].is_string(),
                    "{e}"
                ),
                "M" => assert!(e["args"]["name"].is_string() || e["args"]["sort_index"].is_u64()),
                "i" => assert!(e["ts"].is_f64()),
                other => panic!("unexpected phase {other}"),
            }
        }
        let named = |what: &str, pid: u64| -> Vec<String> {
            events
                .iter()
                .filter(|e| e["ph"] == "M" && e["name"] == what && e["pid"] == pid)
                .map(|e| e["args"]["name"].as_str().unwrap().to_string())
                .collect()
        };
        // Table order: stw 256M is pid 1, concurrent 1G pid 2.
        assert_eq!(named("process_name", 1), ["heap-churn stw 256M"]);
        assert_eq!(named("process_name", 2), ["heap-churn concurrent 1G"]);
        assert_eq!(
            named("thread_name", 2),
            [
                "GC cycles",
                "GC phases",
                "Pauses",
                "Allocation stalls",
                "Pacing delays",
                "Page allocations",
            ]
        );

        // Pause events match the input pauses exactly (ns → µs).
        for (pid, run) in [(1, &stw), (2, &conc)] {
            let pauses: Vec<&Value> = events
                .iter()
                .filter(|e| e["ph"] == "X" && e["pid"] == pid && e["tid"] == TID_PAUSES)
                .collect();
            assert_eq!(pauses.len(), run.gc.pauses.len());
            for (e, p) in pauses.iter().zip(&run.gc.pauses) {
                assert_eq!(e["name"], p.kind.name());
                assert!(close(&e["ts"], p.start_at_ns), "{e}");
                assert!(close(&e["dur"], p.total_ns), "{e}");
                assert_eq!(e["args"]["cycle"], p.cycle);
                assert!(close(
                    &e["args"]["time_to_safepoint_us"],
                    p.time_to_safepoint_ns
                ));
                let w = p
                    .time_to_safepoint_cpu_wait_ns
                    .expect("sample pauses have it");
                assert!(close(&e["args"]["time_to_safepoint_cpu_wait_us"], w), "{e}");
            }
        }
        let stalls: Vec<&Value> = events
            .iter()
            .filter(|e| e["tid"] == TID_STALLS && e["ph"] == "X")
            .collect();
        assert_eq!(stalls.len(), 1);
        assert_eq!(stalls[0]["pid"], 2);
        assert!(close(&stalls[0]["ts"], 1_234_567));
        assert!(close(&stalls[0]["dur"], 89_001));
        assert_eq!(stalls[0]["args"]["failed"], true);
        let pacing: Vec<&Value> = events
            .iter()
            .filter(|e| e["tid"] == TID_PACING && e["ph"] == "X")
            .collect();
        assert_eq!(pacing.len(), 1);
        assert_eq!(
            (&pacing[0]["pid"], &pacing[0]["name"]),
            (&json!(2), &json!("Pacing Delay"))
        );
        assert!(close(&pacing[0]["ts"], 2_345_678));
        assert!(close(&pacing[0]["dur"], 12_345));
        assert_eq!(pacing[0]["args"]["thread"], "mutator-0");
        assert!(close(&pacing[0]["args"]["asked_us"], 10_000));
        let pages: Vec<&Value> = events
            .iter()
            .filter(|e| e["tid"] == TID_PAGE_ALLOCATIONS && e["ph"] == "X")
            .collect();
        assert_eq!(pages.len(), 1);
        assert_eq!(pages[0]["name"], "Page Allocation");
        assert!(close(&pages[0]["dur"], 1_500_000));

        // Cycles and their phases.
        let cycles = events
            .iter()
            .filter(|e| e["ph"] == "X" && e["pid"] == 2 && e["tid"] == TID_CYCLES)
            .count();
        assert_eq!(cycles, conc.gc.cycles.len());
        let phases = events
            .iter()
            .filter(|e| e["ph"] == "X" && e["pid"] == 2 && e["tid"] == TID_PHASES)
            .count();
        assert_eq!(
            phases,
            conc.gc.cycles.iter().map(|c| c.phases.len()).sum::<usize>()
        );
        assert!(phases > 0);
    }
}
