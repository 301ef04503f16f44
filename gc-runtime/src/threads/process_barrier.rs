//! The process-wide memory barrier that lets the safepoint handshake's mutator side go without
//! a fence (HotSpot's `SystemMemoryBarrier`, turned on by `-XX:+UseSystemMemoryBarrier`).
//!
//! The handshake is a Dekker pair: a mutator stores its state and then loads the request, the
//! collector stores the request and then loads the states, and each side must fence between its
//! store and its load, or both could miss the other's store (a store waiting in a core's store
//! buffer while the load after it reads memory). With fences, a mutator pays two full barriers
//! at every outermost scope entry and exit (the `SeqCst` store, an `xchg` on x86, and the
//! fence). With [`ProcessBarrier::Membarrier`] the collector pays instead: after storing the
//! request it calls Linux's `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)`, which returns only
//! after every thread of the process that is running on a CPU has executed a full memory
//! barrier (an interrupt sent to each CPU running one), while a thread not on a CPU executed
//! one when it was switched out (the scheduler's context switch is a full barrier, and it will
//! execute another when it is switched in). The mutator's store is a release store and it keeps
//! only a *compiler* fence between its store and its load, so that the two stay in program
//! order in the machine code. Why the handshake stays correct: the barrier each mutator
//! executes falls at some point of its instruction stream, during the collector's system call.
//! If the mutator's state store is before that point, the store is visible to every CPU before
//! the call returns, and the collector's loads, after the call, see it. Otherwise the mutator's
//! load of the request is after that point too (it follows the store in program order), and the
//! collector's store of the request, made before the call, is visible to it. Either the
//! collector sees the thread running or the thread sees the request, as with a fence on each
//! side.
//!
//! The system call needs the process registered once
//! (`MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED`, after `MEMBARRIER_CMD_QUERY` says the kernel
//! has the command: Linux 4.14 and later). Where it is missing (an older kernel, a seccomp
//! filter refusing the call, another operating system) or turned off by the heap's
//! configuration, [`ProcessBarrier::Fences`] keeps a `SeqCst` fence on both sides. The choice
//! is made once per heap, when it is created, and both sides of every handshake with that
//! heap's safepoint use it. The loom models run the fence variant only: loom cannot model a
//! barrier that another thread's system call makes a thread execute.

use crate::sync::Primitives;
use std::sync::atomic::{compiler_fence, Ordering};
use std::sync::OnceLock;

/// How the two sides of the safepoint handshake order their store before their load.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProcessBarrier {
    /// The requesting side (the collector, or a pause that requests again after giving way)
    /// calls `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)` after its store; a mutator's side
    /// has a compiler fence only.
    Membarrier,
    /// Both sides issue a `SeqCst` fence (where `membarrier` is missing, or turned off).
    Fences,
}

/// The `membarrier` commands used (`uapi/linux/membarrier.h`; a stable kernel ABI).
#[cfg(target_os = "linux")]
mod cmd {
    pub const QUERY: libc::c_int = 0;
    pub const PRIVATE_EXPEDITED: libc::c_int = 1 << 3;
    pub const REGISTER_PRIVATE_EXPEDITED: libc::c_int = 1 << 4;
}

/// `membarrier(cmd, 0, 0)`: its return value.
#[cfg(target_os = "linux")]
fn membarrier(cmd: libc::c_int) -> libc::c_long {
    // SAFETY: `membarrier` reads no memory of the caller; with flags 0 and cpu_id 0 it only
    // queries, registers or issues barriers, and reports failure through its return value.
    unsafe {
        libc::syscall(
            libc::SYS_membarrier,
            cmd,
            0 as libc::c_uint,
            0 as libc::c_int,
        )
    }
}

/// True once the process is registered for private expedited barriers (the first call
/// queries the kernel and registers; later calls return the answer).
fn available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        #[cfg(target_os = "linux")]
        {
            let supported = membarrier(cmd::QUERY);
            supported >= 0
                && supported & libc::c_long::from(cmd::PRIVATE_EXPEDITED) != 0
                && supported & libc::c_long::from(cmd::REGISTER_PRIVATE_EXPEDITED) != 0
                && membarrier(cmd::REGISTER_PRIVATE_EXPEDITED) == 0
                && membarrier(cmd::PRIVATE_EXPEDITED) == 0
        }
        #[cfg(not(target_os = "linux"))]
        {
            false
        }
    })
}

impl ProcessBarrier {
    /// The barrier a new heap uses: [`ProcessBarrier::Membarrier`] if `allowed` and the
    /// system offers it (registering the process the first time), else
    /// [`ProcessBarrier::Fences`].
    pub fn choose(allowed: bool) -> ProcessBarrier {
        if allowed && available() {
            ProcessBarrier::Membarrier
        } else {
            ProcessBarrier::Fences
        }
    }

    /// The name logs and statistics show.
    pub fn name(self) -> &'static str {
        match self {
            ProcessBarrier::Membarrier => "membarrier",
            ProcessBarrier::Fences => "fences",
        }
    }

    /// The mutator's side, between its store and its load: a compiler fence with
    /// `membarrier`, a `SeqCst` fence otherwise.
    #[inline(always)]
    pub fn light<P: Primitives>(self) {
        match self {
            ProcessBarrier::Membarrier => compiler_fence(Ordering::SeqCst),
            ProcessBarrier::Fences => P::fence(Ordering::SeqCst),
        }
    }

    /// The requesting side, between its store and its load: a `SeqCst` fence, followed with
    /// `membarrier` by the process-wide barrier.
    pub fn heavy<P: Primitives>(self) {
        P::fence(Ordering::SeqCst);
        if self == ProcessBarrier::Membarrier {
            issue();
        }
    }

    /// The ordering of a mutator's state store on the handshake's light side: release with
    /// `membarrier` (on x86 a `SeqCst` store is an `xchg`, a full barrier itself), `SeqCst`
    /// with fences (as before the membarrier variant existed).
    #[inline(always)]
    pub fn store_order(self) -> Ordering {
        match self {
            ProcessBarrier::Membarrier => Ordering::Release,
            ProcessBarrier::Fences => Ordering::SeqCst,
        }
    }
}

/// One process-wide barrier. Registered first (a [`ProcessBarrier::Membarrier`] exists only
/// once [`available`] registered the process), so the call cannot fail: if it did, mutators
/// relying on it could run through a pause, so it stops the caller instead.
fn issue() {
    #[cfg(target_os = "linux")]
    {
        let r = membarrier(cmd::PRIVATE_EXPEDITED);
        assert!(
            r == 0,
            "membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) failed after registration: {}",
            std::io::Error::last_os_error()
        );
    }
    #[cfg(not(target_os = "linux"))]
    unreachable!("ProcessBarrier::Membarrier is chosen on Linux only");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turned_off_means_fences() {
        assert_eq!(ProcessBarrier::choose(false), ProcessBarrier::Fences);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_chosen_barrier_can_be_issued() {
        if ProcessBarrier::choose(true) == ProcessBarrier::Membarrier {
            ProcessBarrier::Membarrier.heavy::<crate::sync::Std>();
        }
    }
}
