//! Memory for side tables — live maps and remembered-set bitmaps — carved from one anonymous
//! reservation made when the heap is created, instead of taken from `malloc` one table at a
//! time (ZGC takes its per-page bitmaps from the C heap; this is where the two differ).
//!
//! Why: a side table is made when a mutator needs it — a live map for the page it allocates
//! on, a remembered set for the first old slot its store barrier remembers in a granule — and
//! tens of kilobytes from `malloc` on a thread's arena grow that arena with `mprotect`, which
//! changes the process's mappings: it waits for the memory-map lock behind every other
//! thread's page fault and mapping change, with the mutator counted as running meanwhile, so a
//! pause waits for it too. A [`SideArena`] is one private anonymous mapping, `MAP_NORESERVE`,
//! reserved once for as many fixed-size *slots* as the heap can need; a slot is handed out
//! zeroed and its pages are faulted in by their first use, which takes no lock that a mapping
//! change holds for long (on kernels with per-VMA locks, none but the arena's own). A slot
//! given back is zeroed again with `MADV_DONTNEED` (its memory returns to the system) and kept
//! for the next carve. The arena asks for small pages only (`MADV_NOHUGEPAGE`): tables are
//! used sparsely, and a transparent huge page would make one 32 KiB table hold 2 MiB.
//!
//! [`WordArray`] is the owned array of atomic words a side table holds: either a box from the
//! global allocator (when no arena is given, the arena is full, or the words are loom's, for
//! the model checker) or a slot of an arena, which it keeps alive and gives back when dropped.
//! It is as small as a boxed slice (two words: pointer, and length with the owner), so a live
//! map still fits in its page's first cache line.

use parking_lot::Mutex;
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

/// The largest slot an arena hands out, in words (its length is kept in 16 bits of a
/// [`WordArray`]).
pub const MAX_SLOT_WORDS: usize = (1 << 16) - 1;

/// The system's page size: slots are whole pages, so giving one back releases its memory
/// exactly.
fn page_size() -> usize {
    // SAFETY: `sysconf` reads a constant of the system; it has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as usize
    } else {
        4096
    }
}

/// One anonymous reservation carved into zeroed slots of `slot_words` words (see the module
/// documentation).
pub struct SideArena {
    base: NonNull<AtomicU64>,
    slot_words: usize,
    slots: usize,
    /// Slots never handed out start here.
    next: AtomicUsize,
    /// Slots given back (zeroed again), handed out before new ones.
    free: Mutex<Vec<usize>>,
    /// Set by [`SideArena::retire`]: no slot is carved again, and slots given back are not
    /// zeroed (the mapping goes with the last of them).
    retired: AtomicBool,
}

// SAFETY: the arena's memory is a mapping owned by the arena, shared only as disjoint slots
// (each owned by one `WordArray`) of atomic words; its own fields are an atomic and a mutex.
unsafe impl Send for SideArena {}
// SAFETY: as for `Send`: every access through `&SideArena` goes through the atomic or the
// mutex, and slot memory is reached only through the `WordArray` that owns the slot.
unsafe impl Sync for SideArena {}

impl std::fmt::Debug for SideArena {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SideArena")
            .field("slot_words", &self.slot_words)
            .field("slots", &self.slots)
            .field("carved", &self.carved())
            .finish()
    }
}

