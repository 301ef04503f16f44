//! Retired forwardings: the entries of a reset relocation set, held until every other
//! reference to them is gone, so that their last reference — and the free of their
//! forwarding tables, megabytes at large heaps — is dropped by the collector's driver.
//!
//! ZGC frees a relocation set's forwardings in its own reset phase. Here the forwarding
//! index also holds a reference per granule, which it drops only through the heap's epoch
//! domain once no reader can still see it; without this list, the last of those deferred
//! drops — run by whichever thread pins the domain when it becomes due, often a mutator in a
//! barrier's slow path — would free the table inside that mutator's scope.

use std::sync::Arc;

/// Values whose last reference this list drops, on the thread that calls
/// [`RetiredForwardings::free_unshared`].
pub(super) struct RetiredForwardings<T> {
    held: Vec<Arc<T>>,
}

impl<T> Default for RetiredForwardings<T> {
    fn default() -> Self {
        RetiredForwardings { held: Vec::new() }
    }
}

impl<T> RetiredForwardings<T> {
    /// Hold a reference to each of `values` until nothing else does.
    pub(super) fn retire(&mut self, values: impl IntoIterator<Item = Arc<T>>) {
        self.held.extend(values);
    }

    /// Drop, here, the values this list alone still references; keep the others for a later
    /// call. Returns how many were dropped. (A count of one cannot rise again: no other
    /// reference is left to clone, and a reader of the index that could still clone one is
    /// pinned, which keeps the index's own reference alive.)
    pub(super) fn free_unshared(&mut self) -> usize {
        let before = self.held.len();
        self.held.retain(|v| Arc::strong_count(v) > 1);
        before - self.held.len()
    }

    /// The values still held.
    pub(super) fn iter(&self) -> impl Iterator<Item = &Arc<T>> {
        self.held.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gc_core::granule_map::GranuleMap;
    use gc_core::{heap_epoch, Offset, GRANULE_SIZE};
    use std::sync::Mutex;
    use std::thread::ThreadId;

    /// Records the thread that dropped it.
    struct Table(Arc<Mutex<Option<ThreadId>>>);
    impl Drop for Table {
        fn drop(&mut self) {
            *self.0.lock().unwrap() = Some(std::thread::current().id());
        }
    }

    #[test]
    fn the_last_reference_is_dropped_by_the_caller_not_by_the_maps_deferred_drop() {
        let dropped_by = Arc::new(Mutex::new(None));
        let map: GranuleMap<Table> = GranuleMap::new(Offset::from_raw(0), 4 * GRANULE_SIZE);
        let at = Offset::from_raw(GRANULE_SIZE);
        let mut retired = RetiredForwardings::default();
        {
            let t = Arc::new(Table(dropped_by.clone()));
            map.insert(at, 2 * GRANULE_SIZE, &t);
            map.remove(at, 2 * GRANULE_SIZE, &t);
            retired.retire([t]);
            // As the relocation set's reset does: the deferred drops leave this thread's bag.
            heap_epoch::pin().flush();
        }
        // Another thread (a mutator) pins the heap's domain until the map's deferred drops
        // have run: the list still holds a reference, so they do not free the table.
        std::thread::scope(|s| {
            s.spawn(|| {
                for _ in 0..100_000 {
                    if retired.iter().all(|t| Arc::strong_count(t) == 1) {
                        break;
                    }
                    heap_epoch::pin().flush();
                }
            });
        });
        assert_eq!(
            retired.iter().map(Arc::strong_count).collect::<Vec<_>>(),
            [1],
            "the map's deferred drops ran, and the list's reference is the last"
        );
        assert_eq!(
            *dropped_by.lock().unwrap(),
            None,
            "freed by the deferred drop"
        );
        assert_eq!(retired.free_unshared(), 1);
        assert_eq!(
            *dropped_by.lock().unwrap(),
            Some(std::thread::current().id()),
            "freed on the thread that called free_unshared"
        );
        assert_eq!(retired.free_unshared(), 0, "nothing left");
    }

    #[test]
    fn a_value_still_shared_is_kept() {
        let mut retired = RetiredForwardings::default();
        let shared = Arc::new(7u64);
        retired.retire([shared.clone(), Arc::new(8u64)]);
        assert_eq!(retired.free_unshared(), 1, "the unshared one");
        assert_eq!(retired.iter().map(|v| **v).collect::<Vec<_>>(), [7]);
        drop(shared);
        assert_eq!(retired.free_unshared(), 1);
        assert_eq!(retired.iter().count(), 0);
    }
}
