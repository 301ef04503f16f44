//! Mutator pacing: a mutator that outruns the collector on a small heap — a live set of many
//! small objects (slow to mark with one GC thread) and garbage allocated in 32 KiB arrays
//! (fast to allocate) — with pacing on, then off, then in `stw` mode.
//!
//! What is asserted is what holds on any machine, however loaded: with pacing on the pacing
//! path is reached (delays are recorded), no delay exceeds the configured cap, and no window
//! of the floor holds more imposed delay than the floor allows (half of any 10 ms, the
//! default) but for the part of each delay the records mark as beyond the floor (where it
//! yielded to free memory about to run out; how many did is printed); with pacing off, and in `stw` mode, no delay is ever recorded. How the stalls compare (count, total,
//! longest) depends on the machine's timing, so it is printed, not asserted. Bad pacing
//! settings are refused with an error naming the setting.

mod support;

use gc_runtime::{GcStats, Heap, HeapConfig, HeapError, Mode, PacingConfig, PacingRecord};
use std::time::{Duration, Instant};

const MIB: u64 = 1 << 20;
const HEAP: u64 = 64 * MIB;
/// Nodes of the live set: 32 bytes each, about 24 MiB.
const LIVE_NODES: usize = 768 * 1024;
/// Table slots the live set hangs from (a list of nodes per slot).
const TABLE_SLOTS: usize = 4096;
/// Raw bytes of each garbage array.
const GARBAGE_BYTES: usize = 32 * 1024;
/// The pacing cap of the paced run.
const MAX_DELAY: Duration = Duration::from_millis(5);

/// What one run saw.
struct Outcome {
    stats: GcStats,
    allocated_mib: u64,
    ooms: u64,
    secs: f64,
}

/// Build the live set, then allocate garbage for at least `min` (and, while `more_wanted`
/// says so, up to `max`).
fn run(
    config: HeapConfig,
    min: Duration,
    max: Duration,
    more_wanted: fn(&GcStats) -> bool,
) -> Outcome {
    let heap = Heap::new(config).expect("creating the heap");
    let mut m = heap.attach("mutator").unwrap();
    let mut ooms = 0u64;
    let start = Instant::now();
    m.scope(|s| {
        let table = s.alloc(1, TABLE_SLOTS as u32, 0).unwrap();
        // Node i holds payload i in list i % TABLE_SLOTS.
        support::build_live_set(s, table, TABLE_SLOTS, LIVE_NODES);
        let mut n = 0u64;
        loop {
            if n.is_multiple_of(64) {
                let t = start.elapsed();
                if t >= max || (t >= min && !more_wanted(&heap.stats())) {
                    break;
                }
            }
            s.scope(|s| {
                if s.alloc(3, 0, GARBAGE_BYTES).is_err() {
                    ooms += 1;
                }
            });
            n += 1;
        }
        // The live set survived.
        let mut count = 0;
        for slot in 0..TABLE_SLOTS {
            let mut cur = s.get(table).load(slot);
            while let Some(node) = cur {
                count += 1;
                cur = node.load(0);
            }
        }
        assert_eq!(count, LIVE_NODES, "the live set lost nodes");
    });
    let secs = start.elapsed().as_secs_f64();
    drop(m);
    let stats = heap.stats();
    Outcome {
        allocated_mib: stats.allocated_bytes / MIB,
        stats,
        ooms,
        secs,
    }
}

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

fn describe(what: &str, o: &Outcome) {
    let stalls: Vec<u64> = o.stats.stalls.iter().map(|s| s.duration_ns).collect();
    let delays: Vec<u64> = o.stats.pacing.iter().map(|p| p.duration_ns).collect();
    println!(
        "{what}: {:.1}s, {} MiB allocated, {} cycles, {} OOM errors; stalls: {} (total {:.1} ms, \
         longest {:.1} ms); pacing delays: {} (total {:.1} ms, longest {:.2} ms)",
        o.secs,
        o.allocated_mib,
        o.stats.cycles.len(),
        o.ooms,
        stalls.len(),
        ms(stalls.iter().sum()),
        ms(stalls.iter().copied().max().unwrap_or(0)),
        delays.len(),
        ms(delays.iter().sum()),
        ms(delays.iter().copied().max().unwrap_or(0)),
    );
}

/// The most imposed delay time within the floor any window of `window` ns holds, of
/// `records` (one thread's, in time order), and how many records that window overlaps: the
/// worst window ends where a delay ends. The part of a delay beyond the floor
/// (`beyond_floor_ns`, where the floor yielded to free memory about to run out) is left out.
fn worst_window(records: &[PacingRecord], window: u64) -> (u64, u64) {
    let span = |p: &PacingRecord| {
        let within = p.imposed_ns.saturating_sub(p.beyond_floor_ns);
        (p.start_at_ns, p.start_at_ns + within)
    };
    records
        .iter()
        .map(|p| {
            let end = span(p).1;
            let from = end.saturating_sub(window);
            let mut held = 0;
            let mut n = 0;
            for q in records {
                let (a, b) = span(q);
                let overlap = b.min(end).saturating_sub(a.max(from));
                if overlap > 0 {
                    held += overlap;
                    n += 1;
                }
            }
            (held, n)
        })
        .max()
        .unwrap_or((0, 0))
}

fn config(mode: Mode, pacing: bool) -> HeapConfig {
    HeapConfig::new(HEAP)
        .mode(mode)
        .gc_threads(1)
        .pacing(pacing)
        .pacing_max_delay(MAX_DELAY)
}

