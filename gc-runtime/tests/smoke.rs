//! Smoke tests: allocate, collect, read back; objects on sparse pages move.
use gc_runtime::{Heap, HeapConfig, LogLevel, Mode};

fn heap(mode: Mode) -> Heap {
    Heap::new(
        HeapConfig::new(64 << 20)
            .mode(mode)
            .verify(true)
            .log(LogLevel::Phases),
    )
    .unwrap()
}

#[test]
fn list_survives_cycles_and_moves() {
    for mode in [Mode::Concurrent, Mode::Stw] {
        let h = heap(mode);
        let mut m = h.attach("main").unwrap();
        m.scope(|s| {
            let head = s.alloc(1, 1, 8).unwrap();
            s.get(head).write_u64(0, 0);
            let mut tail = head;
            for i in 1..2000u64 {
                // garbage in between so pages are sparse
                for _ in 0..4 {
                    s.alloc(9, 0, 64).unwrap();
                }
                let n = s.alloc(1, 1, 8).unwrap();
                s.get(n).write_u64(0, i);
                s.store(tail, 0, Some(n));
                tail = n;
                if i % 200 == 0 {
                    s.scope(|_| {});
                }
            }
            let before = s.address_of(head);
            for _ in 0..3 {
                s.collect("test");
            }
            let after = s.address_of(head);
            // walk and check
            let mut cur = Some(head);
            let mut i = 0;
            while let Some(c) = cur {
                assert_eq!(s.get(c).read_u64(0), i);
                i += 1;
                cur = s.load(c, 0);
            }
            assert_eq!(i, 2000);
            assert_ne!(before, after, "{mode}: head should have moved");
        });
        let st = h.stats();
        assert!(st.cycles.len() >= 3, "{mode}");
    }
}
