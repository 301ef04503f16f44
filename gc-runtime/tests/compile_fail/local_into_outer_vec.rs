// A Local of an inner scope cannot be smuggled into a container of the outer scope.
use gc_runtime::{Heap, HeapConfig, Local};

fn main() {
    let heap = Heap::new(HeapConfig::new(16 << 20)).unwrap();
    let mut m = heap.attach("main").unwrap();
    m.scope(|s| {
        let mut keep: Vec<Local<'_>> = Vec::new();
        let outer = s.alloc(1, 0, 8).unwrap();
        keep.push(outer);
        s.scope(|inner| {
            keep.push(inner.alloc(1, 0, 8).unwrap());
        });
    });
}
