//! The book's exercises, one file per chapter, checked against the code: each exercise is a
//! function that returns the reader's answer, and a test beside it compares that answer with
//! what gc-core, gc-runtime or the workloads compute for the same question. The committed
//! functions hold worked solutions; to do an exercise, replace a function's body with
//! `todo!()`, work the answer out from the chapter, write it in, and run
//!
//! ```text
//! cargo test --release -p integration-tests --test exercises            # every chapter
//! cargo test --release -p integration-tests --test exercises mechanism  # one chapter
//! ```
//!
//! The checks never hold an expected number of their own, so a solution that stops matching
//! the code (a changed constant or rule) fails here, and the book is corrected with it. The bug
//! hunts of the correctness chapter are patches in `tests/bug-hunts/`, checked by
//! `.ci/bug-hunts`.

mod correctness;
mod embedding;
mod mechanism;
mod memory;
mod one_gc_cycle;
mod pacing;
mod reading_reports;

/// Sizes as the book writes them.
pub const KIB: u64 = 1 << 10;
pub const MIB: u64 = 1 << 20;
pub const GIB: u64 = 1 << 30;
pub const TIB: u64 = 1 << 40;
