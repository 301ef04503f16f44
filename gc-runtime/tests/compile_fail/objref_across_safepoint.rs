// A raw ObjRef cannot be held across a call that can reach a safepoint (here: alloc).
use gc_runtime::{Heap, HeapConfig};

fn main() {
    let heap = Heap::new(HeapConfig::new(16 << 20)).unwrap();
    let mut m = heap.attach("main").unwrap();
    m.scope(|s| {
        let l = s.alloc(1, 0, 8).unwrap();
        let raw = s.get(l);
        let _other = s.alloc(1, 0, 8).unwrap();
        raw.write_u64(0, 1);
    });
}
