//! Cross-crate integration and stress tests live in `tests/tests/`.
