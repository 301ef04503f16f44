//! Relocation under memory pressure: a heap kept nearly full of live objects and with no
//! relocation reserve (mutators may fill every page), so that Concurrent Relocate runs out of
//! target memory and must compact pages in place, while two
//! mutator threads keep loading, checking and rewriting those very objects (their barriers
//! relocate objects, wait for pages being compacted, and race the GC worker).
//!
//! Every object carries its identity and version in its raw bytes, a pattern over all of its
//! bytes, and a reference to a small child object that repeats the identity: a check reads
//! every byte and the child, so an object overwritten by another (a compaction sliding
//! objects over one that still lives at its old address) is caught at once, and the verifier
//! (on in every pause) checks that every page's objects tile it up to its top.
//!
//! The test fails unless in-place compaction actually happened (counted by the collector per
//! cycle), so it cannot pass without reaching the path it is about. A third run links the
//! table to its objects and each object to its child through value slots instead of reference
//! slots (`Link::Value`), and fails unless value slots were pointed at moved objects too.
//! Two `concurrent` runs rotate the mark colors (`HeapConfig::mark_colors`) and fail unless
//! cycles marked with Marked2 and the next cycles' markers remapped stale Marked2 slots.

mod support;
use gc_runtime::inspect::GoodColor;
use gc_runtime::{ColorChoice, CycleRecord, Heap, HeapConfig, Mode, ObjRef, Scope};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const MIB: u64 = 1 << 20;
/// Garbage objects (1 KiB each) a `stw` mutator allocates per object it rewrites.
const GARBAGE_PER_REWRITE: usize = 16;
/// The longest a run goes on waiting for in-place compactions.
const MAX_SECS: u64 = 40;

use support::{Link, Rng};

/// The identity word of object `slot` of thread `thread` at `version`.
fn ident(thread: u64, slot: u64, version: u64) -> u64 {
    (thread << 56) | (slot << 24) | version
}

/// The raw-byte pattern of an object: word `i` of object `id` holds `id * 31 + i`.
fn pattern(id: u64, i: usize) -> u64 {
    id.wrapping_mul(31).wrapping_add(i as u64)
}

/// Raw bytes of the object in `slot` (mixed sizes: mostly small, some up to 6 KiB).
fn size_of_slot(slot: u64, version: u64) -> usize {
    let h = (slot.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ version) % 100;
    8 * match h {
        0..=59 => 4 + (h as usize % 8),
        60..=94 => 32 + (h as usize % 64),
        _ => 256 + (h as usize % 512),
    }
}

/// Allocate object `slot` at `version`: raw bytes = pattern, link 0 = a child with the id.
fn make<'s>(
    s: &mut Scope<'s>,
    link: Link,
    thread: u64,
    slot: u64,
    version: u64,
) -> Option<gc_runtime::Local<'s>> {
    let id = ident(thread, slot, version);
    let n = size_of_slot(slot, version);
    let o = link.alloc(s, 7, 1, n)?;
    let child = s.alloc(8, 0, 16).ok()?;
    {
        let c = s.get(child);
        c.write_u64(0, id);
        c.write_u64(8, !id);
        let obj = s.get(o);
        for i in 0..n / 8 {
            obj.write_u64(8 * i, pattern(id, i));
        }
        link.store(obj, 0, Some(c));
    }
    Some(o)
}

/// Check every byte and the child of the object in `slot`; panics with a clear message.
fn check(o: ObjRef<'_>, link: Link, thread: u64, slot: u64, version: u64, mode: Mode) {
    let id = ident(thread, slot, version);
    let n = size_of_slot(slot, version);
    let (refs, values) = link.slots();
    assert_eq!(
        (o.shape(), o.n_refs(), o.n_values(), o.n_bytes()),
        (7, refs, values, n),
        "{mode}: header of object {id:#x} (slot {slot}) corrupted"
    );
    for i in 0..n / 8 {
        let w = o.read_u64(8 * i);
        assert_eq!(
            w,
            pattern(id, i),
            "{mode}: word {i} of object {id:#x} (slot {slot}, {} words) corrupted",
            n / 8
        );
    }
    let c = link
        .load(o, 0)
        .unwrap_or_else(|| panic!("{mode}: child of {id:#x} lost"));
    assert_eq!(
        (c.shape(), c.read_u64(0), c.read_u64(8)),
        (8, id, !id),
        "{mode}: child of object {id:#x} corrupted"
    );
}

