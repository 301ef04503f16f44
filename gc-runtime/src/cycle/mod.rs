//! The collector's own threads and decisions: the driver (ZGC's `ZDriver`), which runs a cycle
//! as a list of phase calls on the heap and records each pause and phase; the director
//! (`ZDirector`), which decides when a cycle starts and why; the uncommitter (`ZUncommitter`),
//! which gives unused memory back between cycles.

mod director;
mod driver;
mod uncommitter;

pub(crate) use driver::run_or_abort;
