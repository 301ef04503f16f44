//! The embedding API: [`Heap`] (ZGC's `ZCollectedHeap`: creates the collector's state and owns
//! the driver thread), mutators (attach, allocation, stalls), scopes and local handles (the
//! rooting discipline, checked by lifetimes), global and weak handles, root regions, value
//! slots (a number, an immediate or a reference in one word), the embedder's direct buffers,
//! and the allocation fast path with its just-allocated objects; for teaching and tools,
//! read-only introspection (`inspect`) and
//! stepping through a cycle phase by phase (`stepper`). It owns the rules an embedder must
//! follow; everything below is reached through the heap's accessors.

mod bulk_bytes;
mod direct_buffer;
mod fresh;
mod global;
pub mod heap;
pub mod inspect;
pub mod mutator;
pub mod root_region;
pub mod scope;
pub mod stepper;
mod value_slots;

pub use bulk_bytes::BytesOutOfRange;
pub use direct_buffer::{DirectBuffer, DirectError};
pub use fresh::Fresh;
pub use global::{Global, WeakRef};
pub use heap::{Heap, HeapUsage};
pub use mutator::{AttachError, Mutator, OutOfMemory};
pub use root_region::{RegionView, RootRegion};
pub use scope::{Local, ObjRef, Scope};
pub use stepper::{Step, Stepper};
pub use value_slots::{Immediate, ImmediateTooWide, Value, ValueBits};
