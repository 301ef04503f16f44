//! Native memory owned by heap objects (JDK's `DirectByteBuffer` with its `Cleaner`, and the
//! accounting of `java.nio.Bits` against `MaxDirectMemorySize`): the heap's registry of direct
//! buffers, the direct-memory limit, and the cleaners that free a dead owner's memory outside
//! every pause. It owns the rule that native memory is freed once, and only after its owner
//! died. The embedder's side (`DirectBuffer`) is in `api`.

mod registry;

pub use registry::DIRECT_BUFFER_SHAPE;
pub(crate) use registry::{Cleaned, DirectBuffers, OWNER_BYTES};