impl SideArena {
    /// Reserve an arena of `slots` slots of `slot_words` words each. `None` when the sizes
    /// are impossible (zero, a slot over [`MAX_SLOT_WORDS`] or not a whole number of pages,
    /// a total that overflows) or the system refuses the mapping; callers then take their
    /// tables from the global allocator.
    pub fn new(slot_words: usize, slots: usize) -> Option<Arc<SideArena>> {
        let slot_bytes = slot_words.checked_mul(8)?;
        if slot_words == 0
            || slot_words > MAX_SLOT_WORDS
            || slots == 0
            || !slot_bytes.is_multiple_of(page_size())
        {
            return None;
        }
        let bytes = slot_bytes.checked_mul(slots)?;
        // SAFETY: a new private anonymous mapping at an address the kernel chooses: it
        // replaces nothing and aliases no memory of the process.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return None;
        }
        // Small pages only: where transparent huge pages are on for all memory, the first
        // touch of one 32 KiB table would otherwise bring in the 2 MiB around it. (Advice
        // only: if refused, the arena works the same.)
        // SAFETY: the range is the mapping just made; the advice changes no contents.
        unsafe { libc::madvise(p, bytes, libc::MADV_NOHUGEPAGE) };
        Some(Arc::new(SideArena {
            base: NonNull::new(p.cast::<AtomicU64>())?,
            slot_words,
            slots,
            next: AtomicUsize::new(0),
            free: Mutex::new(Vec::new()),
            retired: AtomicBool::new(false),
        }))
    }

    /// Words of each slot.
    pub fn slot_words(&self) -> usize {
        self.slot_words
    }

    /// Slots handed out now.
    pub fn carved(&self) -> usize {
        self.next.load(Ordering::Relaxed).min(self.slots) - self.free.lock().len()
    }

    /// The reservation's address range `[start, end)`.
    pub fn range(&self) -> (u64, u64) {
        let start = self.base.as_ptr() as u64;
        (start, start + (self.slots * self.slot_words * 8) as u64)
    }

    /// Bytes of the reservation in memory now (`mincore`; 0 if the system does not say).
    pub fn resident_bytes(&self) -> u64 {
        let page = page_size();
        let len = self.slots * self.slot_words * 8;
        let mut pages = vec![0u8; len.div_ceil(page)];
        // SAFETY: the range is this arena's mapping (page-aligned: mmap returned it), and
        // `pages` has one byte per page of it, as `mincore` writes.
        let r = unsafe { libc::mincore(self.base.as_ptr().cast(), len, pages.as_mut_ptr()) };
        if r != 0 {
            return 0;
        }
        pages.iter().filter(|&&b| b & 1 != 0).count() as u64 * page as u64
    }

    /// The owner of the arena's tables is going away with them: carve no slot again, and
    /// take slots back without zeroing them (a system call per slot that the unmapping, when
    /// the last slot goes, makes needless).
    pub fn retire(&self) {
        self.retired.store(true, Ordering::Relaxed);
    }

    /// A zeroed slot, or `None` when every slot is handed out (or the arena is retired).
    pub fn carve(self: &Arc<Self>) -> Option<WordArray<AtomicU64>> {
        if self.retired.load(Ordering::Relaxed) {
            return None;
        }
        let index = match self.free.lock().pop() {
            Some(i) => i,
            None => {
                let i = self.next.fetch_add(1, Ordering::Relaxed);
                if i >= self.slots {
                    // Keep `next` from wrapping however often a full arena is asked.
                    self.next.store(self.slots, Ordering::Relaxed);
                    return None;
                }
                i
            }
        };
        // SAFETY: `index < slots`, so the slot lies inside the mapping.
        let ptr =
            unsafe { NonNull::new_unchecked(self.base.as_ptr().add(index * self.slot_words)) };
        let owner = Arc::into_raw(Arc::clone(self)) as usize;
        debug_assert!(owner & 1 == 0 && owner >> OWNER_BITS == 0);
        Some(WordArray {
            ptr,
            tag: owner | (self.slot_words << OWNER_BITS) | CARVED,
            _owns: PhantomData,
        })
    }

    /// Take back the slot at `ptr`: zero it (its pages go back to the system, to be faulted
    /// in zeroed on their next use) and keep it for the next carve.
    fn give_back(&self, ptr: NonNull<AtomicU64>) {
        if self.retired.load(Ordering::Relaxed) {
            return;
        }
        let index = (ptr.as_ptr() as usize - self.base.as_ptr() as usize) / (self.slot_words * 8);
        // SAFETY: the slot is a whole number of pages of this arena's private anonymous
        // mapping, and its `WordArray` is being dropped: no reference to its words remains.
        // `MADV_DONTNEED` on such memory makes its next read return zeros.
        let r = unsafe {
            libc::madvise(
                ptr.as_ptr().cast(),
                self.slot_words * 8,
                libc::MADV_DONTNEED,
            )
        };
        if r == 0 {
            self.free.lock().push(index);
        }
        // (If the system refused, the slot is not reused: it would not be zero.)
    }
}

impl Drop for SideArena {
    fn drop(&mut self) {
        // SAFETY: every slot's `WordArray` holds a reference to the arena, so when the arena
        // is dropped none is left, and the mapping is the one `new` made, of this length.
        unsafe {
            libc::munmap(self.base.as_ptr().cast(), self.slots * self.slot_words * 8);
        }
    }
}

/// `tag` bit 0: the words are an arena's slot.
const CARVED: usize = 1;
/// A carved array's `tag` holds the arena's address in its low 48 bits (user-space addresses
/// fit them on the targets this crate builds for) and the length above.
const OWNER_BITS: u32 = 48;

/// An owned array of atomic words: a box, or a slot of a [`SideArena`] (see the module
/// documentation). Dereferences to the words.
pub struct WordArray<W = AtomicU64> {
    ptr: NonNull<W>,
    /// Boxed: `len << 1`. Carved: the arena (`Arc::into_raw`, one strong reference this
    /// array holds) `| len << OWNER_BITS | CARVED`.
    tag: usize,
    _owns: PhantomData<Box<[W]>>,
}

// SAFETY: a `WordArray<W>` owns its words as a `Box<[W]>` would (a carved one also holds an
// `Arc<SideArena>`, which is `Send`): sending it sends `W`s.
unsafe impl<W: Send> Send for WordArray<W> {}
// SAFETY: as for `Send`: sharing it shares `&[W]`, as a `Box<[W]>` would.
unsafe impl<W: Sync> Sync for WordArray<W> {}

