//! The JVM runs of a sweep (`--jvm`): after this project's runs of each heap, one run per named
//! HotSpot collector, with the same workload, options, live set, threads, seed and duration,
//! `-Xms` = `-Xmx` = the heap (as this project's heap is committed whole at creation, with
//! `-XX:+AlwaysPreTouch` so no run pays for first-touch page faults in its measured phase), as
//! many GC threads as this project's runs use (`-XX:ParallelGCThreads`, `-XX:ConcGCThreads`:
//! `HeapConfig::gc_threads`, `ZRS_GC_THREADS` included) and the GC log
//! (`-Xlog:gc*,safepoint`) written next to the results. Everything that can fail — no JDK, a
//! collector it does not have, a workload without a twin, the twins not compiling — fails
//! here, before the sweep's first run.

use super::collector::{JvmCollector, JvmSpec};
use super::gc_log::DECORATIONS;
use super::jdk::Jdk;
use crate::run_result::{Mode, RunConfig};
use crate::workloads::WorkloadKind;
use std::path::Path;

/// The workloads that have a Java twin.
pub const TWINNED: [WorkloadKind; 2] = [WorkloadKind::HeapChurn, WorkloadKind::BinaryTrees];

/// The file name of a JVM run's GC log: `gc-JDK-17-ZGC-256M.log`.
pub fn log_name(config: &RunConfig) -> String {
    format!("gc-{}.log", config.label().replace(' ', "-"))
}

/// Where this process compiles the twins for a JDK of feature release `major`: a directory
/// of its own under the temporary directory, removed by [`remove_twins`].
fn twins_dir(major: u32) -> std::path::PathBuf {
    std::env::temp_dir().join(format!(
        "pause-sweep-java-twins-{}-jdk{major}",
        std::process::id()
    ))
}

/// After the runs: remove the twins' directories [`add_jvm_runs`] compiled for `configs`.
pub fn remove_twins(configs: &[RunConfig]) {
    for major in configs
        .iter()
        .filter_map(|c| c.jvm.as_ref().map(|j| j.major))
    {
        let _ = std::fs::remove_dir_all(twins_dir(major));
    }
}

/// The JVM options of one run, in order.
pub fn jvm_flags(
    collector_flags: &[String],
    heap_bytes: u64,
    gc_threads: usize,
    collector: JvmCollector,
    log: &Path,
) -> Vec<String> {
    let mib = heap_bytes >> 20;
    let mut f = vec![
        format!("-Xms{mib}m"),
        format!("-Xmx{mib}m"),
        "-XX:+AlwaysPreTouch".to_string(),
    ];
    f.extend(collector_flags.iter().cloned());
    if collector != JvmCollector::Serial {
        f.push(format!("-XX:ParallelGCThreads={gc_threads}"));
        f.push(format!("-XX:ConcGCThreads={gc_threads}"));
    }
    f.push(format!(
        "-Xlog:gc*,safepoint:file={}:{DECORATIONS}",
        log.display()
    ));
    f
}

