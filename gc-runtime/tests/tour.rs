//! The executable tour's golden test: the transcript of `examples/tour.rs` (real cycles,
//! stepped phase by phase) must equal `docs/src/tour/transcript.txt`, which the book includes.
//! Any change to what the tour narrates — a word, a color, a forwarding entry, the order of
//! the phases — fails here; after a deliberate change, `ZRS_BLESS=1 cargo test --release -p
//! gc-runtime --test tour` rewrites the golden file (then read its diff).

#[allow(dead_code)]
#[path = "../examples/tour.rs"]
mod tour;

use gc_runtime::{Heap, HeapConfig};
use std::path::PathBuf;
use std::sync::Mutex;

/// The tests of this file run one at a time: each knows which heaps live.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn golden_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/src/tour/transcript.txt")
}

#[test]
fn the_tour_transcript_is_the_golden_one() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let got = tour::transcript().unwrap();
    let path = golden_path();
    if std::env::var_os("ZRS_BLESS").is_some() {
        std::fs::write(&path, &got).unwrap();
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    if got != want {
        let first = got
            .lines()
            .zip(want.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(got.lines().count().min(want.lines().count()));
        panic!(
            "the tour's transcript differs from {} from line {} on:\n  got:  {:?}\n  want: {:?}\n\
             (after a deliberate change: ZRS_BLESS=1 cargo test --release -p gc-runtime --test tour)",
            path.display(),
            first + 1,
            got.lines().nth(first),
            want.lines().nth(first)
        );
    }
}

/// The tour shows offsets relative to its heap: with another heap holding the first offset
/// range, its heaps start elsewhere and the transcript is still the same.
#[test]
fn the_transcript_does_not_depend_on_where_the_heap_lies() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let first = Heap::new(HeapConfig::new(64 << 20)).unwrap();
    assert_eq!(first.offset_range().0.raw(), 0, "no other heap lives");
    // `first` holds offset 0: the tour's heaps start elsewhere.
    let again = tour::transcript().unwrap();
    drop(first);
    let alone = tour::transcript().unwrap();
    assert_eq!(again, alone);
}

/// The golden transcript shows what the tour is about: a mark and a relocate heal, a
/// forwarding table, an in-place compaction (a blessed transcript missing them is wrong).
#[test]
fn the_golden_transcript_covers_each_lesson() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let want = std::fs::read_to_string(golden_path()).unwrap();
    for needle in [
        "barrier phase Mark,",
        "barrier phase Relocate,",
        "= Marked0 ",
        "= Marked1 ",
        "= Remapped ",
        "slow path: the barrier made the pointer good and healed the slot",
        "0x70 (A) -> 0x200030 (A')",
        "(compacted in place)",
        "hold their values after the move: yes",
    ] {
        assert!(
            want.contains(needle),
            "the golden transcript lacks {needle:?}"
        );
    }
}
