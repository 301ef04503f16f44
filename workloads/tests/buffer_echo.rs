//! buffer-echo on a real heap and real loopback sockets, in every buffer kind; memory over
//! time in results.json and its plots; `pause-sweep memory` and `--memory-report`; and the
//! errors of bad `--buffers` and `--message-size` input.

mod common;

use common::{pause_sweep, scratch, text};
use workloads::runner::run_workload;
use workloads::WorkloadParams;
use workloads::{BufferKind, Mode, RunConfig, WorkloadKind};

/// Names this file's scratch directories.
const SUITE: &str = "buffer-echo";

const HEAP: u64 = 64 << 20;

fn echo_config(kind: BufferKind, release: bool) -> RunConfig {
    let mut c = RunConfig::new(
        WorkloadKind::BufferEcho,
        Mode::Concurrent,
        HEAP,
        HEAP / 4,
        1000,
    );
    c.params.set_buffers(kind).unwrap();
    if let WorkloadParams::BufferEcho(p) = &mut c.params {
        p.release = release;
        p.connections = 2;
    }
    c
}

#[test]
fn buffer_echo_serves_requests_in_every_buffer_kind() {
    for kind in BufferKind::ALL {
        let r = run_workload(&echo_config(kind, true)).unwrap_or_else(|e| panic!("{kind}: {e}"));
        assert_eq!(r.label(), format!("concurrent 64M {kind}"));
        assert!(r.operations > 0, "{kind}: no requests");
        let l = r.request_latency.as_ref().expect("requests record latency");
        assert_eq!(
            l.summary().count,
            r.operations,
            "{kind}: one latency per request"
        );
        assert!(!r.memory.is_empty(), "{kind}: no memory samples");
        assert!(r.memory.iter().all(|m| m.rss_bytes > 0));
        // Pss is read for the first and the last sample only, while no mutator runs (a read
        // holds a thread that changes its memory map); the samples in between say "not read".
        let (first, last) = (&r.memory[0], r.memory.last().unwrap());
        assert!(r.memory.len() >= 2, "{kind}: {:?}", r.memory);
        assert!(first.pss_bytes > 0 && last.pss_bytes > 0, "{kind}");
        let inner = &r.memory[1..r.memory.len() - 1];
        assert!(inner.iter().all(|m| m.pss_bytes == 0), "{kind}");
        // The last sample reads Pss just before RSS, and RSS counts every page Pss counts (a
        // few MiB of slack for memory unmapped between the two reads).
        assert!(last.rss_bytes + (8 << 20) >= last.pss_bytes, "{last:?}");
        let native = r.memory.iter().map(|m| m.native_bytes()).max().unwrap();
        let d = &r.gc.direct;
        if kind == BufferKind::Heap {
            assert_eq!((native, d.allocated), (0, 0), "heap buffers are not native");
            assert!(r.memory.iter().any(|m| m.committed_heap_bytes >= HEAP / 4));
        } else {
            assert!(native > 0, "{kind}: no direct bytes in any sample");
            assert!(
                d.released + d.cleaned > 0,
                "{kind}: no buffer was freed: {d:?}"
            );
            assert_eq!(
                d.reserved_bytes, 0,
                "{kind}: the server released its log at the end"
            );
            let m = r.memory.iter().find(|m| m.native_bytes() > 0).unwrap();
            match kind {
                BufferKind::Direct => assert!(m.direct_bytes > 0 && m.pooled_bytes == 0),
                _ => assert!(m.pooled_bytes > 0 && m.direct_bytes == 0),
            }
        }
    }
}

#[test]
fn without_release_the_cleaners_free_the_direct_buffers() {
    let mut c = echo_config(BufferKind::Direct, false);
    // A direct-memory limit the log fills, so cycles run for it.
    c.live_set_bytes = HEAP / 2;
    let r = run_workload(&c).unwrap();
    assert!(r.operations > 0);
    let d = &r.gc.direct;
    assert_eq!(d.released, 0, "--release off never releases");
    assert!(d.cleaned > 0, "no cleaner ran: {d:?}");
}

