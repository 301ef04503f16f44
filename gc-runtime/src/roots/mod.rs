//! Where the collector finds roots, and the part of each mutator it reads: local-handle stacks
//! (V8's `HandleScope` storage), the global and weak handle tables (HotSpot's `OopStorage`),
//! the registered root regions, the strong root sets that enumerate them (ZGC's `ZRoots`), and
//! each mutator's shared state (ZGC's `ZThreadLocalData`: thread state, handle stack, mark
//! buffer, `ZMarkThreadLocalStacks`). It keeps and enumerates roots; what a phase does with a
//! root is the phase's business.

mod handle_stack;
mod handle_table;
mod mark_buffer;
mod mutator_shared;
mod root_set;

pub(crate) use handle_stack::HandleStack;
pub(crate) use handle_table::HandleTable;
pub(crate) use mark_buffer::{BufferedWork, MarkSink, MARK_BUFFER_FLUSH};
pub(crate) use mutator_shared::MutatorShared;
pub(crate) use root_set::{RegionSlots, Roots};
