//! The embedding API's rooting discipline (V8's `HandleScope`, with Rust lifetimes doing the
//! checking):
//!
//! - a [`Scope<'s>`] is opened on a mutator with [`Mutator::scope`]; every [`Local<'s>`] it
//!   creates is a slot on the mutator's handle stack, a root the collector updates when the
//!   object moves. The closure is higher-ranked over `'s`, so a `Local<'s>` cannot leave its
//!   scope, and `Local` is not `Send`, so it cannot leave its thread;
//! - every call that can reach a safepoint (allocation, `poll`, `blocking`, `collect`, a
//!   nested scope) takes `&mut self`, so no [`ObjRef`] (a raw, borrowed pointer into the heap,
//!   the fast way to read and write objects) can be alive across a pause: the borrow checker
//!   enforces what HotSpot enforces with "no safepoint" verification.
//! - [`Global`](crate::Global) handles live until dropped and can move between threads; [`WeakRef`](crate::WeakRef)s do not
//!   keep their object alive and read as `None` once it died.

use super::mutator::{Mutator, OutOfMemory};
use crate::heap::HeapInner;
use crate::roots::HandleStack;
use crate::roots::MutatorShared;
use gc_core::{ColoredPtr, ColoredSlot, Object, Offset};
use std::marker::PhantomData;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// A rooted reference, valid for the scope `'s` on the thread that made it.
#[derive(Clone, Copy)]
pub struct Local<'s> {
    pub(super) slot: &'s ColoredSlot,
    _not_send: PhantomData<*const ()>,
}

impl std::fmt::Debug for Local<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Local({:#x})", self.slot.load(Ordering::Relaxed))
    }
}

/// A borrowed, unrooted pointer to an object: valid until the next call that can reach a
/// safepoint (the borrow checker ends it there).
#[derive(Clone, Copy)]
pub struct ObjRef<'a> {
    ptr: ColoredPtr,
    m: &'a Mutator,
}

impl std::fmt::Debug for ObjRef<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ObjRef({:#x})", self.ptr)
    }
}

impl<'a> ObjRef<'a> {
    #[inline]
    pub(super) fn from_ptr(ptr: ColoredPtr, m: &'a Mutator) -> Option<ObjRef<'a>> {
        (!ptr.is_null()).then_some(ObjRef { ptr, m })
    }

    /// An `ObjRef` for a pointer known to be non-null (a strong handle's slot, which only the
    /// embedder's drop of the handle empties).
    #[inline]
    pub(super) fn from_non_null(ptr: ColoredPtr, m: &'a Mutator) -> ObjRef<'a> {
        debug_assert!(!ptr.is_null());
        ObjRef { ptr, m }
    }

    /// The pointer, for storing it on behalf of heap `heap`: panics if the object belongs to
    /// another heap (its pointer would never be relocated or healed by `heap`).
    #[inline]
    pub(super) fn ptr_for(&self, heap: &Arc<HeapInner>, what: &str) -> ColoredPtr {
        if !Arc::ptr_eq(&self.m.heap, heap) {
            foreign(what);
        }
        self.ptr
    }

    /// The pointer, for storing it on behalf of mutator `m`: as [`Self::ptr_for`], with the
    /// common case (the object was loaded by `m` itself) decided by one comparison.
    #[inline(always)]
    pub(super) fn ptr_of(&self, m: &Mutator, what: &str) -> ColoredPtr {
        if !std::ptr::eq(self.m, m) && !Arc::ptr_eq(&self.m.heap, &m.heap) {
            foreign(what);
        }
        self.ptr
    }

    /// The mutator that loaded this object (whose barrier every access through it uses).
    #[inline(always)]
    pub(super) fn mutator(&self) -> &'a Mutator {
        self.m
    }

    /// The object's colored pointer, as loaded (good until the next safepoint).
    #[inline(always)]
    pub(super) fn ptr(&self) -> ColoredPtr {
        self.ptr
    }

    #[inline]
    pub(super) fn obj(&self) -> Object {
        // SAFETY: `ptr` is a good (view-colored) pointer to a live object obtained through the
        // barrier, and no safepoint can happen while this borrow lives, so the object is
        // neither freed nor moved.
        unsafe { Object::from_addr(self.m.heap.layout().view_address(self.ptr)) }
    }

    /// The embedder's shape id.
    #[inline]
    pub fn shape(&self) -> u32 {
        self.obj().shape()
    }
    /// Number of reference slots.
    #[inline]
    pub fn n_refs(&self) -> usize {
        self.obj().n_refs()
    }
    /// Number of raw bytes.
    #[inline]
    pub fn n_bytes(&self) -> usize {
        self.obj().n_bytes()
    }

    /// Load reference slot `i` through the barrier (healing the slot).
    #[inline(always)]
    pub fn load(&self, i: usize) -> Option<ObjRef<'a>> {
        let p = self.m.load_slot(self.obj().ref_slot(i));
        ObjRef::from_ptr(p, self.m)
    }

