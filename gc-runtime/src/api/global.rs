//! Handles that live outside every scope: [`Global`] (a strong root until dropped, V8's
//! `Global`, JNI's global reference) and [`WeakRef`] (does not keep its object alive; JNI's weak
//! global reference). Each owns one slot of a heap's handle table (the globals of the strong
//! `Roots`, or the `WeakProcessor`'s weak slots), keeps the heap alive, and frees its slot when
//! dropped. Both are `Send + Sync`; reading the object needs a scope of the same heap
//! (`Scope::from_global`, `Scope::upgrade`, [`Global::get`]).

use super::scope::{foreign, Local, ObjRef, Scope};
use crate::heap::load_weak;
use crate::heap::HeapInner;
use crate::roots::HandleTable;
use gc_core::{ColoredPtr, ColoredSlot};
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Which of the heap's tables a slot belongs to.
#[derive(Clone, Copy)]
enum Table {
    Globals,
    Weaks,
}

/// One slot of a heap's handle table, owned: freed on drop.
struct TableSlot {
    heap: Arc<HeapInner>,
    table: Table,
    slot: *const ColoredSlot,
    id: usize,
}

// SAFETY: the slot is an atomic slot in one of the heap's handle tables, whose chunks never
// move or get freed while the table lives, and the `Arc` keeps the heap (and so the table)
// alive; all access to the slot is atomic.
unsafe impl Send for TableSlot {}
// SAFETY: as above.
unsafe impl Sync for TableSlot {}

impl TableSlot {
    fn new(heap: &Arc<HeapInner>, table: Table, ptr: ColoredPtr) -> Self {
        let (slot, id) = Self::table_of(heap, table).alloc(ptr);
        TableSlot {
            heap: heap.clone(),
            table,
            slot,
            id,
        }
    }

    fn table_of(heap: &HeapInner, table: Table) -> &HandleTable {
        match table {
            Table::Globals => heap.roots().globals(),
            Table::Weaks => heap.weak_handles(),
        }
    }

    #[inline]
    fn slot(&self) -> &ColoredSlot {
        // SAFETY: see `unsafe impl Send`: the slot lives as long as the table, which `self`
        // keeps alive, and is not freed before `self` drops.
        unsafe { &*self.slot }
    }

    /// The slot, for a scope of `heap`; panics (naming `what`) for a scope of another heap.
    #[inline]
    fn slot_for(&self, heap: &Arc<HeapInner>, what: &str) -> &ColoredSlot {
        if !Arc::ptr_eq(&self.heap, heap) {
            foreign(what);
        }
        self.slot()
    }
}

impl Drop for TableSlot {
    fn drop(&mut self) {
        Self::table_of(&self.heap, self.table).free(self.id);
    }
}

/// A strong handle outside any scope; `Send + Sync`, dropped to release.
pub struct Global(TableSlot);

impl Global {
    pub(super) fn new(heap: &Arc<HeapInner>, ptr: ColoredPtr) -> Self {
        Global(TableSlot::new(heap, Table::Globals, ptr))
    }

    /// The slot, for a scope of `heap`.
    ///
    /// # Panics
    /// If `heap` is not the heap of this handle (`what` names the call).
    #[inline]
    pub(super) fn slot_for(&self, heap: &Arc<HeapInner>, what: &str) -> &ColoredSlot {
        self.0.slot_for(heap, what)
    }

    /// The slot itself, for read-only introspection (`inspect`).
    #[inline]
    pub(super) fn table_slot(&self) -> &ColoredSlot {
        self.0.slot()
    }

    /// The object of this global handle, borrowed until the next safepoint (no local handle
    /// is pushed).
    ///
    /// # Panics
    /// If `s` is a scope of another heap.
    #[inline]
    pub fn get<'a>(&self, s: &'a Scope<'_>) -> ObjRef<'a> {
        let m = s.mutator();
        let p = m.load_slot(self.slot_for(&m.heap, "Global::get"));
        ObjRef::from_non_null(p, m)
    }
}

/// A weak handle; `Send + Sync`, dropped to release.
pub struct WeakRef(TableSlot);

impl WeakRef {
    pub(super) fn new(heap: &Arc<HeapInner>, ptr: ColoredPtr) -> Self {
        WeakRef(TableSlot::new(heap, Table::Weaks, ptr))
    }

    /// The slot, for a scope of `heap`.
    ///
    /// # Panics
    /// If `heap` is not the heap of this handle (`what` names the call).
    #[inline]
    pub(super) fn slot_for(&self, heap: &Arc<HeapInner>, what: &str) -> &ColoredSlot {
        self.0.slot_for(heap, what)
    }

    /// The object of this weak handle, borrowed until the next safepoint (no local handle is
    /// pushed), or `None` if it has died: as [`Scope::upgrade`], for a stretch that holds
    /// [`ObjRef`]s.
    ///
    /// # Panics
    /// If `s` is a scope of another heap.
    #[inline]
    pub fn get<'a>(&self, s: &'a Scope<'_>) -> Option<ObjRef<'a>> {
        let m = s.mutator();
        let slot = self.slot_for(&m.heap, "WeakRef::get");
        let p = load_weak(&m.heap, slot, || m.load_slot(slot));
        ObjRef::from_ptr(p, m)
    }

    /// True if the collector has cleared this handle (its object died). A `false` answer can
    /// change at the next cycle.
    pub fn is_cleared(&self) -> bool {
        self.0.slot().load(Ordering::Acquire).is_null()
    }
}

impl<'s> Scope<'s> {
    /// A global handle to the object (a strong root until dropped).
    pub fn global(&self, l: Local<'_>) -> Global {
        Global::new(
            self.heap(),
            self.get(l).ptr_for(self.heap(), "Scope::global"),
        )
    }

    /// The object of a global handle, as a local handle.
    pub fn from_global(&self, g: &Global) -> Local<'s> {
        let p = self
            .mutator()
            .load_slot(g.slot_for(self.heap(), "Scope::from_global (a Global)"));
        self.push(p)
    }

    /// A weak handle to the object: does not keep it alive.
    pub fn weak(&self, l: Local<'_>) -> WeakRef {
        WeakRef::new(self.heap(), self.get(l).ptr_for(self.heap(), "Scope::weak"))
    }

    /// A weak handle to an object borrowed in this stretch (as [`Scope::weak`]).
    ///
    /// # Panics
    /// If `o` is an object of another heap.
    pub fn weak_ref(&self, o: ObjRef<'_>) -> WeakRef {
        WeakRef::new(self.heap(), o.ptr_for(self.heap(), "Scope::weak_ref"))
    }

    /// The object of a weak handle, rooted here, or `None` if it has died.
    pub fn upgrade(&self, w: &WeakRef) -> Option<Local<'s>> {
        let slot = w.slot_for(self.heap(), "Scope::upgrade (a WeakRef)");
        let p = load_weak(self.heap(), slot, || self.mutator().load_slot(slot));
        (!p.is_null()).then(|| self.push(p))
    }
}
