//! Running a torture configuration: one run at a time, a heap with the verifier on and cycles
//! back to back, one thread per mutator with its own program and seed, a failure in any
//! thread stopping the others, the native pool the threads' pooled buffers share, the
//! direct-buffer accounting at the end of a run (every owner dropped, two more cycles, then
//! `direct::check_end`), and the report. A GC thread's panic or a run past its time
//! limit cannot return to the test: a panic hook and a watchdog abort the process instead,
//! printing the run and an optional note (and writing both to a report file if one is set).

use super::direct::{self, DirectCounts, EPSILON_MAPPINGS_PER_THREAD, POOL_CHUNK};
use super::program::{Program, REGION_SLOTS_PER_THREAD};
use super::report::{Report, ThreadStats};
use super::rng::{splitmix, Rng};
use super::shared::SharedPool;
use super::Config;
use gc_core::PageSizes;
use gc_runtime::native::{LeakDetection, NativePool, PoolConfig};
use gc_runtime::{Heap, HeapConfig, Mode};
use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, Once};
use std::time::{Duration, Instant};

static SERIAL: Mutex<()> = Mutex::new(());
static CURRENT: Mutex<String> = Mutex::new(String::new());
static HOOK: Once = Once::new();
/// What to add to an abort's message, and the file to write both to (see [`set_abort_note`]).
static ABORT_NOTE: Mutex<Option<(String, Option<String>)>> = Mutex::new(None);

/// If a run aborts the process (a GC thread panicked, or the watchdog fired), also print
/// `note` and write the abort message and `note` to `report_path` (if given). The soak sets
/// its totals so far here.
pub fn set_abort_note(note: String, report_path: Option<String>) {
    *ABORT_NOTE.lock().unwrap_or_else(|e| e.into_inner()) = Some((note, report_path));
}

/// Forget the note of [`set_abort_note`].
pub fn clear_abort_note() {
    *ABORT_NOTE.lock().unwrap_or_else(|e| e.into_inner()) = None;
}

/// Print `msg` (and the abort note) to the stderr handle directly, write the report file if
/// one is set, and abort. (The GC threads inherit the test harness's output capture, which
/// would swallow `eprintln!` before the abort.)
fn abort_with(msg: String) -> ! {
    let note = ABORT_NOTE.try_lock().ok().and_then(|n| n.as_ref().cloned());
    let mut text = msg;
    if let Some((note, path)) = note {
        text.push_str(&note);
        if let Some(path) = path {
            let _ = std::fs::write(&path, format!("FAILED (aborted)\n{text}"));
        }
    }
    let _ = std::io::Write::write_all(&mut std::io::stderr(), text.as_bytes());
    std::process::abort();
}

/// A panic in a GC thread (a verifier failure, an assertion in the collector) would leave
/// the mutators parked forever: report the run and abort instead of hanging.
fn install_gc_panic_hook() {
    HOOK.call_once(|| {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            prev(info);
            let name = std::thread::current().name().unwrap_or("").to_string();
            if name.starts_with("gc-") {
                let cur = CURRENT.lock().map(|c| c.clone()).unwrap_or_default();
                abort_with(format!(
                    "\nGC thread {name:?} {info}\nduring {cur}; aborting (the mutators would \
                     wait forever)\n"
                ));
            }
        }));
    });
}

/// Aborts the process with a message if the run is not over by `limit`.
struct Watchdog(Option<std::sync::mpsc::Sender<()>>);

impl Watchdog {
    fn new(limit: Duration, what: String) -> Self {
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        std::thread::Builder::new()
            .name("torture-watchdog".into())
            .spawn(move || {
                if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(limit) {
                    abort_with(format!(
                        "\ntorture watchdog: {what} did not finish within {limit:?}; aborting\n"
                    ));
                }
            })
            .expect("spawning the watchdog");
        Watchdog(Some(tx))
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        if let Some(tx) = self.0.take() {
            let _ = tx.send(());
        }
    }
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else {
        "(non-string panic)".into()
    }
}

/// A run that failed: what failed, and what the run had done until then.
#[derive(Clone, Debug)]
pub struct Failure {
    /// The run, the failures of its threads and the replay command.
    pub message: String,
    /// The figures of the failed run up to the failure.
    pub report: Report,
}

/// Every event of the run (the subscription's records, taken when the heap was created) with
/// the heap's direct-buffer counters now: `Heap::stats` keeps only the most recent records.
fn all_stats(heap: &Heap, events: &gc_runtime::EventSubscription) -> gc_runtime::GcStats {
    gc_runtime::GcStats {
        direct: heap.stats().direct,
        ..events.records()
    }
}

/// Run one torture configuration to the end; panics (naming the seed) on any mismatch.
pub fn run(cfg: &Config) -> Report {
    try_run(cfg)
        .unwrap_or_else(|f| panic!("{}\nthe run until the failure:\n{}", f.message, f.report))
}

