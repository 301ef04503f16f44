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
//! Map of the crate: [`heap`] ([`Heap`], which owns the driver thread) over `heap_inner` (the
//! collector's subsystems, as ZGC's `ZHeap` composes them: `roots`, `weak_processor`, `mark`,
//! `relocation_set_selector`, `relocation_set`, `relocate`, with the `gc_context` each is
//! handed: `gc_state`, `page_registry`, `forwarding_index`, `cycle_control`); `driver` (the
//! cycle as a list of phases), `director` (when to collect), `pacer` (slowing mutators that
//! outrun a cycle), `uncommitter` (giving unused memory back), `verifier`; [`mutator`]
//! (threads, allocation, stalls), [`scope`] (handles and object access), `barrier_policy`
//! (what the barrier's slow path does per phase), `safepoint`; [`stats`], `gc_log`,
//! [`memory_report`] (what RSS is made of); [`native`] (pooled off-heap buffers) and the
//! direct buffers built on it (`direct_buffer`, the embedder's [`DirectBuffer`]; `direct_buffers`,
//! the heap's registry of them and their cleaners). ARCHITECTURE.md in the repository lists the module dependencies layer by
//! layer.
//!
//! [`safepoint`], [`forwarding`] (its page reference count) and [`sync`] are public only so the
//! loom models in `tests/loom_protocols.rs` can run the handshake protocols with loom's
//! primitives; they are not part of the embedding API.

#![deny(unsafe_op_in_unsafe_fn)]
#![deny(clippy::undocumented_unsafe_blocks)]

mod barrier_policy;
pub mod config;
mod cpu_time;
mod cycle_control;
mod direct_buffer;
mod direct_buffers;
mod director;
mod driver;
pub mod forwarding;
mod forwarding_index;
mod full_remap;
mod gc_cause;
mod gc_context;
mod gc_log;
mod gc_phase;
mod gc_state;
mod gc_workers;
mod handle_stack;
mod handle_table;
pub mod heap;
mod heap_inner;
mod idle_class_guard;
mod injected_panic;
mod live_cache;
mod mark;
mod mark_buffer;
pub mod memory_report;
pub mod mutator;
mod mutator_shared;
pub mod native;
mod object_allocator;
mod pacer;
mod page_registry;
mod precise_sleep;
mod relocate;
mod relocation_set;
mod relocation_set_selector;
pub mod root_region;
mod roots;
pub mod safepoint;
pub mod scope;
pub mod stats;
pub mod sync;
mod table_handle;
mod uncommitter;
mod verifier;
mod weak_processor;
pub mod worker_priority;

pub use config::{
    DirectorConfig, HeapConfig, HeapTarget, LogLevel, Mode, PacingConfig, LOG_ENV, PACING_ENV,
};
pub use direct_buffer::{DirectBuffer, DirectError};
pub use direct_buffers::DIRECT_BUFFER_SHAPE;
pub use gc_cause::GcCause;
pub use gc_core::config::physical_memory_bytes;
pub use gc_core::virtual_memory::heap_limit_for_map_count;
pub use gc_core::{format_size, parse_size, Backing, HeapError};
pub use gc_phase::GcPhase;
pub use heap::{Heap, HeapUsage};
pub use memory_report::MemoryReport;
pub use mutator::{AttachError, Mutator, OutOfMemory};
pub use root_region::{RegionView, RootRegion};
pub use scope::{Local, ObjRef, Scope};
pub use stats::{
    CycleRecord, DirectStats, GcStats, PacingRecord, PauseKind, PauseRecord, PhaseRecord,
    StallRecord,
};
pub use table_handle::{Global, WeakRef};
