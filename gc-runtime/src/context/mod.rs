//! The state every collector subsystem is handed ([`GcContext`]): the global phase state (good
//! color, phase, sequence number: ZGC's `ZGlobalPhase` and `ZGlobalSeqNum`), the pages in use
//! (the runtime's side of `ZPageAllocator`), the forwarding index and each page's forwarding
//! protocol (`ZForwardingTable`, `ZForwarding`), the cycle monitor (requests, counters,
//! stalls, and the gate a stepped cycle waits at between phases) and the running cycle's
//! progress (work done and expected, for the pacer), and, when the generational bookkeeping is
//! on, page ages and the remembered set (`generations`). It owns the invariants of that shared
//! state: the phase and color change only through `GcState`, a forwarding's reference count
//! decides who may copy out of its page.

mod cycle_control;
mod cycle_progress;
pub mod forwarding;
mod forwarding_index;
mod gc_context;
mod gc_state;
mod generations;
mod original_bits;
mod page_registry;
mod phase_gate;

pub(crate) use cycle_control::{CycleControl, NextCycle, StallRequest};
pub(crate) use cycle_progress::{CycleProgress, Progress};
pub(crate) use forwarding::{Forwarding, InPlace, Relocation};
pub(crate) use forwarding_index::ForwardingIndex;
pub(crate) use gc_context::GcContext;
pub(crate) use gc_state::{BarrierPhase, GcState, Table};
pub(crate) use generations::Generations;
pub(crate) use page_registry::PageRegistry;
pub(crate) use phase_gate::GateStop;
