//! One JVM run of a sweep: the Java twin of the run's workload under the run's HotSpot
//! collector (a `java` child process), turned into a `RunResult` like a Rust run's, so the
//! same tables, plots and `results.json` show both.
//!
//! The twin prints its measured window (`System.nanoTime()`), operations and every hiccup
//! meter round (see `workloads/java/Twin.java`); the GC log (`-Xlog:gc*,safepoint`, see
//! [`super::gc_log`]) gives the pauses, stalls and collections on the same clock. While the
//! twin's measured phase runs, this process runs the control meter (the same 1 ms sleep on a
//! thread outside any heap: what any thread on the machine felt meanwhile), as the Rust runs
//! do. Times in the result count from the log's first line (the JVM's start).

use super::gc_log;
use super::jdk::TWIN_MAIN;
use crate::hiccup::{self, HiccupSamples, HICCUP_INTERVAL_NS};
use crate::run_result::{RunConfig, RunResult};
use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The twin's command-line arguments for `config`: the workload, the run's shape, the
/// collector's reference size (for the twin's object sizes) and the workload's own options
/// (`subgraph_nodes` → `--subgraph-nodes 16`).
pub fn twin_args(config: &RunConfig, reference_bytes: u32) -> Result<Vec<String>, String> {
    let mut args = vec![
        config.workload.name().to_string(),
        "--heap-bytes".into(),
        config.heap_bytes.to_string(),
        "--live-set-bytes".into(),
        config.live_set_bytes.to_string(),
        "--threads".into(),
        config.threads.to_string(),
        "--seed".into(),
        config.seed.to_string(),
        "--duration-ms".into(),
        config.duration_ms.to_string(),
        "--ref-bytes".into(),
        reference_bytes.to_string(),
    ];
    let params = serde_json::to_value(&config.params).map_err(|e| e.to_string())?;
    for (k, v) in params.as_object().into_iter().flatten() {
        match v {
            serde_json::Value::Number(n) => {
                args.push(format!("--{}", k.replace('_', "-")));
                args.push(n.to_string());
            }
            serde_json::Value::Null => {}
            other => {
                return Err(format!(
                    "the Java twin of {} takes no option {k} = {other}",
                    config.workload
                ))
            }
        }
    }
    Ok(args)
}

/// What the twin printed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TwinOutput {
    pub start_ns: Option<u64>,
    pub end_ns: Option<u64>,
    pub operations: Option<u64>,
    pub hiccup_overshoot_ns: Vec<u64>,
    pub done: bool,
    pub error: Option<String>,
}

impl TwinOutput {
    /// Take one line of the twin's stdout (others, such as JVM warnings, are ignored).
    pub fn read_line(&mut self, line: &str) -> Result<(), String> {
        let Some(rest) = line.strip_prefix("twin ") else {
            return Ok(());
        };
        let (key, value) = rest.split_once(' ').unwrap_or((rest, ""));
        let number = |v: &str| {
            v.trim()
                .parse::<u64>()
                .map_err(|_| format!("the Java twin printed a bad {key}: {v}"))
        };
        match key {
            "ready" => {}
            "start_ns" => self.start_ns = Some(number(value)?),
            "end_ns" => self.end_ns = Some(number(value)?),
            "operations" => self.operations = Some(number(value)?),
            "hiccup_overshoot_ns" => {
                self.hiccup_overshoot_ns = value
                    .split(',')
                    .filter(|v| !v.is_empty())
                    .map(number)
                    .collect::<Result<_, _>>()?
            }
            "done" => self.done = true,
            "error" => self.error = Some(value.to_string()),
            _ => {}
        }
        Ok(())
    }
}

/// Rss and Pss of process `pid` from `/proc/<pid>/smaps_rollup` (zeros where unreadable).
fn process_memory(pid: u32) -> (u64, u64) {
    let text = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).unwrap_or_default();
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
            .map_or(0, |kb| kb * 1024)
    };
    (field("Rss:"), field("Pss:"))
}

/// The longest a twin may take beyond its duration (JVM start, pre-touching the heap,
/// building the live set) before it is killed.
const SET_UP_LIMIT: Duration = Duration::from_secs(300);