    /// Store an object (or null) into reference slot `i`.
    ///
    /// # Panics
    /// If `v` is an object of another heap, or `i` is out of range.
    #[inline]
    pub fn store(&self, i: usize, v: Option<ObjRef<'_>>) {
        let p = v.map_or(ColoredPtr::NULL, |o| o.ptr_of(self.m, "ObjRef::store"));
        debug_assert!(self.m.storable(p), "a mutator never stores a bad pointer");
        let obj = self.obj();
        let slot = obj.ref_slot(i);
        slot.store(p, Ordering::Release);
        self.m
            .store_barrier(slot as *const ColoredSlot as *const u64, p, false);
    }

    /// Copy raw bytes starting at `offset` into `out`.
    #[inline]
    pub fn read_bytes(&self, offset: usize, out: &mut [u8]) {
        self.obj().read_bytes(offset, out)
    }
    /// Write raw bytes at `offset`.
    #[inline]
    pub fn write_bytes(&self, offset: usize, data: &[u8]) {
        self.obj().write_bytes(offset, data)
    }
    /// Read a little-endian u64 at raw byte `offset`.
    #[inline(always)]
    pub fn read_u64(&self, offset: usize) -> u64 {
        self.obj().read_u64(offset)
    }
    /// Write a little-endian u64 at raw byte `offset`.
    #[inline(always)]
    pub fn write_u64(&self, offset: usize, v: u64) {
        self.obj().write_u64(offset, v)
    }
    /// Read an f64 at raw byte `offset`.
    #[inline]
    pub fn read_f64(&self, offset: usize) -> f64 {
        f64::from_bits(self.read_u64(offset))
    }
    /// Write an f64 at raw byte `offset`.
    #[inline]
    pub fn write_f64(&self, offset: usize, v: f64) {
        self.write_u64(offset, v.to_bits())
    }

    /// True if both refer to the same object.
    #[inline]
    pub fn same(&self, other: &ObjRef<'_>) -> bool {
        // Equal words are the same object; unequal ones may still be (other color bits).
        if self.ptr == other.ptr {
            return true;
        }
        // Otherwise, the same object when they differ in color bits only.
        (self.ptr.raw() ^ other.ptr.raw()) & self.m.offset_mask == 0
    }

    /// The object's current heap offset (changes when the collector moves it): a typed word
    /// that compares, hashes and prints as hex, for tests and tools.
    #[inline]
    pub fn address(&self) -> Offset {
        self.m.heap.layout().offset(self.ptr)
    }
}

/// A handle scope on a mutator. See the module documentation.
pub struct Scope<'s> {
    m: &'s mut Mutator,
}

/// Truncates the handle stack when a scope ends, also on unwinding.
struct Truncate<'m> {
    handles: &'m HandleStack,
    base: usize,
}

impl Drop for Truncate<'_> {
    fn drop(&mut self) {
        self.handles.truncate(self.base);
    }
}

/// Ends a scope's claim on the running state, also on unwinding: the outermost scope makes
/// the mutator blocked again.
struct ScopeExit<'m> {
    heap: &'m HeapInner,
    shared: &'m MutatorShared,
    depth: u32,
}

