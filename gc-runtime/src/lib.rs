//! `gc-runtime`: the policy and threads of a ZGC-style concurrent, compacting collector, and
//! the API an embedder (a workload, an interpreter) uses.
//!
//! ```no_run
//! use gc_runtime::{Heap, HeapConfig};
//! let heap = Heap::new(HeapConfig::new(64 << 20)).unwrap();
//! let mut m = heap.attach("main").unwrap();
//! m.scope(|s| {
//!     let node = s.alloc(1, 2, 8).unwrap();     // shape 1, 2 reference slots, 8 raw bytes
//!     let leaf = s.alloc(2, 0, 8).unwrap();
//!     s.store(node, 0, Some(leaf));
//!     s.get(leaf).write_u64(0, 42);
//!     s.collect("example");                      // objects may move; handles follow
//!     let leaf2 = s.load(node, 0).unwrap();
//!     assert_eq!(s.get(leaf2).read_u64(0), 42);
//! });
//! ```
//!
//! Map of the crate, as folders from the bottom up; each folder owns one invariant, keeps its
//! files private and exports only what the folders above it use (`tests/module_graph.rs`
//! checks that no folder uses one above it or reaches into another's files): the leaf files
//! `sync` (the primitives the handshake protocols are written against) and `config`;
//! [`native`] (pooled off-heap buffers, no dependency on the collector); `observe` (records,
//! log, phase and cause names; [`stats`]); `threads` (the [`safepoint`] handshake, GC workers,
//! their scheduling class, [`worker_priority`]); `context` (the state every collector
//! subsystem is handed: phase state, pages, the [`forwarding`] index and protocol, the cycle
//! monitor); `roots` (handle stacks and tables, the strong root sets, each mutator's shared
//! part); `mark`; `relocate`; `direct` (the heap's registry of native memory owned by objects);
//! `heap` (`HeapInner`, the collector's subsystems as ZGC's `ZHeap` composes them, with the
//! object allocator, pacer, barrier slow paths, verifier and [`memory_report`]); `cycle` (the
//! driver, the director, the uncommitter); `api` ([`Heap`], [`mutator`], [`scope`], global and
//! weak handles, [`root_region`], the embedder's [`DirectBuffer`]). ARCHITECTURE.md in the
//! repository lists the folders layer by layer.
//!
//! [`safepoint`], [`forwarding`] (its page reference count) and [`sync`] are public only so the
//! loom models in `tests/loom_protocols.rs` can run the handshake protocols with loom's
//! primitives, and [`process_barrier`] so that the safepoint's stress test
//! (`tests/safepoint_barrier.rs`) and benchmark can choose the barrier; they are not part of
//! the embedding API.

#![deny(unsafe_op_in_unsafe_fn)]
#![deny(clippy::undocumented_unsafe_blocks)]

// The folders, bottom up: each uses only the ones listed before it (and the leaf files
// `sync` and `config`); `tests/module_graph.rs` checks it.
pub mod config;
pub mod native;
pub mod sync;

mod api;
mod atomic_instant;
mod context;
mod cycle;
mod direct;
mod heap;
mod mark;
mod observe;
mod relocate;
mod roots;
mod threads;

pub use api::{inspect, mutator, root_region, scope, stepper};
pub use context::forwarding;
pub use heap::memory_report;
pub use observe::{cpu_time, proc_info, stats};
pub use threads::{process_barrier, safepoint, worker_priority};

pub use api::{
    AttachError, BytesOutOfRange, DirectBuffer, DirectError, Fresh, Global, Heap, HeapUsage,
    Immediate, ImmediateTooWide, Local, Mutator, ObjRef, OutOfMemory, RegionView, RootRegion,
    Scope, Step, Stepper, Value, ValueBits, WeakRef,
};
pub use config::{
    DirectorConfig, EnvError, GenerationalConfig, HeapConfig, HeapTarget, LogLevel, Mode,
    PacingConfig, ENV_VARS, GC_THREADS_ENV, HUGE_PAGES_ENV, LOG_ENV, MEMBARRIER_ENV,
    MIN_COLLECTED_HEAP, PACING_ENV,
};
pub use direct::DIRECT_BUFFER_SHAPE;
pub use gc_core::config::physical_memory_bytes;
pub use gc_core::value::VALUE_IMMEDIATE_TAG;
pub use gc_core::virtual_memory::heap_limit_for_map_count;
pub use gc_core::{
    format_size, parse_size, Backing, ColorChoice, HeapError, HugePageSystem, HugePageUse,
    HugePages, Offset, PageSizeReading,
};
pub use heap::{pacing_interval, MemoryReport};
pub use observe::{
    Activity, CyclePhase, EventSubscription, GcCause, GcPhase, LatencyHistogram, PercentileSummary,
    RememberedSetStats, SafepointTimeoutRecord, Straggler, ValueSlotStats, SIGNIFICANT_DIGITS,
};
pub use stats::{
    CycleRecord, DirectStats, EventTotals, GcStats, PacingRecord, PauseKind, PauseRecord,
    PhaseRecord, StallRecord, RECENT_EVENTS,
};
