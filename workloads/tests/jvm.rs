//! Side by side with HotSpot (`--jvm`): the GC log parser on real log excerpts of JDK 17 and
//! JDK 25 (`tests/fixtures/jvm/`, captured on the development machine from the heap-churn
//! twin), the command line's checks before any run (unknown collectors, a missing JDK, a
//! collector the JDK lacks), and a smoke run of the twins that runs only where a JDK is
//! installed (it says why it skipped otherwise).

mod common;

use common::{pause_sweep, scratch, text};
use gc_runtime::stats::{GcCause, PauseKind};
use std::time::{Duration, Instant};
use workloads::jvm::gc_log::{self, StallKind};
use workloads::jvm::jdk::Jdk;
use workloads::jvm::JvmCollector;

/// Names this file's scratch directories.
const SUITE: &str = "jvm";

fn fixture(name: &str) -> gc_log::JvmLog {
    let path = format!("{}/tests/fixtures/jvm/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    gc_log::parse(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn jdk17_zgc_pauses_stalls_and_cycles() {
    let log = fixture("jdk17-zgc.log");
    let ops: Vec<&str> = log.pauses.iter().map(|p| p.operation.as_str()).collect();
    assert_eq!(ops, ["ZMarkStart", "ZMarkEnd", "ZRelocateStart"].repeat(2));
    // Safepoint "ZMarkStart", ... Reaching safepoint: 175470 ns, ... Total: 208428 ns
    let p = &log.pauses[0];
    assert_eq!(
        (p.gc, p.end_ns, p.time_to_safepoint_ns, p.total_ns),
        (Some(2), 37_923_478_515_209, 175_470, 208_428)
    );
    assert_eq!(log.pauses[3].gc, Some(3));
    let stalls: Vec<(StallKind, &str, u64)> = log
        .stalls
        .iter()
        .map(|s| (s.kind, s.thread.as_str(), s.duration_ns))
        .collect();
    assert_eq!(
        stalls,
        [
            (StallKind::Relocation, "mutator-0", 278_184_000),
            (StallKind::Relocation, "mutator-0", 4_110_000),
            (StallKind::Allocation, "mutator-0", 692_246_000),
            (StallKind::Allocation, "mutator-0", 469_785_000),
            (StallKind::Relocation, "mutator-0", 24_477_000),
        ]
    );
    let c = &log.cycles[0];
    assert_eq!(
        (c.gc, c.title.as_str(), c.cause()),
        (2, "Garbage Collection (Warmup)", "Warmup")
    );
    assert_eq!(
        (c.start_ns, c.end_ns),
        (37_923_478_223_015, 37_924_272_304_881)
    );
    assert_eq!(
        (c.heap_before, c.heap_after),
        (Some(244 << 20), Some(152 << 20))
    );
    assert_eq!(log.cycles[1].cause(), "Allocation Stall");

    // As this project's records: pauses start when the safepoint was requested.
    let origin = log.first_ns.unwrap();
    let gc = log.to_gc_stats(origin, 256 << 20);
    assert_eq!(gc.pauses[0].kind, PauseKind::MarkStart);
    assert_eq!(gc.pauses[1].kind, PauseKind::MarkEnd);
    assert_eq!(gc.pauses[2].kind, PauseKind::RelocateStart);
    assert_eq!(
        gc.pauses[0].start_at_ns,
        37_923_478_515_209 - 208_428 - origin
    );
    assert_eq!(gc.pauses[0].at_safepoint_ns, 208_428 - 175_470);
    assert_eq!(
        gc.stalls[2].start_at_ns,
        37_924_265_882_721 - 692_246_000 - origin
    );
    assert_eq!(gc.cycles[0].cause, GcCause::Warmup);
    assert_eq!(gc.cycles[1].cause, GcCause::AllocationStall);
    assert_eq!(
        gc.cycles[0].duration_ns,
        37_924_272_304_881 - 37_923_478_223_015
    );
}

#[test]
fn jdk17_g1_pauses_belong_to_their_collections() {
    let log = fixture("jdk17-g1.log");
    assert_eq!(log.stalls, []);
    let p: Vec<(&str, Option<u64>)> = log
        .pauses
        .iter()
        .map(|p| (p.operation.as_str(), p.gc))
        .collect();
    assert_eq!(
        p,
        [
            ("G1TryInitiateConcMark", Some(11)),
            ("G1CollectForAllocation", Some(13)),
            ("G1CollectForAllocation", Some(14)),
            ("G1CollectForAllocation", Some(15)),
            ("G1CollectForAllocation", Some(16)),
            ("G1CollectForAllocation", Some(17)),
            ("G1PauseRemark", Some(12)),
        ]
    );
    assert_eq!(
        (log.pauses[0].time_to_safepoint_ns, log.pauses[0].total_ns),
        (5_501_705, 51_748_801)
    );
    let cycles: Vec<(u64, &str)> = log.cycles.iter().map(|c| (c.gc, c.cause())).collect();
    assert_eq!(cycles[0], (11, "G1 Humongous Allocation"));
    assert_eq!(cycles[1], (12, "Concurrent Mark Cycle"));
    assert_eq!(cycles[2], (13, "G1 Evacuation Pause"));
    assert_eq!(log.cycles[0].heap_before, Some(135 << 20));
    // The mark cycle's Remark line carries a heap change, but not the cycle's own closing.
    assert_eq!(log.cycles[1].heap_before, None);
    let gc = log.to_gc_stats(log.first_ns.unwrap(), 256 << 20);
    assert!(gc.pauses.iter().all(|p| p.kind == PauseKind::Full));
    assert_eq!(
        gc.cycles[2].cause,
        GcCause::Explicit("G1 Evacuation Pause".into())
    );
}

#[test]
fn jdk25_generational_zgc_has_young_and_old_pauses() {
    let log = fixture("jdk25-genzgc.log");
    let p: Vec<(&str, Option<u64>)> = log
        .pauses
        .iter()
        .map(|p| (p.operation.as_str(), p.gc))
        .collect();
    assert_eq!(
        p,
        [
            ("ZRelocateStartYoung", Some(1)),
            ("ZMarkStartYoung", Some(2)),
            // Old-generation work of GC(1) interleaves with GC(2)'s.
            ("ZMarkEndOld", Some(1)),
            // Not a collection's: no pause line before it.
            ("CleanClassLoaderDataMetaspaces", None),
            ("ZMarkEndYoung", Some(2)),
            ("ZRelocateStartYoung", Some(2)),
        ]
    );
    // JDK 21+ adds "Leaving safepoint" and still ends with the total.
    // Safepoint "ZRelocateStartYoung", ... Reaching safepoint: 5318 ns, ... Total: 37256 ns
    assert_eq!(
        (log.pauses[0].time_to_safepoint_ns, log.pauses[0].total_ns),
        (5318, 37_256)
    );
    let kinds: Vec<PauseKind> = log
        .to_gc_stats(log.first_ns.unwrap(), 256 << 20)
        .pauses
        .iter()
        .map(|p| p.kind)
        .collect();
    use PauseKind::*;
    assert_eq!(
        kinds,
        [
            RelocateStart,
            MarkStart,
            MarkEnd,
            Full,
            MarkEnd,
            RelocateStart
        ]
    );
    let threads: Vec<&str> = log.stalls.iter().map(|s| s.thread.as_str()).collect();
    assert_eq!(
        threads,
        [
            "mutator-0",
            "main",
            "hiccup-meter",
            "mutator-0",
            "hiccup-meter",
            "mutator-0",
            "mutator-0"
        ]
    );
    assert_eq!(log.stalls[3].duration_ns, 433_589_000);
    let c = &log.cycles[1];
    assert_eq!(
        (c.gc, c.title.as_str(), c.cause()),
        (2, "Minor Collection (Allocation Stall)", "Allocation Stall")
    );
    assert_eq!(
        (c.heap_before, c.heap_after),
        (Some(256 << 20), Some(238 << 20))
    );
}

#[test]
fn jdk25_g1_full_collection_inside_one_safepoint() {
    let log = fixture("jdk25-g1.log");
    let last = log.pauses.last().unwrap();
    // GC(20)'s young collection failed and GC(21), a full collection, ran in the same
    // safepoint: one pause of 601 ms.
    assert_eq!(
        (last.operation.as_str(), last.gc),
        ("G1CollectForAllocation", Some(21))
    );
    assert_eq!(
        (last.time_to_safepoint_ns, last.total_ns),
        (158_234, 601_132_838)
    );
    assert_eq!(log.pauses[0].operation, "G1PauseRemark");
    let full = log.cycles.iter().find(|c| c.gc == 21).unwrap();
    assert_eq!(full.cause(), "G1 Compaction Pause");
    assert_eq!(
        (full.heap_before, full.heap_after),
        (Some(255 << 20), Some(135 << 20))
    );
    let failed = log.cycles.iter().find(|c| c.gc == 19).unwrap();
    assert_eq!(
        (failed.heap_before, failed.heap_after),
        (Some(248 << 20), Some(253 << 20))
    );
}

#[test]
fn unknown_collectors_are_refused_with_the_names() {
    let out = pause_sweep(&["--jvm", "ZGC,Shenandoah"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("Shenandoah"), "{err}");
    assert!(err.contains("ZGC, GenZGC, G1, Parallel, Serial"), "{err}");
    // --java means nothing without --jvm.
    let out = pause_sweep(&["--java", "/usr"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--jvm"), "{}", text(&out.stderr));
}

#[test]
fn a_missing_jdk_stops_the_sweep_before_any_run_and_says_how_to_get_one() {
    let dir = scratch(SUITE, "no-jdk");
    let t0 = Instant::now();
    let out = pause_sweep(&[
        "--jvm",
        "ZGC,G1",
        "--heaps",
        "256M,1G",
        "--java",
        "/nonexistent",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    for s in [
        "--java /nonexistent",
        "apt install openjdk-21-jdk-headless",
        "pip install install-jdk",
    ] {
        assert!(err.contains(s), "lacks {s}: {err}");
    }
    // No run started: no table, no results, and no 20 s run of this project's first.
    assert!(text(&out.stdout).is_empty(), "{}", text(&out.stdout));
    assert!(!dir.join("results.json").exists());
    assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
    // A workload without a twin is refused before a JDK is looked for.
    let out = pause_sweep(&[
        "--jvm",
        "G1",
        "--workload",
        "lru-cache",
        "--java",
        "/nonexistent",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("lru-cache has no Java twin"));
}

/// The JDK of the machine (JAVA_HOME, else java on PATH), or why there is none.
fn machine_jdk() -> Option<Jdk> {
    match Jdk::locate(None) {
        Ok(j) => Some(j),
        Err(e) => {
            println!("skipped: no JDK on this machine: {e}");
            None
        }
    }
}

#[test]
fn a_collector_the_jdk_lacks_is_named_with_those_it_has() {
    let Some(jdk) = machine_jdk() else { return };
    let lacking = JvmCollector::ALL
        .into_iter()
        .find(|c| c.flags(jdk.major).is_err());
    let Some(lacking) = lacking else {
        println!("skipped: JDK {} has every collector", jdk.major);
        return;
    };
    let java = jdk.java.to_str().unwrap();
    let out = pause_sweep(&["--jvm", lacking.name(), "--java", java]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains(&format!("--jvm {lacking}")), "{err}");
    assert!(err.contains("G1, Parallel, Serial"), "{err}");
}

#[test]
fn smoke_run_of_the_twins_under_the_jdk() {
    let Some(jdk) = machine_jdk() else { return };
    let zgc = if jdk.major >= 24 { "GenZGC" } else { "ZGC" };
    let dir = scratch(SUITE, "smoke");
    let d = dir.to_str().unwrap();
    let java = jdk.java.to_str().unwrap();
    let collectors = format!("{zgc},G1");
    let out = pause_sweep(&[
        "--jvm",
        &collectors,
        "--java",
        java,
        "--heaps",
        "128M",
        "--modes",
        "concurrent",
        "--duration",
        "2",
        "--min-cycles",
        "0",
        "--out",
        d,
    ]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let table = text(&out.stdout);
    let g1 = format!("| JDK {} G1 ", jdk.major);
    assert!(table.contains(&g1), "{table}");
    assert!(
        table.contains(&format!("| JDK {} {zgc} ", jdk.major)),
        "{table}"
    );
    assert!(table.contains("## JVM runs"), "{table}");
    assert!(table.contains("-XX:+UseG1GC"), "{table}");
    let log = dir.join(format!("gc-JDK-{}-G1-128M.log", jdk.major));
    assert!(log.is_file(), "{}", log.display());
    let runs = workloads::report::read_results_json(&dir.join("results.json")).unwrap();
    assert_eq!(runs.len(), 3);
    assert!(runs[0].config.jvm.is_none());
    for r in &runs[1..] {
        let j = r.config.jvm.as_ref().expect("a JVM run");
        assert_eq!(j.major, jdk.major);
        assert!(r.operations > 0, "{}: no operations", r.label());
        assert!(r.wall_ns >= 1_900_000_000, "{}: {}", r.label(), r.wall_ns);
        assert!(!r.hiccup.overshoot_ns.is_empty(), "{}", r.label());
        assert!(!r.control_hiccup.overshoot_ns.is_empty(), "{}", r.label());
        assert!(!r.gc.pauses.is_empty(), "{}: no safepoints", r.label());
        assert!(r.measure_start_at_ns > 0);
    }
}