impl Drop for ScopeExit<'_> {
    fn drop(&mut self) {
        self.shared.scope_depth.store(self.depth, Ordering::Relaxed);
        if self.depth == 0 {
            self.heap.safepoint().enter_blocked(&self.shared.thread);
        }
    }
}

impl Mutator {
    /// Open a handle scope; every handle it creates is dropped when `f` returns (or unwinds).
    ///
    /// Only inside a scope does the mutator touch the heap, and only there do the collector's
    /// pauses wait for it. The outermost scope leaves the blocked state on entry (waiting out
    /// a pause in progress) and enters it again when `f` returns or unwinds; nested scopes
    /// only count.
    pub fn scope<R>(&mut self, f: impl for<'s> FnOnce(&mut Scope<'s>) -> R) -> R {
        // Second references to the shared part and the heap (no refcount traffic: scopes are
        // hot in interpreters); they stay valid because `self` keeps its `Arc`s for the whole
        // call.
        let shared: *const MutatorShared = Arc::as_ptr(&self.shared);
        let heap: *const HeapInner = Arc::as_ptr(&self.heap);
        // SAFETY: `self.shared` and `self.heap` are not replaced while `self` is borrowed by
        // this call, so the pointees outlive the guards.
        let (shared, heap) = unsafe { (&*shared, &*heap) };
        let depth = shared.scope_depth.load(Ordering::Relaxed);
        if depth == 0 {
            self.leave_blocked();
        }
        shared.scope_depth.store(depth + 1, Ordering::Relaxed);
        // Declared first, dropped last: the handle stack is truncated while still running.
        let _exit = ScopeExit {
            heap,
            shared,
            depth,
        };
        let handles = &shared.handles;
        let _t = Truncate {
            handles,
            base: handles.top(),
        };
        let mut s = Scope { m: self };
        let result = f(&mut s);
        if depth == 0 {
            // Between scopes the heap's count of allocated bytes is exact.
            self.count_allocated();
        }
        result
    }
}

impl<'s> Scope<'s> {
    pub(super) fn mutator(&self) -> &Mutator {
        self.m
    }

    pub(super) fn mutator_mut(&mut self) -> &mut Mutator {
        self.m
    }

    pub(super) fn heap(&self) -> &Arc<HeapInner> {
        &self.m.heap
    }