/// Run `config` (a run with `config.jvm`) as a `java` child and return what it measured.
pub fn run_twin(config: &RunConfig) -> Result<RunResult, String> {
    let spec = config
        .jvm
        .as_ref()
        .ok_or("not a JVM run: the run has no collector of the JVM")?;
    let reference_bytes = spec.collector.reference_bytes(config.heap_bytes);
    let args = twin_args(config, reference_bytes)?;
    let _ = std::fs::remove_file(&spec.log);
    let heap_created_unix_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let mut child = Command::new(&spec.java)
        .args(&spec.flags)
        .arg("-cp")
        .arg(&spec.classes)
        .arg(TWIN_MAIN)
        .args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", spec.java.display()))?;
    let pid = child.id();
    let stdout = child.stdout.take().expect("stdout is piped");
    let mut stderr = child.stderr.take().expect("stderr is piped");
    let stderr_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    // A twin that hangs is killed (by pid: `child` stays with this thread to be waited for).
    let finished = Arc::new(AtomicBool::new(false));
    let watchdog = {
        let finished = finished.clone();
        let limit = Duration::from_millis(config.duration_ms) * 2 + SET_UP_LIMIT;
        std::thread::spawn(move || {
            let t0 = Instant::now();
            while !finished.load(Ordering::Relaxed) {
                if t0.elapsed() > limit {
                    let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
                    return true;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            false
        })
    };
    let meter_stop = Arc::new(AtomicBool::new(false));
    let mut control = None;
    let mut out = TwinOutput::default();
    let mut memory = (0, 0);
    let mut bad_line = None;
    for line in BufReader::new(stdout).lines() {
        let Ok(line) = line else { break };
        if line.starts_with("twin ready") && control.is_none() {
            let stop = meter_stop.clone();
            control = Some(std::thread::spawn(move || {
                hiccup::control_loop(&stop, Duration::from_nanos(HICCUP_INTERVAL_NS))
            }));
        }
        if line.starts_with("twin end_ns") {
            meter_stop.store(true, Ordering::Relaxed);
            memory = process_memory(pid);
        }
        if let Err(e) = out.read_line(&line) {
            bad_line.get_or_insert(e);
        }
    }
    meter_stop.store(true, Ordering::Relaxed);
    let status = child.wait().map_err(|e| format!("waiting for java: {e}"))?;
    finished.store(true, Ordering::Relaxed);
    let killed = watchdog.join().unwrap_or(false);
    let stderr = stderr_reader.join().unwrap_or_default();
    let control_hiccup = match control {
        Some(c) => c
            .join()
            .map_err(|_| "the control meter panicked".to_string())?,
        None => HiccupSamples::empty(),
    };
    let tail = |s: &str| {
        let lines: Vec<&str> = s.lines().collect();
        lines[lines.len().saturating_sub(8)..].join("\n")
    };
    if killed {
        return Err(format!(
            "the Java twin did not finish within {} and was killed",
            crate::report::format::duration_ns(
                (Duration::from_millis(config.duration_ms) * 2 + SET_UP_LIMIT).as_nanos() as u64
            )
        ));
    }
    if let Some(e) = out.error {
        return Err(format!("the Java twin failed: {e}"));
    }
    if let Some(e) = bad_line {
        return Err(e);
    }
    let (Some(start), Some(end), Some(operations), true) =
        (out.start_ns, out.end_ns, out.operations, out.done)
    else {
        return Err(format!(
            "java exited ({status}) before the twin reported its results:\n{}",
            tail(&stderr)
        ));
    };
    let text = std::fs::read_to_string(&spec.log)
        .map_err(|e| format!("cannot read the GC log {}: {e}", spec.log.display()))?;
    let log = gc_log::parse(&text).map_err(|e| format!("{}: {e}", spec.log.display()))?;
    let origin = log.first_ns.unwrap_or(start).min(start);
    let wall_ns = end.saturating_sub(start);
    Ok(RunResult {
        config: config.clone(),
        wall_ns,
        operations,
        ops_per_sec: RunResult::throughput(operations, wall_ns),
        gc: log.to_gc_stats(origin, config.heap_bytes),
        hiccup: HiccupSamples::from_overshoots(out.hiccup_overshoot_ns, HICCUP_INTERVAL_NS),
        control_hiccup,
        request_latency: None,
        // -Xms = -Xmx: the whole heap is committed from the start.
        committed_heap_bytes: config.heap_bytes,
        pss_bytes: memory.1,
        rss_bytes: memory.0,
        measure_start_at_ns: start - origin,
        heap_created_unix_ms,
        extended_by_ms: 0,
        memory: Vec::new(),
        memory_report: None,
        memory_report_text: None,
        pages: None,
        remembered_set: None,
        pacing_thinned_out: 0,
        cores: crate::cpu_budget::cores(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run_result::Mode;
    use crate::workloads::WorkloadKind;

    #[test]
    fn the_twin_gets_the_run_and_the_workload_options() {
        let c = RunConfig::new(
            WorkloadKind::HeapChurn,
            Mode::Concurrent,
            256 << 20,
            128 << 20,
            5000,
        );
        let a = twin_args(&c, 8).unwrap().join(" ");
        assert!(
            a.starts_with(
                "heap-churn --heap-bytes 268435456 --live-set-bytes 134217728 --threads 1 \
                 --seed 42 --duration-ms 5000 --ref-bytes 8"
            ),
            "{a}"
        );
        for o in [
            "--subgraph-nodes 16",
            "--mutations 1",
            "--garbage-bytes 512",
            "--ops-per-sec 0",
            "--root-chunk-slots 16384",
            "--garbage-ring 1024",
        ] {
            assert!(a.contains(o), "{a} lacks {o}");
        }
        let c = RunConfig::new(WorkloadKind::BinaryTrees, Mode::Stw, 256 << 20, 1, 1000);
        let a = twin_args(&c, 4).unwrap().join(" ");
        assert!(a.ends_with("--min-depth 4"), "{a}");
    }

    #[test]
    fn the_twin_output_is_read_line_by_line() {
        let mut o = TwinOutput::default();
        for l in [
            "twin ready 100",
            "OpenJDK 64-Bit Server VM warning: something",
            "twin start_ns 100",
            "twin end_ns 2000000100",
            "twin operations 12345",
            "twin hiccup_overshoot_ns 5,70000,3",
            "twin done",
        ] {
            o.read_line(l).unwrap();
        }
        assert_eq!(
            o,
            TwinOutput {
                start_ns: Some(100),
                end_ns: Some(2_000_000_100),
                operations: Some(12345),
                hiccup_overshoot_ns: vec![5, 70_000, 3],
                done: true,
                error: None,
            }
        );
        assert!(o.read_line("twin operations many").is_err());
        o.read_line("twin error java.lang.OutOfMemoryError: Java heap space")
            .unwrap();
        assert!(o.error.unwrap().contains("OutOfMemoryError"));
    }
}
