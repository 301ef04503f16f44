// A just-allocated object (Fresh) cannot be held across a call that can reach a safepoint
// (here: poll): its relaxed initializing stores are sound only before the next safepoint.
use gc_runtime::{Heap, HeapConfig};

fn main() {
    let heap = Heap::new(HeapConfig::new(16 << 20)).unwrap();
    let mut m = heap.attach("main").unwrap();
    m.scope(|s| {
        let _page = s.alloc(1, 0, 8).unwrap();
        let fresh = s.alloc_fresh(1, 1, 0).unwrap();
        s.poll();
        fresh.init(0, None);
    });
}