/// Run one torture configuration to the end; a mismatch in any thread stops every thread
/// and returns the failure (naming the seed). A failure in a GC thread aborts the process.
pub fn try_run(cfg: &Config) -> Result<Report, Box<Failure>> {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    install_gc_panic_hook();
    let replay = cfg.replay_command();
    let what = format!(
        "torture[{}] mode={} heap={}M threads={} live={} shared={} seed={:#x} (replay: {replay})",
        cfg.name,
        cfg.mode,
        cfg.max_heap >> 20,
        cfg.threads,
        cfg.live_fraction,
        cfg.shared_fraction,
        cfg.seed
    );
    eprintln!("{what}: running for {:?}", cfg.duration);
    *CURRENT.lock().unwrap_or_else(|e| e.into_inner()) = what.clone();
    let _watchdog = Watchdog::new(cfg.duration * 4 + Duration::from_secs(120), what.clone());
    let started = Instant::now();
    let mut hc = HeapConfig::new(cfg.max_heap)
        .mode(cfg.mode)
        .gc_threads(cfg.gc_threads)
        .verify(true)
        .continuous(cfg.continuous)
        .mark_colors(cfg.mark_colors);
    if let Some(m) = cfg.max_direct {
        hc = hc.max_direct_memory(m);
    }
    if let Some(r) = cfg.relocation_reserve {
        hc = hc.relocation_reserve(r);
    }
    hc = hc
        .pacing(cfg.pacing)
        .track_generations(cfg.track_generations);
    if let Some(t) = cfg.tenuring_threshold {
        hc = hc.tenuring_threshold(t);
    }
    if let Some(share) = cfg.pacing_floor {
        hc.pacing.min_mutator_share = share;
    }
    let pacing = hc.pacing.clone();
    let direct_limit = hc.direct_memory_limit();
    let heap = Heap::new(hc).unwrap_or_else(|e| panic!("{what}: creating the heap: {e}"));
    heap.swing_gc_workers_for_tests(cfg.swing_gc_workers);
    // Every event of the run (the heap keeps only the most recent records): the report sums
    // over all cycles.
    let events = heap.subscribe();
    // The pool every thread's pooled buffers come from: small chunks, so the larger buffers
    // are unpooled mappings of the pool. Dying unreleased is how a buffer normally ends: the
    // leak detector samples them without printing.
    let native = NativePool::new(
        PoolConfig::new()
            .name("torture")
            .arenas(2)
            .chunk_size(POOL_CHUNK)
            .min_class(64)
            .leak_detection(LeakDetection::Sampled(64))
            .log_leaks(false)
            .register(false),
    )
    .expect("the torture pool's configuration is valid");
    // Each thread's buffers keep a share of the limit reachable at most (the shared pool's
    // keep their own), so that only a configured, small limit is ever reached.
    // (Every checkpoint compares them all, and the shared pool's under its lock: the caps
    // keep that a small part of a checkpoint.)
    let native_cap = (direct_limit / (4 * cfg.threads as u64)).min(512 << 10);
    let region = heap.root_region(REGION_SLOTS_PER_THREAD * cfg.threads);
    let sizes = PageSizes::for_max_heap(cfg.max_heap);
    let shared_cap = (cfg.max_heap as f64 * cfg.shared_fraction) as u64;
    let pool = Mutex::new(SharedPool::new(shared_cap));
    let stop = AtomicBool::new(false);
    // The threads share what the pool leaves of the live-set budget.
    let private_live =
        ((cfg.max_heap as f64 * cfg.live_fraction) as u64).saturating_sub(shared_cap);
    // The control meter: a plain 1 ms sleep on a thread outside the heap, for the machine's
    // own noise beside the run's longest pause and time to safepoint.
    let control_stop = AtomicBool::new(false);
    let requests_stop = AtomicBool::new(false);
    let majors_done = std::sync::atomic::AtomicU64::new(0);
    let (results, control): (Vec<(ThreadStats, Result<(), String>)>, _) =
        std::thread::scope(|sc| {
            let control = std::thread::Builder::new()
                .name("control-meter".into())
                .spawn_scoped(sc, || {
                    workloads::hiccup::control_loop(&control_stop, Duration::from_millis(1))
                })
                .expect("spawning the control meter");
            let handles: Vec<_> = (0..cfg.threads)
                .map(|t| {
                    let (heap, region, pool, stop, native, majors_done) =
                        (&heap, &region, &pool, &stop, &native, &majors_done);
                    std::thread::Builder::new()
                        .name(format!("torture-{t}"))
                        .spawn_scoped(sc, move || {
                            let seed = splitmix(cfg.seed.wrapping_add(t as u64));
                            let mut p = Program {
                                cfg,
                                heap,
                                region,
                                region_base: t * REGION_SLOTS_PER_THREAD,
                                sizes,
                                thread: t,
                                seed,
                                rng: Rng(seed),
                                next_id: ((t as u64) + 1) << 48,
                                objs: HashMap::new(),
                                model_bytes: 0,
                                levels: Vec::new(),
                                globals: Vec::new(),
                                weaks: Vec::new(),
                                region_ids: vec![None; REGION_SLOTS_PER_THREAD],
                                live_cap: private_live / cfg.threads as u64,
                                max_objects: cfg.max_objects,
                                prune_at: (0, 0),
                                est_strong: 0,
                                deadline: Instant::now() + cfg.duration,
                                unwind: false,
                                after_oom: None,
                                st: ThreadStats::default(),
                                scratch: Vec::new(),
                                shared: (shared_cap > 0).then_some(pool),
                                next_shared_id: (((t as u64) + 1) << 48) | (1 << 47),
                                stop,
                                majors_done,
                                native,
                                native_bytes: 0,
                                native_cap,
                                native_prune_at: 0,
                                direct_limit,
                                epsilon_mappings_left: EPSILON_MAPPINGS_PER_THREAD,
                            };
                            let _ = p.seed;
                            let r = std::panic::catch_unwind(AssertUnwindSafe(|| {
                                let mut m = heap
                                    .attach(&format!("torture-{t}"))
                                    .expect("attaching a mutator");
                                p.run(&mut m);
                            }));
                            let r = r.map_err(|e| {
                                // Stop the other threads: the run has failed.
                                stop.store(true, Ordering::Relaxed);
                                panic_message(&*e)
                            });
                            (p.st, r)
                        })
                        .expect("spawning a torture thread")
                })
                .collect();
            // Minor and major cycles requested in turn while the programs run.
            let requests_stop = &requests_stop;
            let stop_remembering = cfg.stop_remembering;
            let requester = cfg.minor_cycles.map(|(minors, majors)| {
                let (heap, majors_done) = (&heap, &majors_done);
                std::thread::Builder::new()
                    .name("cycle-requests".into())
                    .spawn_scoped(sc, move || {
                        while !requests_stop.load(Ordering::Relaxed) {
                            for _ in 0..minors {
                                heap.collect_minor()
                                    .expect("minor cycles need a generational concurrent heap");
                            }
                            for j in 0..majors {
                                if stop_remembering && j + 1 == majors {
                                    heap.stop_remembering_at_next_major_for_tests();
                                }
                                heap.collect("torture: major").expect("a major cycle");
                                majors_done.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                    })
                    .expect("spawning the cycle requester")
            });
            let results = handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|e| (ThreadStats::default(), Err(panic_message(&*e))))
                })
                .collect();
            requests_stop.store(true, Ordering::Relaxed);
            if let Some(r) = requester {
                r.join().expect("the cycle requester does not panic");
            }
            control_stop.store(true, Ordering::Relaxed);
            let control = control.join().expect("the control meter does not panic");
            (results, control)
        });
    let mut report = Report {
        runs: 1,
        control_max_ns: control.overshoot_ns.iter().copied().max().unwrap_or(0),
        ..Default::default()
    };
    let mut failures = Vec::new();
    let mut direct_counts = DirectCounts::default();
    for (t, (st, r)) in results.into_iter().enumerate() {
        report.add_thread(&st);
        direct_counts.add(&st.direct);
        if let Err(msg) = r {
            failures.push(format!("thread {t}: {msg}"));
        }
    }
    if failures.is_empty() {
        // Every owner dropped (the shared pool's too) and, where cycles run, two of them:
        // every buffer must have been freed exactly once and no native byte be in use.
        for r in pool
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .roots
            .iter_mut()
        {
            *r = None;
        }
        if cfg.mode != Mode::Epsilon {
            let mut m = heap.attach("torture-end").expect("attaching a mutator");
            m.scope(|s| s.collect("torture: direct buffers' end"));
            m.scope(|s| s.collect("torture: direct buffers' end"));
        }
        match direct::check_end(
            &all_stats(&heap, &events),
            &native,
            cfg.mode,
            &direct_counts,
        ) {
            Ok(()) => report.direct_end_checks = 1,
            Err(e) => failures.push(format!("end of the run: MISMATCH: {e}")),
        }
    }
    report.duration = started.elapsed();
    report.add_gc(&all_stats(&heap, &events), cfg.max_heap, &pacing);
    report.add_minors(&all_stats(&heap, &events).cycles);
    if let Some(r) = heap.remembered_set_stats() {
        report.remembered_by_barrier = r.barrier_remembered;
        report.remembered_by_relocation = r.relocation_remembered;
        report.young_slots_verified = r.verified_young_slots;
        report.majors_unremembered = r.majors_unremembered;
    }
    drop(pool);
    drop(region);
    drop(heap);
    if !failures.is_empty() {
        return Err(Box::new(Failure {
            message: format!(
                "{what} FAILED:\n{}\nreplay with: {replay}",
                failures.join("\n")
            ),
            report,
        }));
    }
    eprintln!("{what}: ok\n{report}");
    Ok(report)
}
