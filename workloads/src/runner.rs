//! The one place the harness enters the collector runtime: [`run_workload`] turns a
//! [`RunConfig`] into a [`RunResult`] by running the workload on a real heap.
//!
//! 1. Create the heap in the run's mode; all `GcStats` times count from this moment.
//! 2. Attach `threads` mutators; each builds its share of the live set, then waits at a
//!    barrier (as a blocked thread) until released. While they wait, read Pss for the first
//!    memory sample (a Pss read holds any thread that changes its memory map).
//! 3. Start the hiccup meter (an extra mutator that sleeps 1 ms in a blocking region,
//!    re-enters, allocates, and records how late it was) and the control meter (the same
//!    sleep on a thread outside the heap: what any thread felt), take
//!    `measure_start_at_ns`.
//! 4. Let the workload run for the duration (with `min_cycles`, longer: see
//!    [`crate::min_cycles`]), then stop it and the meters.
//!    Meanwhile this thread samples memory ([`crate::memory_timeline`]).
//! 5. Read the statistics, the peak committed bytes, Pss/RSS, the pages the heap is on
//!    (`Heap::page_size_reading`: 4 KiB, or how much on 2 MiB pages) and, with
//!    `--memory-report`, the memory report, before dropping the heap.
//!
//! A run with `--buffers pooled` gets one `NativePool` shared by its threads.

use crate::buffer_kind::BufferKind;
use crate::ctx::Ctx;
use crate::hiccup::{self, HiccupSamples, MeterMutator, HICCUP_INTERVAL_NS};
use crate::latency::LatencyHistogram;
use crate::memory_timeline::MemorySampler;
use crate::min_cycles::Extension;
use crate::run_result::{RunConfig, RunResult};
use crate::workload::ThreadOutcome;
use gc_runtime::native::{NativePool, PoolConfig};
use gc_runtime::{GcStats, Heap, HeapConfig, Scope};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The hiccup meter's view of its mutator.
struct RealMeter<'a, 's> {
    s: &'a mut Scope<'s>,
}

impl MeterMutator for RealMeter<'_, '_> {
    fn sleep_blocking(&mut self, d: Duration) {
        self.s.blocking(|| std::thread::sleep(d));
    }
    fn allocate_probe(&mut self) {
        self.s.scope(|s| {
            // Out of memory is the workload's problem to report; the meter just goes on.
            let _ = s.alloc(0x4849, 0, 8);
        });
    }
}

