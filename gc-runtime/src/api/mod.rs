//! The embedding API: [`Heap`] (ZGC's `ZCollectedHeap`: creates the collector's state and owns
//! the driver thread), mutators (attach, allocation, stalls), scopes and local handles (the
//! rooting discipline, checked by lifetimes), global and weak handles, root regions, and the
//! embedder's direct buffers, the allocation fast path and its just-allocated objects; for teaching and tools, read-only introspection (`inspect`) and
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

pub use bulk_bytes::BytesOutOfRange;
pub use direct_buffer::{DirectBuffer, DirectError};
pub use fresh::Fresh;
pub use global::{Global, WeakRef};
pub use heap::{Heap, HeapUsage};
pub use mutator::{AttachError, Mutator, OutOfMemory};
pub use root_region::{RegionView, RootRegion};
pub use scope::{Local, ObjRef, Scope};
pub use stepper::{Step, Stepper};