#[test]
fn results_json_holds_memory_samples_the_report_and_a_memory_plot_per_run() {
    let dir = scratch(SUITE, "results");
    let d = dir.to_str().unwrap();
    let out = pause_sweep(&[
        "buffer-echo",
        "--heap",
        "64M",
        "--buffers",
        "pooled",
        "--message-size",
        "1K-8K",
        "--duration",
        "1",
        "--memory-report",
        "--out",
        d,
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("| buffers |"),
        "a buffers column:\n{stdout}"
    );
    assert!(stdout.contains("## Memory"), "{stdout}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap();
    let run = &v["runs"][0];
    assert_eq!(run["config"]["params"]["buffers"], "pooled");
    assert_eq!(run["config"]["params"]["message_size"]["max_bytes"], 8192);
    let samples = run["memory"].as_array().unwrap();
    assert!(samples.len() >= 5, "{} samples in 1 s", samples.len());
    for key in [
        "at_ns",
        "committed_heap_bytes",
        "direct_bytes",
        "pooled_bytes",
        "rss_bytes",
        "pss_bytes",
    ] {
        assert!(
            samples[0][key].is_u64(),
            "sample lacks {key}: {}",
            samples[0]
        );
    }
    assert!(samples
        .iter()
        .any(|s| s["pooled_bytes"].as_u64().unwrap() > 0));
    assert!(run["memory_report"]["rss"].as_u64().unwrap() > 0);
    assert!(run["memory_report_text"]
        .as_str()
        .unwrap()
        .contains("Native memory summary"));
    assert_eq!(v["summaries"][0]["buffers"], "pooled");
    let svg = dir.join("memory-1-buffer-echo-concurrent-64M-pooled.svg");
    let svg = std::fs::read_to_string(&svg).unwrap_or_else(|e| panic!("{}: {e}", svg.display()));
    assert!(svg.contains("pooled buffers") && svg.contains("Pss"));
}

#[test]
fn memory_subcommand_prints_the_report() {
    let out = pause_sweep(&["memory", "--heap", "64M", "--duration", "1"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report = text(&out.stdout);
    for line in [
        "Native memory summary",
        "Process: RSS",
        "Heap: reserved",
        "Direct buffers:",
        "Native pools:",
        "buffer-echo buffers",
        "By mapping (/proc/self/smaps):",
        "Rest of RSS:",
    ] {
        assert!(
            report.contains(line),
            "the report lacks {line:?}:\n{report}"
        );
    }
    assert!(text(&out.stderr).contains("buffer-echo concurrent 64M pooled"));
    let out = pause_sweep(&["memory", "--heap", "64M", "--duration", "0.5", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_str(&text(&out.stdout)).unwrap();
    assert!(v["committed"].as_u64().unwrap() > 0);
    let help = text(&pause_sweep(&["--help"]).stdout);
    for s in [
        "pause-sweep memory",
        "--memory-report",
        "--buffers",
        "buffer-echo",
    ] {
        assert!(help.contains(s), "--help lacks {s}");
    }
}

#[test]
fn bad_buffer_and_message_options_are_refused_clearly() {
    let err = |args: &[&str]| {
        let out = pause_sweep(args);
        assert_eq!(out.status.code(), Some(2), "{args:?} succeeded");
        text(&out.stderr)
    };
    let e = err(&["--workload", "buffer-echo", "--buffers", "heap,offheap"]);
    assert!(
        e.contains("offheap") && e.contains("heap, direct, pooled"),
        "{e}"
    );
    let e = err(&[
        "--workload",
        "heap-churn",
        "--buffers",
        "direct",
        "--duration",
        "1",
    ]);
    assert!(
        e.contains("heap-churn keeps no I/O buffers")
            && e.contains("message-engine and buffer-echo"),
        "{e}"
    );
    let e = err(&["memory", "--workload", "lru-cache", "--buffers", "pooled"]);
    assert!(e.contains("lru-cache keeps no I/O buffers"), "{e}");
    let e = err(&["buffer-echo", "--message-size", "0"]);
    assert!(e.contains("at least 1 byte"), "{e}");
    let e = err(&["buffer-echo", "--message-size", "16K-1K"]);
    assert!(e.contains("smaller size comes first"), "{e}");
    let e = err(&["buffer-echo", "--message-size", "1G"]);
    assert!(e.contains("at most 16M"), "{e}");
    let e = err(&["buffer-echo", "--connections", "0"]);
    assert!(e.contains("--connections"), "{e}");
}