/// Run one workload on a fresh heap and return what it measured.
pub fn run_workload(config: &RunConfig) -> Result<RunResult, String> {
    if config.params.workload() != config.workload {
        return Err(format!(
            "the run is of {} but its options are those of {}",
            config.workload,
            config.params.workload()
        ));
    }
    // The runs of a sweep share one process: the free memory glibc malloc kept from the runs
    // before would count in this run's Pss and RSS.
    gc_runtime::proc_info::trim_malloc();
    // The environment's overrides (`ZRS_GC_LOG`, `ZRS_GC_THREADS`, the pacing variables,
    // `ZRS_HUGE_PAGES` unless `--huge-pages` is given) apply to every run; a malformed one
    // fails the run with the variable named. Huge pages the system does not allow fail it
    // with what to set.
    let mut heap_config = HeapConfig::from_env(config.heap_bytes)
        .map_err(|e| e.to_string())?
        .mode(config.mode)
        .pacing(config.pacing)
        .initial_heap(config.initial_heap_bytes);
    if let Some(share) = config.pacing_floor {
        heap_config.pacing.min_mutator_share = share;
    }
    if let Some(ms) = config.pacing_window_ms {
        heap_config.pacing.window = std::time::Duration::from_millis(ms);
    }
    if let Some(h) = config.huge_pages {
        heap_config = heap_config.huge_pages(h);
    }
    if let Some(young) = config.young_size {
        heap_config = heap_config.young_size(young);
    }
    if let Some(percent) = config.young_evacuation_live_percent {
        heap_config = heap_config.young_evacuation_live_percent(percent);
    }
    let heap = Heap::new(heap_config).map_err(|e| {
        format!(
            "cannot create a {} heap: {e}",
            gc_core::format_size(config.heap_bytes)
        )
    })?;
    // Every event of the run, for the percentiles, MMU and plots: the heap itself keeps only
    // the most recent records and totals.
    let events = heap.subscribe();
    let heap_created_unix_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let threads = config.threads.max(1);
    let ready = Barrier::new(threads as usize + 1);
    let stop = AtomicBool::new(false);
    let meter_stop = AtomicBool::new(false);
    let peak_committed = AtomicU64::new(0);
    let pool = match config.params.buffers() {
        Some(BufferKind::Pooled) => Some(
            // Leaks (buffers whose owner died unreleased: by design with buffer-echo's
            // `--release off` and message-engine's bodies) are counted, not printed.
            NativePool::new(
                PoolConfig::new()
                    .name(&format!("{} buffers", config.workload))
                    .log_leaks(false),
            )
            .map_err(|e| format!("cannot create the native pool: {e}"))?,
        ),
        _ => None,
    };
    let mut memory = Vec::new();

    let (outcomes, hiccups, control, measure_start_at_ns, wall_ns, extended_by_ms) =
        std::thread::scope(|sc| {
            let workers: Vec<_> = (0..threads)
                .map(|t| {
                    let (heap, ready, stop, pool) = (&heap, &ready, &stop, pool.as_ref());
                    std::thread::Builder::new()
                        .name(RunConfig::mutator_name(t))
                        .spawn_scoped(sc, move || {
                            let mut m = heap
                                .attach(&RunConfig::mutator_name(t))
                                .map_err(|e| e.to_string())?;
                            let ctx = Ctx::new(config.shape(), t, ready, stop, pool);
                            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                                config.params.run_thread(&ctx, &mut m)
                            }))
                            .unwrap_or_else(|p| {
                                Err(p
                                    .downcast_ref::<String>()
                                    .cloned()
                                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                                    .unwrap_or_else(|| "workload thread panicked".into()))
                            });
                            if r.is_err() {
                                ctx.abort();
                            }
                            if !ctx.was_ready() {
                                m.scope(|s| ctx.ready(s));
                            }
                            r
                        })
                        .expect("spawning a mutator thread")
                })
                .collect();
            // Wait until every thread has built its live set; read Pss while they are held
            // (see `memory_timeline`), then release them.
            ready.wait();
            let mut sampler = MemorySampler::before_start();
            ready.wait();
            let meter = {
                let (heap, meter_stop) = (&heap, &meter_stop);
                // Named, as the mutators are, so scheduler traces show which thread it is.
                std::thread::Builder::new()
                    .name("hiccup-meter".into())
                    .spawn_scoped(sc, move || -> Result<HiccupSamples, String> {
                        let mut m = heap.attach("hiccup-meter").map_err(|e| e.to_string())?;
                        Ok(m.scope(|s| {
                            let mut meter = RealMeter { s };
                            hiccup::meter_loop(
                                &mut meter,
                                meter_stop,
                                Duration::from_nanos(HICCUP_INTERVAL_NS),
                            )
                        }))
                    })
                    .map_err(|e| format!("spawning the hiccup meter: {e}"))
            };
            // The control meter: the same sleep on a thread outside the heap (see `hiccup`).
            let control = {
                let meter_stop = &meter_stop;
                std::thread::Builder::new()
                    .name("control-meter".into())
                    .spawn_scoped(sc, move || {
                        hiccup::control_loop(meter_stop, Duration::from_nanos(HICCUP_INTERVAL_NS))
                    })
                    .map_err(|e| format!("spawning the control meter: {e}"))
            };
            let measure_start_at_ns = heap.uptime_ns();
            let t0 = Instant::now();
            let extension = Extension::of(config);
            let mut deadline_ms = config.duration_ms;
            sampler.start(t0);
            loop {
                let deadline = t0 + Duration::from_millis(deadline_ms);
                while Instant::now() < deadline && !stop.load(Ordering::Relaxed) {
                    peak_committed.fetch_max(heap.usage().committed, Ordering::Relaxed);
                    sampler.poll(&heap);
                    std::thread::sleep(
                        Duration::from_millis(20)
                            .min(sampler.until_next())
                            .min(deadline.saturating_duration_since(Instant::now())),
                    );
                }
                if stop.load(Ordering::Relaxed) || extension.min_cycles == 0 {
                    break;
                }
                // Cycles are recorded when they end: every one that started in the window is
                // complete. Counted in place: a copy of every record so far takes
                // milliseconds, on a core the mutators need (a pause that began then waited
                // that long for the mutator to reach its safepoint).
                let complete = events.cycles_since(measure_start_at_ns);
                let elapsed_ms = t0.elapsed().as_millis() as u64;
                match extension.next_deadline_ms(elapsed_ms, complete) {
                    Some(next) => deadline_ms = next,
                    None => break,
                }
            }
            let extended_by_ms = deadline_ms - config.duration_ms;
            stop.store(true, Ordering::Relaxed);
            let outcomes: Vec<Result<ThreadOutcome, String>> = workers
                .into_iter()
                .map(|w| {
                    w.join()
                        .unwrap_or_else(|_| Err("workload thread panicked".into()))
                })
                .collect();
            let wall_ns = t0.elapsed().as_nanos() as u64;
            meter_stop.store(true, Ordering::Relaxed);
            let hiccups = meter.and_then(|m| {
                m.join()
                    .unwrap_or_else(|_| Err("hiccup meter panicked".into()))
            });
            let control =
                control.and_then(|c| c.join().map_err(|_| String::from("control meter panicked")));
            // Every thread has stopped: the last sample, with Pss read afresh.
            memory = sampler.finish(&heap);
            (
                outcomes,
                hiccups,
                control,
                measure_start_at_ns,
                wall_ns,
                extended_by_ms,
            )
        });

    let mut operations = 0;
    let mut latency: Option<LatencyHistogram> = None;
    for o in outcomes {
        let o = o.map_err(|e| format!("{}: {e}", config.label()))?;
        operations += o.operations;
        if let Some(l) = o.latency {
            match &mut latency {
                Some(acc) => acc.add(&l),
                None => latency = Some(l),
            }
        }
    }
    let hiccup = hiccups?;
    let control_hiccup = control?;
    peak_committed.fetch_max(heap.usage().committed, Ordering::Relaxed);
    let pm = gc_runtime::proc_info::process_memory();
    let gc = {
        let now = heap.stats();
        GcStats {
            allocated_bytes: now.allocated_bytes,
            direct: now.direct,
            ..events.records()
        }
    };
    // Every mutator has stopped: the smaps walk holds up no one.
    let pages = Some(heap.page_size_reading());
    let remembered_set = heap.remembered_set_stats();
    let report = config.memory_report.then(|| {
        let pools: Vec<NativePool> = pool.iter().cloned().collect();
        heap.memory_report_with_pools(&pools)
    });
    drop(heap);
    let memory_report = report
        .as_ref()
        .map(|r| serde_json::to_value(r).expect("a memory report serializes"));
    let memory_report_text = report.map(|r| r.to_string());
    Ok(RunResult {
        config: config.clone(),
        wall_ns,
        operations,
        ops_per_sec: RunResult::throughput(operations, wall_ns),
        gc,
        hiccup,
        control_hiccup,
        request_latency: latency,
        committed_heap_bytes: peak_committed.load(Ordering::Relaxed),
        pss_bytes: pm.pss,
        rss_bytes: pm.rss,
        measure_start_at_ns,
        heap_created_unix_ms,
        extended_by_ms,
        memory,
        memory_report,
        memory_report_text,
        pages,
        remembered_set,
        pacing_thinned_out: 0,
        cores: crate::cpu_budget::cores(),
    })
}
