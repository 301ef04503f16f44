// A Local cannot be returned out of the scope that made it.
use gc_runtime::{Heap, HeapConfig};

fn main() {
    let heap = Heap::new(HeapConfig::new(16 << 20)).unwrap();
    let mut m = heap.attach("main").unwrap();
    let escaped = m.scope(|s| s.alloc(1, 0, 8).unwrap());
    let _ = escaped;
}
