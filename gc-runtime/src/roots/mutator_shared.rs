//! The part of a mutator thread the collector reads (what ZGC keeps in a thread's
//! `ZThreadLocalData`): its safepoint state, its local-handle stack (a strong root set) and
//! its mark buffer (objects its barriers marked during Concurrent Mark, handed to the GC
//! workers in batches). The `Mutator` that owns it lives on the thread; this part is shared
//! with the heap's root set through an `Arc`.

use super::handle_stack::HandleStack;
use super::mark_buffer::MarkBuffer;
use crate::observe::RunDelay;
use crate::threads::{HasThreadState, ThreadStateCell};
use std::sync::atomic::AtomicU32;

pub(crate) struct MutatorShared {
    pub(crate) name: String,
    /// The kernel's id of the thread (for the safepoint timeout's report of its state).
    pub(crate) tid: i32,
    /// The thread's wait-for-a-CPU counter (for the pause record's share of time to safepoint
    /// the mutator spent without a CPU).
    pub(crate) run_delay: RunDelay,
    pub(crate) thread: ThreadStateCell,
    pub(crate) handles: HandleStack,
    pub(crate) mark_buffer: MarkBuffer,
    /// Scopes open on the mutator (touched only by its own thread).
    pub(crate) scope_depth: AtomicU32,
}

impl MutatorShared {
    /// The shared part of a mutator of the calling thread.
    pub(crate) fn new(name: &str, handles: HandleStack) -> Self {
        MutatorShared {
            name: name.to_string(),
            tid: crate::threads::current_tid(),
            run_delay: RunDelay::of_current_thread(),
            thread: ThreadStateCell::new_blocked(),
            handles,
            mark_buffer: MarkBuffer::default(),
            scope_depth: AtomicU32::new(0),
        }
    }
}

impl HasThreadState for MutatorShared {
    fn thread_state(&self) -> &ThreadStateCell {
        &self.thread
    }
}
