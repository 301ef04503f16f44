//! A root region cleared by a thread that is not a running mutator (`RootRegion::clear_from`
//! needs no scope, and the region is `Sync`) while the collector's pauses heal its slots:
//! a null stored during Pause Mark Start or Pause Relocate Start must stay null (the pause
//! heals a slot with a CAS from the value it loaded, never with a plain store).
//!
//! Each round, the mutator fills a large region with pointers to one object, then waits in a
//! blocking region while another thread clears every slot once and checks that they stay
//! null while cycles run back to back. The test reports how many clears overlapped a pause
//! (the pause count moved during the clear) and fails if none did, so it cannot pass without
//! racing the pauses it is about.

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
    let (done_tx, done_rx) = mpsc::channel::<Result<bool, String>>();
    let start = Instant::now();
    let mut rounds = 0u64;
    let mut overlapped = 0u64;
    let pauses = || heap.stats().pauses.len();
    std::thread::scope(|sc| {
        let region = &region;
        let pauses = &pauses;
        sc.spawn(move || {
            // The clearing thread: not attached to the heap at all.
            while go_rx.recv().is_ok() {
                let before = pauses();
                region.clear_from(0);
                let during = pauses() != before;
                let deadline = Instant::now() + Duration::from_millis(5);
                let mut bad = None;
                while Instant::now() < deadline && bad.is_none() {
                    bad = (0..SLOTS).find(|&i| !region.is_null(i));
                }
                let r = match bad {
                    Some(i) => Err(format!("slot {i} was cleared and holds an object again")),
                    None => Ok(during),
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
                    Ok(during) => overlapped += during as u64,
                    Err(e) => panic!("round {rounds}: {e}"),
                }
            }
        });
        drop(go_tx);
    });
    eprintln!("{rounds} rounds, {overlapped} clears overlapped a pause");
    assert!(
        overlapped > 0,
        "no clear overlapped a pause in {rounds} rounds: the test missed its race"
    );
}
