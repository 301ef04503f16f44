//! `HeapConfig::new` reads no environment and `HeapConfig::from_env` reads it, with the real
//! process environment: the variables are set here, so this is the only test in its binary
//! (no other test reads the environment while it changes).

use gc_runtime::{Heap, HeapConfig, LogLevel, GC_THREADS_ENV, LOG_ENV, MEMBARRIER_ENV, PACING_ENV};
use std::time::Duration;

#[test]
fn new_ignores_the_environment_and_from_env_reads_it_or_names_a_bad_variable() {
    let defaults = HeapConfig::new(64 << 20);
    std::env::set_var(LOG_ENV, "gc");
    std::env::set_var(GC_THREADS_ENV, "7");
    std::env::set_var(PACING_ENV[0], "32K");
    std::env::set_var(PACING_ENV[1], "500");

    // `new` (and a heap made from it) does not see them.
    let plain = HeapConfig::new(64 << 20);
    assert_eq!(plain.log, LogLevel::Off);
    assert_eq!(plain.gc_threads, defaults.gc_threads);
    assert_eq!(plain.pacing, defaults.pacing);
    let heap = Heap::new(plain).unwrap();
    assert_eq!(heap.config().log, LogLevel::Off);
    drop(heap);

    // `from_env` does, and settings made after it win.
    let env = HeapConfig::from_env(64 << 20).unwrap();
    assert_eq!(env.log, LogLevel::Gc);
    assert_eq!(env.gc_threads, 7);
    assert_eq!(env.pacing.quantum, 32 << 10);
    assert_eq!(env.pacing.max_delay, Duration::from_micros(500));
    assert_eq!(env.log(LogLevel::Off).log, LogLevel::Off);

    // A malformed value is an error that names the variable and what it accepts.
    std::env::set_var(GC_THREADS_ENV, "many");
    let e = HeapConfig::from_env(64 << 20).unwrap_err();
    assert_eq!(e.variable, GC_THREADS_ENV);
    let msg = e.to_string();
    assert!(
        msg.contains("ZRS_GC_THREADS") && msg.contains("\"many\"") && msg.contains("1 or more"),
        "{msg}"
    );
    std::env::set_var(GC_THREADS_ENV, "2");
    std::env::set_var(LOG_ENV, "loud");
    let e = HeapConfig::from_env(64 << 20).unwrap_err();
    assert_eq!(e.variable, LOG_ENV);
    assert!(e.to_string().contains("off, gc, phases or debug"), "{e}");

    for v in [LOG_ENV, GC_THREADS_ENV, PACING_ENV[0], PACING_ENV[1]] {
        std::env::remove_var(v);
    }

    // The safepoint's barrier: `off` gives fences, whatever the system offers; the heap's
    // statistics say which one it uses.
    std::env::set_var(MEMBARRIER_ENV, "off");
    let heap = Heap::new(HeapConfig::from_env(64 << 20).unwrap()).unwrap();
    assert_eq!(heap.stats().safepoint_barrier, "fences");
    drop(heap);
    std::env::set_var(MEMBARRIER_ENV, "maybe");
    let e = HeapConfig::from_env(64 << 20).unwrap_err();
    assert_eq!(e.variable, MEMBARRIER_ENV);
    assert!(e.to_string().contains("use off (the default"), "{e}");
    std::env::remove_var(MEMBARRIER_ENV);
    // Unset: fences, the default.
    let heap = Heap::new(HeapConfig::from_env(64 << 20).unwrap()).unwrap();
    assert_eq!(heap.stats().safepoint_barrier, "fences");
    drop(heap);
    // `on`: membarrier where the system offers it.
    std::env::set_var(MEMBARRIER_ENV, "on");
    let heap = Heap::new(HeapConfig::from_env(64 << 20).unwrap()).unwrap();
    assert!(
        ["membarrier", "fences"].contains(&heap.stats().safepoint_barrier.as_str()),
        "{:?}",
        heap.stats().safepoint_barrier
    );
    drop(heap);
    std::env::remove_var(MEMBARRIER_ENV);
    assert_eq!(HeapConfig::from_env(64 << 20).unwrap().log, LogLevel::Off);
}
