// A Mutator belongs to the thread that attached.
use gc_runtime::{Heap, HeapConfig};

fn main() {
    let heap = Heap::new(HeapConfig::new(16 << 20)).unwrap();
    let m = heap.attach("main").unwrap();
    std::thread::spawn(move || drop(m));
}
