//! What several gc-runtime integration tests share: the live set they build before they
//! churn garbage.

use gc_runtime::{Local, Scope};

/// Build a live set of `nodes` small objects (shape 2, one reference slot, 8 raw bytes) hung
/// from the slots of `table` in lists: node `i` holds payload `i` and is at the head of list
/// `i % table slots` when built. Each node is allocated in its own scope, so the builder keeps
/// no more than one local alive.
pub fn build_live_set(s: &mut Scope<'_>, table: Local<'_>, slots: usize, nodes: usize) {
    for i in 0..nodes {
        s.scope(|s| {
            let slot = i % slots;
            let node = s.alloc(2, 1, 8).expect("building the live set");
            let next = s.load(table, slot);
            s.store(node, 0, next);
            s.get(node).write_u64(0, i as u64);
            s.store(table, slot, Some(node));
        });
    }
}
