//! Print a memory report of a process that uses every kind of memory it lists: a heap whose
//! objects are read across GC cycles (through more than one view), a native pool with live
//! buffers and one leaked buffer, malloc from several threads.
//!
//! `cargo run --release -p gc-runtime --example memory_report [-- --json]`
use gc_runtime::native::{LeakDetection, NativePool, PoolConfig};
use gc_runtime::{Heap, HeapConfig};

fn main() {
    let heap = Heap::new(HeapConfig::new(256 << 20)).unwrap();
    let pool = NativePool::new(
        PoolConfig::new()
            .name("io")
            .leak_detection(LeakDetection::Paranoid),
    )
    .unwrap();
    let buffers: Vec<_> = (0..256)
        .map(|i| {
            let b = pool.allocate(16 << 10).unwrap();
            b.fill(0, b.len(), i as u8).unwrap();
            b
        })
        .collect();
    drop(pool.allocate(3000).unwrap()); // a leak report
                                        // Threads that malloc (each may get an arena of its own) and keep it while we report.
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let rx = std::sync::Arc::new(std::sync::Mutex::new(rx));
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let rx = rx.clone();
            std::thread::spawn(move || {
                let keep: Vec<Vec<u8>> = (0..512).map(|_| vec![1u8; 4096]).collect();
                let _ = rx.lock().unwrap().recv();
                drop(keep);
            })
        })
        .collect();
    let mut m = heap.attach("main").unwrap();
    m.scope(|s| {
        // 32 MiB of objects kept alive and read after each cycle: the views change.
        let objs: Vec<_> = (0..32)
            .map(|_| {
                let o = s.alloc(1, 0, 1 << 20).unwrap();
                s.get(o).write_bytes(0, &[7u8; 1 << 20]);
                o
            })
            .collect();
        let mut buf = vec![0u8; 1 << 20];
        for i in 0..3 {
            s.collect(&format!("example {i}"));
            for &o in &objs {
                s.get(o).read_bytes(0, &mut buf);
            }
        }
        let r = heap.memory_report();
        if std::env::args().any(|a| a == "--json") {
            println!("{}", r.to_json());
        } else {
            println!("{r}");
        }
    });
    drop(tx);
    for t in threads {
        t.join().unwrap();
    }
    for b in buffers {
        b.release().unwrap();
    }
}