/// One mutator: keeps `slots` objects live in a table object, checks and replaces them.
fn mutate(
    heap: &Heap,
    link: Link,
    thread: u64,
    slots: u64,
    stop: &AtomicBool,
    mode: Mode,
) -> (u64, u64) {
    let mut m = heap.attach(&format!("mutator-{thread}")).unwrap();
    let mut rng = Rng(0x5eed ^ thread);
    let mut versions = vec![0u64; slots as usize];
    let (mut checks, mut ooms) = (0u64, 0u64);
    m.scope(|s| {
        let table = link.alloc(s, 1, slots as u32, 0).unwrap();
        for slot in 0..slots {
            s.scope(|s| {
                let o = make(s, link, thread, slot, 0).expect("filling the live set");
                link.store(s.get(table), slot as usize, Some(s.get(o)));
            });
        }
        while !stop.load(Ordering::Relaxed) {
            // Check a run of neighbours (they share pages) and rewrite one of them.
            let first = rng.below(slots);
            for k in 0..32 {
                let slot = (first + k) % slots;
                let t = s.get(table);
                let o = link.load(t, slot as usize).expect("table slot");
                check(o, link, thread, slot, versions[slot as usize], mode);
                checks += 1;
            }
            let slot = (first + rng.below(32)) % slots;
            let v = versions[slot as usize] + 1;
            s.scope(|s| match make(s, link, thread, slot, v) {
                Some(o) => {
                    link.store(s.get(table), slot as usize, Some(s.get(o)));
                    versions[slot as usize] = v;
                }
                None => ooms += 1,
            });
            if mode == Mode::Stw {
                // Garbage that fills the heap between two stw cycles: started by the
                // director as the heap fills, a cycle finds free pages for every target
                // (relocation frees each page as it finishes it); it must find the heap full.
                s.scope(|s| {
                    for _ in 0..GARBAGE_PER_REWRITE {
                        if s.alloc(9, 0, 1024).is_err() {
                            ooms += 1;
                            break;
                        }
                    }
                });
            }
            s.poll();
        }
        // A last full check of every object.
        for slot in 0..slots {
            let o = link.load(s.get(table), slot as usize).expect("table slot");
            check(o, link, thread, slot, versions[slot as usize], mode);
            checks += 1;
        }
    });
    (checks, ooms)
}

/// Sum of a per-cycle counter.
fn total(cycles: &[CycleRecord], f: impl Fn(&CycleRecord) -> u64) -> u64 {
    cycles.iter().map(f).sum()
}

fn run(mode: Mode, link: Link, secs: u64) {
    run_with(mode, link, secs, ColorChoice::Alternate)
}

