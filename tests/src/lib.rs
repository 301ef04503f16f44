//! Cross-crate integration and stress tests live in `tests/tests/`: `torture.rs` (random
//! programs checked against a shadow model, and the soak), `faults.rs` (faults and bad input),
//! `leaks.rs` (no leaked fds, mappings, threads or memory) and the fuzz targets
//! (`fuzz_lox.rs`, `fuzz_parsers.rs`, `fuzz_heap_config.rs`, `fuzz_heap_config_env.rs`). This
//! library holds what they share: the torture engine, reused by the soak, and the fuzz engine.

pub mod fuzz;
pub mod torture;
