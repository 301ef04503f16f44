//! The fuzz engine: what the fuzz targets in `tests/tests/fuzz_*.rs` share. The runtime's
//! input surfaces that take untrusted input — Lox source (scanner, compiler, VM), sizes and
//! command lines, `HeapConfig` settings and the environment — each get a target that throws
//! random inputs at them and checks that every one ends in a result or a proper error, never a
//! panic, a crash or a hang. This is libFuzzer's model on stable Rust, inside `cargo test`:
//! no coverage feedback, but grammar-aware generation and corpus mutation instead, seeded
//! cases that replay, and a bounded default budget so that the targets run in CI.
//!
//! - `rng`: the seeded generator every case draws from;
//! - `budget`: how many cases (`ZRS_FUZZ_CASES`), for how long (`ZRS_FUZZ_SECS`), and the
//!   replay of one seed (`ZRS_FUZZ_SEED`);
//! - `tally`: the outcome classes the cases reached, and the check that each class a target
//!   must reach was reached (a fuzzer whose inputs all fail the same way tests nothing);
//! - `lox_grammar`: random but grammatical, typed Lox programs;
//! - `corpus` and `mutate`: the workspace's Lox programs and their byte/token mutations;
//! - `child`: running cases in a child process, so that a crash or a hang is caught and
//!   named by its seed.

pub mod budget;
pub mod child;
pub mod corpus;
pub mod lox_grammar;
pub mod mutate;
pub mod rng;
pub mod tally;

pub use budget::Budget;
pub use rng::Rng;
pub use tally::Tally;