#[test]
fn pacing_slows_a_mutator_that_outruns_the_collector() {
    // Paced: run 2 s, and on (up to 30 s) until a few delays were recorded.
    let on = run(
        config(Mode::Concurrent, true),
        Duration::from_secs(2),
        Duration::from_secs(30),
        |st| st.pacing.len() < 10,
    );
    describe("pacing on ", &on);
    // Unpaced, for comparison: the same 2 s.
    let off = run(
        config(Mode::Concurrent, false),
        Duration::from_secs(2),
        Duration::from_secs(2),
        |_| false,
    );
    describe("pacing off", &off);

    assert!(
        !on.stats.pacing.is_empty(),
        "pacing on, a mutator outrunning the collector was never paced"
    );
    let cap = MAX_DELAY.as_nanos() as u64;
    for p in &on.stats.pacing {
        assert!(
            p.imposed_ns > 0 && p.imposed_ns <= cap,
            "a pacing delay of {} ns was imposed, outside (0, {cap}] ns: {p:?}",
            p.imposed_ns
        );
        // A sleep never ends early: the time held is at least the delay imposed.
        assert!(p.duration_ns >= p.imposed_ns, "{p:?}");
        assert!(p.beyond_floor_ns <= p.imposed_ns, "{p:?}");
        assert_eq!(p.thread, "mutator");
    }
    // The floor, on the delays imposed (the records keep when each sleep began, as the pacer
    // counted it): no 10 ms window holds more than 5 ms of them. (1 ns per record of slack:
    // the record's clock rounds to whole nanoseconds.)
    let floor = PacingConfig::default();
    let window = floor.window.as_nanos() as u64;
    let budget = (window as f64 * (1.0 - floor.min_mutator_share)) as u64;
    let (worst, n) = worst_window(&on.stats.pacing, window);
    let beyond: Vec<u64> = on
        .stats
        .pacing
        .iter()
        .map(|p| p.beyond_floor_ns)
        .filter(|&b| b > 0)
        .collect();
    println!(
        "pacing on : worst {} ms window held {:.2} ms of imposed delays within the floor \
         (floor allows {:.2}); {} delays went {:.2} ms beyond it in all",
        window / 1_000_000,
        ms(worst),
        ms(budget),
        beyond.len(),
        ms(beyond.iter().sum())
    );
    assert!(
        worst <= budget + n,
        "a {window} ns window held {worst} ns of pacing delays, over the floor's {budget} ns"
    );
    assert!(
        off.stats.pacing.is_empty(),
        "pacing off, yet {} delays were recorded",
        off.stats.pacing.len()
    );
}

#[test]
fn stw_heaps_never_pace() {
    let stw = run(
        config(Mode::Stw, true),
        Duration::from_secs(1),
        Duration::from_secs(1),
        |_| false,
    );
    describe("stw, pacing on", &stw);
    assert!(!stw.stats.cycles.is_empty(), "no stw cycle ran");
    assert!(
        stw.stats.pacing.is_empty(),
        "a stw heap paced its mutator: {:?}",
        stw.stats.pacing.first()
    );
}

#[test]
fn bad_pacing_settings_are_refused() {
    for bad in [Duration::ZERO, Duration::from_secs(2)] {
        let c = HeapConfig::new(HEAP).pacing_max_delay(bad);
        let e = c.validate().unwrap_err();
        assert!(
            matches!(
                e,
                HeapError::InvalidSetting {
                    setting: "pacing_max_delay",
                    ..
                }
            ),
            "{e:?}"
        );
        assert!(e.to_string().contains("between 1 µs and 1 s"), "{e}");
        // Heap::new checks it too.
        let e = Heap::new(c).err().expect("a heap with a bad pacing cap");
        assert!(e.to_string().contains("pacing_max_delay"), "{e}");
    }
    let mut c = HeapConfig::new(HEAP);
    c.pacing.duration_margin = f64::NAN;
    let e = c.validate().unwrap_err();
    assert!(e.to_string().contains("pacing_duration_margin"), "{e}");
    // The floor: a share in [0, 1) and a window of 1 ms to 1 s, each named with what to give.
    for (share, window, setting, hint) in [
        (
            1.0,
            10,
            "pacing_min_mutator_share",
            "at least 0 and below 1",
        ),
        (
            -0.5,
            10,
            "pacing_min_mutator_share",
            "at least 0 and below 1",
        ),
        (
            f64::NAN,
            10,
            "pacing_min_mutator_share",
            "at least 0 and below 1",
        ),
        (0.5, 0, "pacing_window", "between 1 ms and 1 s"),
        (0.5, 2000, "pacing_window", "between 1 ms and 1 s"),
    ] {
        let c = HeapConfig::new(HEAP).pacing_floor(share, Duration::from_millis(window));
        let e = Heap::new(c).err().expect("a heap with a bad pacing floor");
        let msg = e.to_string();
        assert!(msg.contains(setting) && msg.contains(hint), "{msg}");
    }
    assert!(HeapConfig::new(HEAP)
        .pacing_floor(0.0, Duration::from_secs(1))
        .validate()
        .is_ok());
    // Off, the cap is still checked (it would apply when turned on), and the defaults pass.
    assert!(HeapConfig::new(HEAP).validate().is_ok());
    assert!(HeapConfig::new(HEAP).pacing(false).validate().is_ok());
}
