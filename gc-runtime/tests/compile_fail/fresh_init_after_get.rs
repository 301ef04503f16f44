// A Fresh is consumed by `get`: no relaxed initializing store can follow the object's
// publication, which needs the ObjRef that `get` returns.
use gc_runtime::{Heap, HeapConfig};

fn main() {
    let heap = Heap::new(HeapConfig::new(16 << 20)).unwrap();
    let mut m = heap.attach("main").unwrap();
    let region = heap.root_region(1);
    m.scope(|s| {
        let _page = s.alloc(1, 0, 8).unwrap();
        let fresh = s.alloc_fresh(1, 1, 0).unwrap();
        region.set(s, 0, Some(fresh.get()));
        fresh.init(0, None);
    });
}
