//! A software prefetch: ask the processor to bring the cache line holding an address closer
//! (into every level of the cache) without waiting for it, so that a load or an atomic
//! operation on that line a little later finds it at hand instead of stalling for memory. The
//! collector's loops know their next addresses before they need them (the mark stack's next
//! objects and their live-map words, the forwarding entries a relocation batch will publish),
//! and on this kind of work a cache miss costs more than everything else an object needs.
//! HotSpot's ZGC prefetches the same way (`Prefetch::read` in its mark loop).
//!
//! It is a hint only: it changes no memory and never faults, so any address will do, also
//! one that is unmapped or null. On other architectures it does nothing.

/// Prefetch the cache line holding `p` (see the module documentation).
#[inline(always)]
pub fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: PREFETCHT0 (SSE, part of every x86_64 processor) is a hint: it reads no value
    // into a register, writes nothing and never faults, even on an unmapped or null address,
    // so no invariant of the pointer is needed.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p.cast::<i8>(), std::arch::x86_64::_MM_HINT_T0)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
