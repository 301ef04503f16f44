//! The safepoint timeout (HotSpot's `-XX:+SafepointTimeout`): a pause that waits longer than
//! `SAFEPOINT_TIMEOUT` for its mutators names the ones still running, with what each said it
//! was doing and its scheduler state, in the heap's records (`GcStats::safepoint_timeouts`)
//! and the GC log.
//!
//! The mutator here stays in its own code, inside a scope and without polling, until the
//! records count the timeout (so the test waits for a state, not for a duration: on a loaded
//! machine the timeout only comes later), then polls.

use gc_runtime::safepoint::SAFEPOINT_TIMEOUT;
use gc_runtime::{Activity, Heap, HeapConfig, Mode};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

const MIB: u64 = 1 << 20;

/// How long the test waits for the collector to reach a state before it fails (a bound on a
/// hang, far above any wait of a working collector, loaded machine or not).
const HANG: Duration = Duration::from_secs(120);

#[test]
fn a_pause_names_the_mutator_that_keeps_it_waiting() {
    let heap = Heap::new(HeapConfig::new(32 * MIB).mode(Mode::Concurrent)).unwrap();
    let entered = AtomicBool::new(false);
    std::thread::scope(|sc| {
        sc.spawn(|| {
            let mut m = heap.attach("spinner").unwrap();
            m.scope(|s| {
                let keep = s.alloc(1, 0, 8).unwrap();
                entered.store(true, Ordering::SeqCst);
                // No poll until the pause in progress has timed out.
                let start = Instant::now();
                while heap.stats().totals.safepoint_timeouts == 0 {
                    assert!(start.elapsed() < HANG, "no safepoint timeout was counted");
                    std::hint::spin_loop();
                }
                s.poll();
                assert_eq!(s.get(keep).read_u64(0), 0);
            });
        });
        while !entered.load(Ordering::SeqCst) {
            std::thread::yield_now();
        }
        // Its Pause Mark Start waits for the spinner.
        heap.collect("safepoint timeout test").unwrap();
    });

    let st = heap.stats();
    assert_eq!(
        st.totals.safepoint_timeouts, 1,
        "{:?}",
        st.safepoint_timeouts
    );
    let [rec] = &st.safepoint_timeouts[..] else {
        panic!("one record expected: {:?}", st.safepoint_timeouts);
    };
    assert_eq!(rec.kind, gc_runtime::PauseKind::MarkStart);
    assert!(
        rec.time_to_safepoint_ns >= SAFEPOINT_TIMEOUT.as_nanos() as u64,
        "a pause reported before its timeout: {rec:?}"
    );
    let [s] = &rec.stragglers[..] else {
        panic!("the spinner alone kept the pause waiting: {rec:?}");
    };
    assert_eq!((s.thread.as_str(), s.doing), ("spinner", Activity::Code));
    if std::path::Path::new("/proc/self/task").exists() {
        // Spinning: running, or runnable waiting for a core — or, at the instant it is
        // named, asleep on the statistics' lock its loop takes to read the count (which the
        // timed-out pause takes to record the timeout): seen in CI on a loaded machine.
        assert!(
            matches!(s.run_state, Some('R') | Some('S')),
            "the straggler's state read from /proc: {rec:?}"
        );
    }
    // The pause record agrees.
    let pause = st
        .pauses
        .iter()
        .find(|p| p.start_at_ns == rec.start_at_ns)
        .expect("the pause that timed out is recorded");
    assert_eq!(pause.time_to_safepoint_ns, rec.time_to_safepoint_ns);
}

#[test]
fn a_blocked_mutator_is_never_named() {
    let heap = Heap::new(HeapConfig::new(32 * MIB).mode(Mode::Concurrent)).unwrap();
    let mut m = heap.attach("poller").unwrap();
    m.scope(|s| {
        for _ in 0..3 {
            s.collect("safepoint timeout test");
        }
    });
    let st = heap.stats();
    assert!(st.pauses.len() >= 9, "{} pauses", st.pauses.len());
    // A mutator that polls (or, here, waits as a blocked thread) keeps no pause waiting:
    // whatever the load, a pause reports only mutators still running at the timeout.
    assert!(
        st.safepoint_timeouts
            .iter()
            .all(|r| r.stragglers.iter().all(|s| s.thread != "poller")),
        "{:?}",
        st.safepoint_timeouts
    );
}
