//! A relocation set's forwarding tables are freed once the set is reset and the forwarding
//! index's deferred references are gone: the set keeps each table until then (so that the
//! collector's driver, not a mutator running a deferred drop, frees it), and the memory
//! report counts it meanwhile. Once nothing is left to relocate, the tables' bytes must fall
//! to 0 within a few cycles, and must have been above 0 (a set was relocated) first.

use gc_runtime::{Heap, HeapConfig, Mode};

#[test]
fn a_reset_sets_tables_are_counted_then_freed() {
    let h = Heap::new(
        HeapConfig::new(32 << 20)
            .mode(Mode::Concurrent)
            .verify(true),
    )
    .unwrap();
    let mut m = h.attach("main").unwrap();
    const KEPT: usize = 8192;
    let after_relocation = m.scope(|s| {
        let keep = s.alloc(1, KEPT as u32, 0).unwrap();
        // Kept objects between garbage of the same size: every page they are on is sparse.
        for k in 0..KEPT {
            s.scope(|s| {
                let o = s.alloc(2, 0, 64).unwrap();
                s.get(o).write_u64(0, k as u64);
                s.store(keep, k, Some(o));
                for _ in 0..3 {
                    s.alloc(2, 0, 64).unwrap();
                }
            });
        }
        s.collect("test");
        let after_relocation = h.memory_report().forwarding_table_bytes;
        for k in 0..KEPT {
            let o = s.load(keep, k).expect("kept object");
            assert_eq!(s.get(o).read_u64(0), k as u64, "object {k}");
        }
        after_relocation
    });
    let relocated: u64 = h.stats().cycles.iter().map(|c| c.pages_relocated).sum();
    assert!(
        relocated > 0 && after_relocation > 0,
        "no relocation set with tables was reached ({relocated} pages relocated, \
         {after_relocation} table bytes)"
    );
    // Nothing is live any more: later cycles free every page as empty and relocate none, so
    // only retired tables could still be counted.
    let mut collects = 0;
    m.scope(|s| {
        while h.memory_report().forwarding_table_bytes != 0 && collects < 20 {
            s.collect("test");
            collects += 1;
        }
    });
    assert_eq!(
        h.memory_report().forwarding_table_bytes,
        0,
        "the tables of reset sets were still held after {collects} collects"
    );
    let late: u64 = h
        .stats()
        .cycles
        .iter()
        .rev()
        .take(collects)
        .map(|c| c.pages_relocated)
        .sum();
    assert_eq!(late, 0, "a cycle with nothing live relocated pages");
}
