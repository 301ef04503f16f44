//! Fuzz target of `HeapConfig`, the settings an embedder passes to `Heap::new` (often from
//! its own configuration files or flags): every field gets random values, extremes included
//! (0, 1, the edges of each documented range, `usize::MAX`, `u64::MAX`, `u32::MAX`, NaN and
//! infinite factors, `Duration::MAX`), in random combinations. `Heap::new` must either refuse
//! the configuration with an error that has a message (`InvalidSetting` naming the setting,
//! or a heap-geometry error), or give a heap that works: a mutator attaches, allocates small
//! and medium objects, runs a cycle, reads its data back, and the heap drops. Never a panic,
//! an abort or a hang (each case has a timeout).
//!
//! Heaps that can be created are kept small (at most 64 MiB, at most 8 GC threads): the
//! huge values are drawn only where they are refused, so a run never maps gigabytes.
//! Requires that some configurations were accepted, and that the refusals reached the checks
//! of the thread count, handle capacity, director interval, pacing and heap size.

use gc_runtime::{HeapConfig, HeapError, HeapTarget, Mode};
use integration_tests::fuzz::{Budget, Rng, Tally};
use std::sync::mpsc;
use std::time::Duration;

const FILE: &str = "fuzz_heap_config";
const TEST: &str = "heap_configs";
const MIB: u64 = 1 << 20;

fn duration(rng: &mut Rng, typical: &[Duration]) -> Duration {
    match rng.below(6) {
        0 => Duration::ZERO,
        1 => Duration::MAX,
        2 => Duration::from_nanos(rng.wide()),
        _ => *rng.pick(typical),
    }
}

/// A random configuration.
fn config(rng: &mut Rng) -> HeapConfig {
    let max_heap = match rng.below(12) {
        0 => 0,
        1 => 1,
        2 => u64::MAX,
        3 => (1 << 44) + 2 * MIB,
        4 => rng.below(64 * MIB),
        5 => gc_runtime::physical_memory_bytes().unwrap_or(1 << 40) + 2 * MIB,
        _ => rng.range(1, 32) * 2 * MIB,
    };
    let mut c = HeapConfig::new(max_heap).mode(*rng.pick(&Mode::ALL));
    if rng.chance(300) {
        c.memory.initial_heap = match rng.below(3) {
            0 => u64::MAX,
            1 => max_heap,
            _ => rng.below(max_heap.min(64 * MIB) + 1),
        };
    }
    if rng.chance(400) {
        c.gc_threads = *rng.pick(&[0, 1, 2, 3, 8, 1025, usize::MAX]);
    }
    if rng.chance(300) {
        c.handle_capacity = *rng.pick(&[0, 1, 2, 100, 1 << 28, (1 << 28) + 1, usize::MAX]);
    }
    c.verify = rng.chance(100);
    c.director.continuous = rng.chance(150);
    c.director.proactive = rng.chance(500);
    if rng.chance(250) {
        c.director.interval = duration(
            rng,
            &[
                Duration::from_micros(99),
                Duration::from_micros(100),
                Duration::from_secs(10),
            ],
        );
    }
    if rng.chance(250) {
        c.director.timer = rng.chance(800).then(|| {
            duration(
                rng,
                &[
                    Duration::from_millis(1),
                    Duration::from_millis(5),
                    Duration::from_micros(999),
                ],
            )
        });
    }
    if rng.chance(300) {
        c.director.heap_target = Some(HeapTarget {
            min_bytes: *rng.pick(&[0, 1, 16 * MIB, u64::MAX]),
            growth_percent: *rng.pick(&[0, 1, 100, u32::MAX - 99, u32::MAX]),
        });
    }
    if rng.chance(300) {
        c.pacing.enabled = rng.chance(500);
        c.pacing.max_delay = duration(
            rng,
            &[
                Duration::from_micros(1),
                Duration::from_secs(1),
                Duration::from_millis(1),
            ],
        );
    }
    if rng.chance(250) {
        c.pacing.quantum = *rng.pick(&[0, 1, 4 << 10, 64 << 20, (64 << 20) + 1, u64::MAX]);
    }
    if rng.chance(200) {
        c.pacing.duration_margin =
            *rng.pick(&[f64::NAN, f64::INFINITY, -1.0, 0.0, 1.0, 10.0, 10.5]);
    }
    if rng.chance(250) {
        c.uncommit_delay = rng.chance(800).then(|| {
            duration(
                rng,
                &[
                    Duration::from_secs(365 * 24 * 3600),
                    Duration::from_millis(1),
                ],
            )
        });
    }
    if rng.chance(250) {
        c.max_direct_memory = Some(*rng.pick(&[0, 1, MIB, u64::MAX]));
    }
    if rng.chance(250) {
        c.relocation_reserve = Some(*rng.pick(&[0, 1, 2 * MIB, max_heap / 2, max_heap, u64::MAX]));
    }
    if rng.chance(500) {
        c.mark_colors = gc_runtime::ColorChoice::Rotate;
    }
    c
}

