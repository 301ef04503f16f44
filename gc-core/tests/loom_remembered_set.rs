//! Loom model of the remembered set (`gc_core::RememberedSet`, generic over the atomic word,
//! so loom runs the collector's own code): a young collection scanning the previous bitmap
//! and re-remembering a slot that still points young, while two mutators' store barriers
//! remember slots in the current bitmap — one of them the very slot the scanner re-remembers,
//! the other in the same bitmap word. Nothing is lost, nothing is counted twice, and the scan
//! sees exactly the last interval's slots and leaves its bitmap empty.
//!
//! The flip between the intervals is a pause; here it is the main thread's joins of the
//! first interval's barriers, which order them before the scan as the safepoint does.

use gc_core::sync::loom::LoomWord;
use gc_core::{RememberedSet, RemsetIndex};
use loom::sync::Arc;
use loom::thread;

#[test]
fn scan_and_store_barriers_lose_no_slot() {
    loom::model(|| {
        let set: Arc<RememberedSet<LoomWord>> = Arc::new(RememberedSet::new(1024));
        let first = RemsetIndex::FIRST;
        // The first interval: two barriers remember slots 3 and 5 (one bitmap word), one on a
        // thread of its own, one on the main thread (loom allows four threads in all).
        let barrier = {
            let set = set.clone();
            thread::spawn(move || set.remember(first, 3))
        };
        assert!(set.remember(first, 5));
        assert!(barrier.join().unwrap(), "each first store sets its own bit");
        // Pause Mark Start of a young collection: flip.
        let cur = first.flipped();
        // The scan (slot 3 still points young, slot 5 no longer) beside two barriers of the
        // new interval: one stores a young pointer into slot 3 again, the main thread one into slot 9 (the same
        // bitmap word).
        let scanner = {
            let set = set.clone();
            thread::spawn(move || {
                let mut seen = vec![];
                let mut again = false;
                set.drain_previous(cur, |w| {
                    seen.push(w);
                    if w == 3 {
                        again = set.remember(cur, w);
                    }
                });
                (seen, again)
            })
        };
        let store = {
            let set = set.clone();
            thread::spawn(move || set.remember(cur, 3))
        };
        let set_9 = set.remember(cur, 9);
        let (seen, scanner_set_3) = scanner.join().unwrap();
        let set_3 = store.join().unwrap();
        assert_eq!(seen, vec![3, 5], "the scan sees exactly the last interval");
        assert!(set_9, "slot 9 was new in this interval");
        assert!(
            scanner_set_3 ^ set_3,
            "exactly one of the scanner and the barrier set slot 3's bit"
        );
        assert_eq!(set.count(cur.previous()), 0, "the scanned bitmap is empty");
        assert_eq!(set.count(cur), 2);
        assert!(set.is_remembered(cur, 3) && set.is_remembered(cur, 9));
    });
}
