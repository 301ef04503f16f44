//! `gc-runtime`: policy and threads of the collector (work in progress).
pub mod stats;