impl<W> WordArray<W> {
    fn is_carved(&self) -> bool {
        self.tag & CARVED != 0
    }

    /// Number of words.
    #[inline(always)]
    pub fn len(&self) -> usize {
        if self.is_carved() {
            self.tag >> OWNER_BITS
        } else {
            self.tag >> 1
        }
    }

    /// True if the array has no words.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// True if the words are a slot of an arena (not from the global allocator).
    pub fn in_arena(&self) -> bool {
        self.is_carved()
    }
}

impl<W> From<Box<[W]>> for WordArray<W> {
    fn from(words: Box<[W]>) -> Self {
        let len = words.len();
        assert!(len < usize::MAX >> 1, "a word array of {len} words");
        let raw = Box::into_raw(words);
        WordArray {
            // SAFETY: `Box::into_raw` never returns null (an empty box's pointer is dangling
            // but non-null).
            ptr: unsafe { NonNull::new_unchecked(raw.cast::<W>()) },
            tag: len << 1,
            _owns: PhantomData,
        }
    }
}

impl<W> Default for WordArray<W> {
    fn default() -> Self {
        WordArray::from(Box::<[W]>::default())
    }
}

impl<W> std::ops::Deref for WordArray<W> {
    type Target = [W];

    #[inline(always)]
    fn deref(&self) -> &[W] {
        // SAFETY: boxed, `ptr` and `len` are the box's; carved, they are a slot of `len`
        // words of an arena this array keeps mapped (it holds a reference to it), owned by
        // this array alone and zeroed when carved (zero bits are a valid `AtomicU64`, the
        // only word carved). Either way the words live as long as `self`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len()) }
    }
}

impl<W> Drop for WordArray<W> {
    fn drop(&mut self) {
        if self.is_carved() {
            let owner = (self.tag & ((1usize << OWNER_BITS) - 1) & !CARVED) as *const SideArena;
            // SAFETY: a carved array's owner bits are the pointer `Arc::into_raw` gave for
            // the reference the carve took, released exactly once here.
            let arena = unsafe { Arc::from_raw(owner) };
            // Carved words are `AtomicU64`s (only `SideArena::carve` makes them).
            arena.give_back(self.ptr.cast());
        } else {
            let len = self.len();
            // SAFETY: boxed, `ptr` and `len` came from `Box::into_raw` of a `Box<[W]>` of
            // that length, and the box is rebuilt once, here.
            drop(unsafe {
                Box::from_raw(std::ptr::slice_from_raw_parts_mut(self.ptr.as_ptr(), len))
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slot() -> usize {
        page_size() / 8
    }

    #[test]
    fn carves_zeroed_slots_until_full_and_reuses_the_ones_given_back() {
        let arena = SideArena::new(slot(), 2).unwrap();
        let a = arena.carve().unwrap();
        let b = arena.carve().unwrap();
        assert!(arena.carve().is_none(), "two slots only");
        assert!(arena.carve().is_none());
        assert_eq!((a.len(), arena.carved()), (slot(), 2));
        assert!(a.in_arena() && b.in_arena());
        assert!(a.iter().all(|w| w.load(Ordering::Relaxed) == 0));
        a[3].store(7, Ordering::Relaxed);
        b[0].store(9, Ordering::Relaxed);
        assert!(arena.resident_bytes() >= 2 * 8 * slot() as u64);
        drop(a);
        assert_eq!(arena.carved(), 1);
        let c = arena.carve().expect("the slot given back");
        assert!(
            c.iter().all(|w| w.load(Ordering::Relaxed) == 0),
            "a slot given back is zero again"
        );
        assert_eq!(
            b[0].load(Ordering::Relaxed),
            9,
            "the other slot is untouched"
        );
    }

    #[test]
    fn the_arena_lives_as_long_as_its_slots() {
        let arena = SideArena::new(slot(), 4).unwrap();
        let a = arena.carve().unwrap();
        drop(arena);
        a[slot() - 1].store(1, Ordering::Relaxed);
        assert_eq!(a.iter().map(|w| w.load(Ordering::Relaxed)).sum::<u64>(), 1);
    }

    #[test]
    fn a_retired_arena_carves_nothing_and_takes_slots_back_as_they_are() {
        let arena = SideArena::new(slot(), 2).unwrap();
        let a = arena.carve().unwrap();
        a[0].store(5, Ordering::Relaxed);
        arena.retire();
        assert!(arena.carve().is_none());
        drop(a);
        assert_eq!(arena.free.lock().len(), 0, "not kept for reuse");
    }

    #[test]
    fn refuses_impossible_sizes() {
        assert!(SideArena::new(0, 4).is_none());
        assert!(SideArena::new(slot(), 0).is_none());
        assert!(SideArena::new(slot() + 1, 4).is_none(), "not whole pages");
        assert!(SideArena::new(usize::MAX / 4, 4).is_none());
        assert!(SideArena::new(slot(), usize::MAX / 2).is_none());
    }
}
