// A Local cannot move to another thread.
use gc_runtime::{Heap, HeapConfig};

fn main() {
    let heap = Heap::new(HeapConfig::new(16 << 20)).unwrap();
    let mut m = heap.attach("main").unwrap();
    m.scope(|s| {
        let l = s.alloc(1, 0, 8).unwrap();
        std::thread::scope(|t| {
            t.spawn(move || {
                let moved = l;
                drop(moved);
            });
        });
    });
}