    #[inline]
    pub(super) fn push(&self, ptr: ColoredPtr) -> Local<'s> {
        let slot = self.m.shared.handles.push(ptr);
        // SAFETY: handle-stack slots never move or get unmapped while the mutator lives, and
        // this scope truncates the stack only after `'s` ends, so the slot outlives `'s`.
        let slot: &'s ColoredSlot = unsafe { &*(slot as *const ColoredSlot) };
        Local {
            slot,
            _not_send: PhantomData,
        }
    }

    /// Allocate an object with `n_refs` null reference slots and `n_bytes` zeroed raw bytes.
    /// May stall for a GC cycle; fails with [`OutOfMemory`] if even that cannot make room.
    pub fn alloc(
        &mut self,
        shape: u32,
        n_refs: u32,
        n_bytes: usize,
    ) -> Result<Local<'s>, OutOfMemory> {
        let p = self.m.alloc(shape, n_refs, 0, n_bytes as u64)?;
        Ok(self.push(p))
    }

    /// The object behind a handle, for fast access until the next safepoint.
    ///
    /// # Panics
    /// If `l` was made by a scope of another heap's mutator. Every call below that takes a
    /// [`Local`] checks it this way.
    #[inline]
    pub fn get<'a>(&'a self, l: Local<'_>) -> ObjRef<'a> {
        if !self.m.shared.handles.owns(l.slot) {
            foreign("Scope::get (a Local)");
        }
        let p = self.m.load_slot(l.slot);
        ObjRef { ptr: p, m: self.m }
    }

    /// Root an object in this scope.
    ///
    /// # Panics
    /// If `o` is an object of another heap.
    #[inline]
    pub fn root(&self, o: ObjRef<'_>) -> Local<'s> {
        self.push(o.ptr_for(self.heap(), "Scope::root"))
    }

    /// Load reference slot `i` of `obj` into a new handle.
    pub fn load(&self, obj: Local<'_>, i: usize) -> Option<Local<'s>> {
        self.get(obj).load(i).map(|o| self.push(o.ptr))
    }

    /// Store `v` (or null) into reference slot `i` of `obj`.
    pub fn store(&self, obj: Local<'_>, i: usize, v: Option<Local<'_>>) {
        let o = self.get(obj);
        let v = v.map(|l| self.get(l));
        o.store(i, v);
    }

    /// True if both handles refer to the same object.
    pub fn same_object(&self, a: Local<'_>, b: Local<'_>) -> bool {
        self.get(a).same(&self.get(b))
    }

    /// Safepoint poll: parks here if the collector is stopping the world.
    pub fn poll(&mut self) {
        self.m.poll();
    }

    /// Number of safepoint polls this scope's mutator has made since it attached: each
    /// [`Scope::poll`], each allocation, each chunk of a large object's zeroing or of a long
    /// direct-buffer copy (at most 128 KiB at a time, each chunk as a blocked thread that
    /// waits out a pause in progress when it ends, so that no pause waits for the work), and
    /// the poll between two chunks of [`Scope::read_bytes`] and the other bulk byte calls.
    /// For tests and tools that check that long work polls as it goes.
    pub fn polls(&self) -> u64 {
        self.m.polls()
    }

    /// True if a pause is requested: [`Scope::poll`] would park now. One relaxed load, for a
    /// loop that holds [`ObjRef`]s (which a poll would end) to test on every back edge and give
    /// them up to poll only when this is true.
    #[inline]
    pub fn poll_requested(&self) -> bool {
        self.m.heap.safepoint().is_requested()
    }

    /// Run `f` (sleep, I/O, waiting) as a blocked thread: pauses do not wait for it.
    pub fn blocking<R>(&mut self, f: impl FnOnce() -> R) -> R {
        self.m.blocking(f)
    }

    /// Run a full GC cycle and wait for it (as a blocked thread).
    pub fn collect(&mut self, cause: &str) {
        self.m.collect(cause)
    }

    /// Run a minor (young-only) cycle and wait for it (as a blocked thread); the error of
    /// `Heap::collect_minor` if the heap cannot run one.
    pub fn collect_minor(&mut self) -> Result<(), String> {
        super::mutator::minor_allowed(self.m.heap.config())?;
        self.m.collect_for(crate::observe::GcCause::MinorRequested);
        Ok(())
    }

    /// A nested scope: its handles are dropped when `f` returns.
    pub fn scope<R>(&mut self, f: impl for<'i> FnOnce(&mut Scope<'i>) -> R) -> R {
        self.m.scope(f)
    }

    /// A nested scope that hands one handle back out (V8's `EscapableHandleScope`).
    pub fn scope_escape(
        &mut self,
        f: impl for<'i> FnOnce(&mut Scope<'i>) -> Option<Local<'i>>,
    ) -> Option<Local<'s>> {
        // The handle is read through the barrier, as every read of a root is: the slot may
        // still hold a pointer the collector has not healed yet (roots are marked while
        // mutators run), and the copy must be good.
        let ptr = self.m.scope(|inner| {
            let l = f(inner)?;
            Some(inner.m.load_slot(l.slot))
        })?;
        // No safepoint between the inner scope's end and this push.
        let l = self.push(ptr);
        Some(l)
    }

    /// The current heap offset of an object (changes when it moves; for tests and tools).
    pub fn address_of(&self, l: Local<'_>) -> Offset {
        self.get(l).address()
    }

    /// Number of local handles on this mutator's stack.
    pub fn handle_count(&self) -> usize {
        self.m.shared.handles.top()
    }
}

/// The refusal of an object, handle or region of another heap.
#[cold]
#[inline(never)]
#[track_caller]
pub(super) fn foreign(what: &str) -> ! {
    panic!(
        "{what}: an object or handle of another heap was passed to a scope of this heap; \
         objects, handles and root regions can only be used with scopes of the heap they \
         belong to"
    )
}