/// `rust` (this project's runs, by heap) with the JVM runs of `collectors` after each heap's,
/// on the JDK `java` (see [`Jdk::locate`]); their logs go to `out`, the twins are compiled
/// under the temporary directory. Without collectors, `rust` as it is, and no JDK is looked
/// for.
pub fn add_jvm_runs(
    rust: Vec<RunConfig>,
    collectors: &[JvmCollector],
    java: Option<&Path>,
    out: &Path,
) -> Result<Vec<RunConfig>, String> {
    if collectors.is_empty() {
        return Ok(rust);
    }
    let Some(first) = rust.first() else {
        return Ok(rust);
    };
    if !TWINNED.contains(&first.workload) {
        let names: Vec<&str> = TWINNED.iter().map(|w| w.name()).collect();
        return Err(format!(
            "--jvm: {} has no Java twin; the workloads with one are {}",
            first.workload,
            names.join(" and ")
        ));
    }
    let jdk = Jdk::locate(java)?;
    let mut chosen = Vec::new();
    for &c in collectors {
        let flags = c.flags(jdk.major).map_err(|why| {
            let has: Vec<&str> = JvmCollector::available(jdk.major)
                .iter()
                .map(|c| c.name())
                .collect();
            format!(
                "--jvm {c}: {why}. {} (Java {}) has {}",
                jdk.java.display(),
                jdk.version,
                has.join(", ")
            )
        })?;
        if !chosen.iter().any(|(d, _)| *d == c) {
            chosen.push((c, flags));
        }
    }
    let dir = twins_dir(jdk.major);
    let classes = jdk.compile_twins(&dir)?;
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let out = std::fs::canonicalize(out).unwrap_or_else(|_| out.to_path_buf());
    if out.to_string_lossy().contains(':') {
        return Err(format!(
            "--jvm: the output directory {} holds a ':', which -Xlog:…:file=… cannot take; \
             choose another --out",
            out.display()
        ));
    }
    let mut runs = Vec::new();
    let mut i = 0;
    while i < rust.len() {
        let heap = rust[i].heap_bytes;
        let template = rust[i].clone();
        while i < rust.len() && rust[i].heap_bytes == heap {
            runs.push(rust[i].clone());
            i += 1;
        }
        let gc_threads = gc_runtime::HeapConfig::from_env(heap)
            .map_err(|e| e.to_string())?
            .gc_threads;
        for (collector, flags) in &chosen {
            let mut c = template.clone();
            c.mode = if collector.is_concurrent() {
                Mode::Concurrent
            } else {
                Mode::Stw
            };
            // A JVM run is not extended; its row is flagged when it has too few cycles.
            c.min_cycles = 0;
            c.initial_heap_bytes = heap;
            let mut spec = JvmSpec {
                collector: *collector,
                major: jdk.major,
                version: jdk.version.clone(),
                java: jdk.java.clone(),
                flags: Vec::new(),
                log: Default::default(),
                classes: classes.clone(),
            };
            c.jvm = Some(spec.clone());
            spec.log = out.join(log_name(&c));
            spec.flags = jvm_flags(flags, heap, gc_threads, *collector, &spec.log);
            c.jvm = Some(spec);
            runs.push(c);
        }
    }
    Ok(runs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_size_the_heap_match_gc_threads_and_log() {
        let f = jvm_flags(
            &["-XX:+UseZGC".to_string()],
            1 << 30,
            1,
            JvmCollector::Zgc,
            Path::new("/r/gc-JDK-17-ZGC-1G.log"),
        );
        assert_eq!(
            f.join(" "),
            "-Xms1024m -Xmx1024m -XX:+AlwaysPreTouch -XX:+UseZGC -XX:ParallelGCThreads=1 \
             -XX:ConcGCThreads=1 -Xlog:gc*,safepoint:file=/r/gc-JDK-17-ZGC-1G.log:uptime,\
             timenanos,level,tags"
        );
        let f = jvm_flags(&[], 256 << 20, 2, JvmCollector::Serial, Path::new("/x"));
        assert!(!f.join(" ").contains("GCThreads"), "{f:?}");
    }

    #[test]
    fn without_collectors_no_jdk_is_needed() {
        let rust = vec![RunConfig::new(
            WorkloadKind::LruCache,
            Mode::Concurrent,
            256 << 20,
            1,
            1,
        )];
        let same = add_jvm_runs(
            rust.clone(),
            &[],
            Some(Path::new("/nonexistent")),
            Path::new("/x"),
        );
        assert_eq!(same.unwrap(), rust);
        let e = add_jvm_runs(rust, &[JvmCollector::G1], None, Path::new("/x")).unwrap_err();
        assert!(e.contains("lru-cache has no Java twin"), "{e}");
    }
}