fn run_with(mode: Mode, link: Link, secs: u64, colors: ColorChoice) {
    let heap = Arc::new(
        Heap::new(
            HeapConfig::new(32 * MIB)
                .mode(mode)
                .mark_colors(colors)
                .verify(true)
                .gc_threads(1)
                // Back-to-back stw cycles each find too little garbage to run out of
                // target pages; started by the director, they find more.
                .continuous(mode != Mode::Stw)
                // No relocation reserve: mutators may fill every page, so relocation runs
                // out of target pages whenever the heap is full. (With the default reserve a
                // stw cycle's targets always fit: no stw run compacted a page in place.)
                .relocation_reserve(0),
        )
        .unwrap(),
    );
    // Every event from the start (the heap itself keeps only the most recent records).
    let events = heap.subscribe();
    let stop = Arc::new(AtomicBool::new(false));
    // About 13 MiB live per thread: over 80% of the heap with both threads.
    let slots = 24_000;
    let threads: Vec<_> = (0..2)
        .map(|t| {
            let (heap, stop) = (heap.clone(), stop.clone());
            std::thread::spawn(move || mutate(&heap, link, t, slots, &stop, mode))
        })
        .collect();
    // Run for `secs`, and longer (up to a limit) until enough pages were compacted in place:
    // how often relocation runs out of target memory depends on the machine's timing.
    let start = Instant::now();
    let enough = || total(&events.records().cycles, |c| c.pages_compacted_in_place) >= 5;
    while !threads.iter().any(|t| t.is_finished())
        && (start.elapsed() < Duration::from_secs(secs)
            || (start.elapsed() < Duration::from_secs(MAX_SECS) && !enough()))
    {
        std::thread::sleep(Duration::from_millis(100));
    }
    stop.store(true, Ordering::Relaxed);
    let mut checks = 0;
    let mut ooms = 0;
    for t in threads {
        let (c, o) = t.join().expect("a mutator failed its checks");
        checks += c;
        ooms += o;
    }
    // Every cycle of the run: the heap's own records keep only the newest `RECENT_EVENTS`,
    // and a loaded machine's run can make more cycles than that, its in-place compactions
    // among the older ones.
    let st = events.records();
    let in_place = total(&st.cycles, |c| c.pages_compacted_in_place);
    let objects = total(&st.cycles, |c| c.objects_compacted_in_place);
    let self_fw = total(&st.cycles, |c| c.objects_self_forwarded);
    let waits = total(&st.cycles, |c| c.relocation_waits);
    eprintln!(
        "{mode}: {} cycles, {in_place} pages compacted in place ({objects} objects, {self_fw} \
         self-forwarded), {waits} relocation waits, {checks} objects checked, {ooms} \
         allocations failed",
        st.cycles.len()
    );
    // What started the cycles (a run whose cycles go back to back finds too little garbage
    // per cycle to run out of target pages).
    let mut causes = std::collections::BTreeMap::new();
    for c in &st.cycles {
        *causes.entry(c.cause.name()).or_insert(0u64) += 1;
    }
    eprintln!("{mode}: cycles by cause: {causes:?}");
    assert!(checks > 0, "{mode}: nothing was checked");
    assert!(
        in_place > 0 && objects > 0,
        "{mode}: the heap never had to compact a page in place: the test missed its path"
    );
    let m2 = Some(GoodColor::Marked2);
    let marked2 = st.cycles.iter().filter(|c| c.mark_color == m2).count();
    let stale_m2 = total(&st.cycles, |c| {
        if c.stale_color == m2 {
            c.stale_slots_remapped
        } else {
            0
        }
    });
    eprintln!(
        "{mode}: {marked2} cycles marked with Marked2, {stale_m2} stale Marked2 slots remapped"
    );
    if colors == ColorChoice::Rotate {
        assert!(marked2 > 0, "{mode}: no cycle marked with Marked2");
        if mode == Mode::Concurrent {
            assert!(stale_m2 > 0, "{mode}: no stale Marked2 slot remapped");
        }
    }
    if link == Link::Value {
        let v = heap.value_slot_stats();
        eprintln!("{mode}, value slots: {v:?}");
        assert!(
            v.barrier_moves + v.mark_moves + v.full_remap_moves > 0,
            "{mode}: no value slot was pointed at a moved object: {v:?}"
        );
    }
}

#[test]
fn concurrent_relocation_compacts_in_place_without_losing_an_object() {
    run(Mode::Concurrent, Link::Ref, 8);
}

#[test]
fn stw_relocation_compacts_in_place_without_losing_an_object() {
    run(Mode::Stw, Link::Ref, 6);
}

#[test]
fn concurrent_in_place_compaction_keeps_objects_linked_by_value_slots() {
    run(Mode::Concurrent, Link::Value, 8);
}

/// With the mark colors rotating: in-place compaction while slots carry Marked2 pointers.
#[test]
fn concurrent_in_place_compaction_with_rotating_mark_colors() {
    run_with(Mode::Concurrent, Link::Ref, 8, ColorChoice::Rotate);
}

#[test]
fn concurrent_in_place_compaction_of_value_links_with_rotating_mark_colors() {
    run_with(Mode::Concurrent, Link::Value, 8, ColorChoice::Rotate);
}

#[test]
fn stw_in_place_compaction_keeps_objects_linked_by_value_slots() {
    run(Mode::Stw, Link::Value, 6);
}
