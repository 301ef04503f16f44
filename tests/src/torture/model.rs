//! The shadow model of a thread's objects: what each object must hold (shape, footprint,
//! reference slots as ids, raw bytes), the weak handles and their targets, and reachability
//! over the model: which objects the mirrored roots (the locals of every nested scope, the
//! global handles and the thread's root-region slots) reach strongly, and pruning of the
//! objects that nothing, not even an uncleared weak handle, can reach any more. A direct
//! buffer's owner is an object with no reference slots whose model also holds the buffer's
//! (`direct::BufModel`).

use super::direct::BufModel;
use super::program::Program;
use gc_runtime::WeakRef;
use std::collections::{HashMap, HashSet};

pub(super) struct ObjModel {
    pub(super) shape: u32,
    /// Heap bytes it takes: its size, or its whole page for a large object.
    pub(super) footprint: u64,
    pub(super) edges: Vec<Option<u64>>,
    pub(super) bytes: Vec<u8>,
    /// A direct buffer's owner: the buffer's model (the owner's raw bytes are then the
    /// runtime's, read once after the allocation, and take the place of the id).
    pub(super) buf: Option<Box<BufModel>>,
}

impl ObjModel {
    /// Native bytes a buffer's owner holds (0 once released, or for another object).
    pub(super) fn native_bytes(&self) -> u64 {
        self.buf
            .as_ref()
            .filter(|b| b.refs > 0)
            .map_or(0, |b| b.data.len() as u64)
    }
}

pub(super) struct WeakEntry {
    pub(super) w: WeakRef,
    pub(super) target: u64,
    /// Seen cleared: the target is dead for good.
    pub(super) cleared: bool,
    /// Completed cycles when a checkpoint first found the target unreachable and the handle
    /// not yet cleared.
    pub(super) pending_since: Option<u64>,
}

/// The objects reachable in `objs` from `roots`, or the id of a referenced object the model
/// does not have.
pub(super) fn reach_in(
    objs: &HashMap<u64, ObjModel>,
    roots: impl IntoIterator<Item = u64>,
) -> Result<HashSet<u64>, u64> {
    let mut seen = HashSet::new();
    let mut stack: Vec<u64> = roots.into_iter().collect();
    while let Some(id) = stack.pop() {
        if !seen.insert(id) {
            continue;
        }
        let o = objs.get(&id).ok_or(id)?;
        stack.extend(o.edges.iter().flatten().filter(|e| !seen.contains(e)));
    }
    Ok(seen)
}

impl<'h> Program<'h> {
    fn strong_roots(&self) -> Vec<u64> {
        let mut r: Vec<u64> = self.levels.iter().flatten().copied().collect();
        r.extend(self.globals.iter().map(|g| g.1));
        r.extend(self.region_ids.iter().flatten());
        r
    }

    pub(super) fn reach(&self, roots: impl IntoIterator<Item = u64>) -> HashSet<u64> {
        reach_in(&self.objs, roots).unwrap_or_else(|id| {
            self.fail(format!(
                "model: object {id:#x} is referenced but was pruned"
            ))
        })
    }

    pub(super) fn strongly_reachable(&self) -> HashSet<u64> {
        self.reach(self.strong_roots())
    }

    /// Forget model objects nothing can reach any more (not even an uncleared weak handle).
    /// Returns the strongly reachable bytes.
    pub(super) fn prune(&mut self) -> u64 {
        let strong = self.strongly_reachable();
        let weak_targets: Vec<u64> = self
            .weaks
            .iter()
            .filter(|w| !w.cleared && !strong.contains(&w.target))
            .map(|w| w.target)
            .collect();
        let weakly = self.reach(weak_targets);
        self.objs
            .retain(|id, _| strong.contains(id) || weakly.contains(id));
        self.model_bytes = self.objs.values().map(|o| o.footprint).sum();
        self.native_bytes = self.objs.values().map(|o| o.native_bytes()).sum();
        self.est_strong = strong.iter().map(|id| self.objs[id].footprint).sum();
        self.est_strong
    }

    pub(super) fn total_locals(&self) -> usize {
        self.levels.iter().map(|l| l.len()).sum()
    }
}
