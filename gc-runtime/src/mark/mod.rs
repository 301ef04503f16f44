//! Marking (ZGC's `ZMark`, `ZMarkCache`, `ZWeakProcessor`): parallel tracing of the object
//! graph from the roots, the marking barrier and the live-map tests, each worker's live-byte
//! cache, the mutators' full mark buffers queued whole, and the weak handles cleared or
//! healed after marking. It owns the mark queue and the
//! rule that Pause Mark End ends marking only when no buffer holds work.

mod live_cache;
mod mark_batches;
mod marker;
mod weak_processor;

pub(crate) use marker::{good_for, is_live, mark_barrier, Mark};
pub(crate) use weak_processor::{WeakProcessor, WeakResult};
