//! A root region cleared by a thread that is not a running mutator (`RootRegion::clear_from`
//! needs no scope, and the region is `Sync`) while the collector heals its slots in Concurrent
//! Mark Roots: a null stored meanwhile must stay null (the collector heals a slot with a CAS
//! from the value it loaded, never with a plain store).
//!
//! Each round, the mutator fills a large region with pointers to one object, then waits in a
//! blocking region while another thread clears every slot once and checks that they stay
//! null while cycles run back to back. The test reports how many clears overlapped a
//! Concurrent Mark Roots phase (from the cycles' phase records) and fails if none did, so it
//! cannot pass without racing the root scan it is about.

use gc_runtime::{Heap, HeapConfig, Mode};
use std::sync::mpsc;
use std::time::{Duration, Instant};

#[test]
fn a_null_stored_during_a_pause_stays_null() {
    let heap = Heap::new(
        HeapConfig::new(16 << 20)
            .mode(Mode::Concurrent)
            .continuous(true),
    )
    .unwrap();
    const SLOTS: usize = 100_000;
    let region = heap.root_region(SLOTS);
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let (done_tx, done_rx) = mpsc::channel::<Result<(u64, u64), String>>();
    let start = Instant::now();
    let mut rounds = 0u64;
    let mut clears = Vec::new();
    let uptime = || heap.uptime_ns();
    std::thread::scope(|sc| {
        let region = &region;
        let uptime = &uptime;
        sc.spawn(move || {
            // The clearing thread: not attached to the heap at all.
            while go_rx.recv().is_ok() {
                let t0 = uptime();
                region.clear_from(0);
                let window = (t0, uptime());
                let deadline = Instant::now() + Duration::from_millis(5);
                let mut bad = None;
                while Instant::now() < deadline && bad.is_none() {
                    bad = (0..SLOTS).find(|&i| !region.is_null(i));
                }
                let r = match bad {
                    Some(i) => Err(format!("slot {i} was cleared and holds an object again")),
                    None => Ok(window),
                };
                if done_tx.send(r).is_err() {
                    break;
                }
            }
        });
        let mut m = heap.attach("filler").unwrap();
        m.scope(|s| {
            let o = s.alloc(1, 0, 8).unwrap();
            while start.elapsed() < Duration::from_secs(6) {
                for i in 0..SLOTS {
                    region.set_local(s, i, Some(o));
                }
                go_tx.send(()).unwrap();
                let r = s.blocking(|| done_rx.recv().unwrap());
                rounds += 1;
                match r {
                    Ok(window) => clears.push(window),
                    Err(e) => panic!("round {rounds}: {e}"),
                }
            }
        });
        drop(go_tx);
    });
    let scans: Vec<(u64, u64)> = heap
        .stats()
        .cycles
        .iter()
        .flat_map(|c| c.phases.iter())
        .filter(|p| p.name == gc_runtime::GcPhase::ConcurrentMarkRoots)
        .map(|p| (p.start_at_ns, p.start_at_ns + p.duration_ns))
        .collect();
    let overlapped = clears
        .iter()
        .filter(|(a, b)| scans.iter().any(|(s, e)| a < e && s < b))
        .count();
    eprintln!(
        "{rounds} rounds, {} root scans, {overlapped} clears overlapped a scan",
        scans.len()
    );
    assert!(
        overlapped > 0,
        "no clear overlapped a Concurrent Mark Roots phase in {rounds} rounds: the test missed \
         its race"
    );
}
