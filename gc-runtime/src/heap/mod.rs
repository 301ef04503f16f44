//! The heap's collector state as one composition (ZGC's `ZHeap`): [`HeapInner`] owns one
//! instance of every subsystem and keeps them private; the driver runs a cycle through its
//! phase methods, and the embedding API reaches the subsystems only through its narrow
//! accessors. Beside it: object allocation (`ZObjectAllocator`: the mutators' pages, page
//! refills, pacing delays and allocation stalls), the pacer, the barrier's slow path per
//! phase (`ZBarrier`), the verifier (`ZVerify`) and the memory report, which read the
//! composition from inside.

mod barrier_policy;
mod heap_inner;
pub mod memory_report;
mod object_allocator;
mod pacer;
mod pacing_floor;
mod phantom_referent;
mod phases;
mod verifier;

pub(crate) use barrier_policy::{load_weak, MutatorSlowPath};
pub(crate) use heap_inner::HeapInner;
pub use memory_report::MemoryReport;
pub(crate) use object_allocator::{AllocatingThread, MutatorAllocation, BULK_CHUNK};
pub use pacer::pacing_interval;
pub(crate) use verifier::{verify, VerifyPoint};