/// A heap that was created must work: allocate, collect, read back.
fn exercise(heap: &gc_runtime::Heap) -> &'static str {
    let mut m = heap.attach("fuzz").expect("attach to a new heap");
    m.scope(|s| {
        let Ok(keep) = s.alloc(1, 1, 16) else {
            return "ok: out of memory";
        };
        s.get(keep).write_u64(0, 0x5eed);
        // One handle per nested scope: a capacity of 2 handles is enough (running out of
        // handles is a documented panic, not a case).
        let room = heap.config().handle_capacity >= 2;
        for i in 0..if room { 200u32 } else { 0 } {
            let size = if i % 50 == 0 { 300 << 10 } else { 64 };
            if s.scope(|s| s.alloc(2, 0, size).is_err()) {
                break;
            }
        }
        if heap.config().mode != Mode::Epsilon {
            s.collect("fuzz");
        }
        assert_eq!(s.get(keep).read_u64(0), 0x5eed, "an object lost its data");
        "ok"
    })
}

fn case(seed: u64) -> String {
    let mut rng = Rng::new(seed);
    let c = config(&mut rng);
    let small = c.memory.max_heap <= 64 * MIB && c.gc_threads <= 8;
    match gc_runtime::Heap::new(c) {
        Ok(heap) => {
            assert!(
                small,
                "a heap larger than this target lets through was created"
            );
            exercise(&heap).to_string()
        }
        Err(e) => {
            let msg = e.to_string();
            assert!(!msg.trim().is_empty(), "an error without a message: {e:?}");
            match e {
                HeapError::InvalidSetting { setting, problem } => {
                    assert!(!problem.is_empty() && msg.starts_with(setting), "{msg}");
                    format!("refused: {setting}")
                }
                other => {
                    let d = format!("{other:?}");
                    let name = d.split(|c: char| !c.is_alphanumeric()).next().unwrap_or("");
                    format!("refused: {name}")
                }
            }
        }
    }
}

#[test]
fn heap_configs() {
    let mut budget = Budget::from_env(2000);
    let mut tally = Tally::new();
    while let Some(seed) = budget.next_seed() {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let r = std::panic::catch_unwind(|| case(seed));
            let _ = tx.send(r);
        });
        let fail = |what: &str| -> ! {
            panic!(
                "{TEST}: case {seed:#x} {what}; replay: {}",
                Budget::replay_command(FILE, TEST, seed)
            )
        };
        match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(Ok(class)) => tally.add(&class),
            Ok(Err(_)) => fail("panicked"),
            Err(_) => fail("did not finish in 60 s (a hang)"),
        }
    }
    eprintln!("{}", tally.summary(TEST, budget.elapsed()));
    tally.require(
        TEST,
        &[
            "ok",
            "refused: gc_threads",
            "refused: handle_capacity",
            "refused: director_interval",
            "refused: pacing",
            "refused: max_heap",
            "refused: ZeroHeap",
            "refused: UnalignedHeap",
        ],
        300,
    );
}
