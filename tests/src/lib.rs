//! Cross-crate integration and stress tests live in `tests/tests/`: `torture.rs` (random
//! programs checked against a shadow model, and the soak), `faults.rs` (faults and bad input)
//! and `leaks.rs` (no leaked fds, mappings, threads or memory). This library holds what they
//! share: the torture engine, reused by the soak.

pub mod torture;
