// Temporary probe (not committed): heap-churn-like load, prints pause stats.
use gc_runtime::{parse_size, Heap, HeapConfig, Local, Mode, Scope};
use std::time::{Duration, Instant};

fn tree<'s>(s: &mut Scope<'s>, nodes: usize, id: &mut u64) -> Local<'s> {
    // complete binary tree of `nodes` nodes, built bottom-up in a nested scope
    let root = s.scope_escape(|s| {
        let mut level: Vec<Local> = Vec::new();
        for _ in 0..nodes {
            let n = s.alloc(1, 3, 8).unwrap();
            *id += 1;
            s.get(n).write_u64(0, *id);
            level.push(n);
        }
        for i in (1..nodes).rev() {
            let p = (i - 1) / 2;
            s.store(level[p], 1 + (i % 2 == 0) as usize, Some(level[i]));
        }
        Some(level[0])
    });
    root.unwrap()
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let heap = parse_size(&a[1]).unwrap();
    let mode: Mode = a[2].parse().unwrap();
    let secs: u64 = a[3].parse().unwrap();
    let h = Heap::new(HeapConfig::new(heap).mode(mode)).unwrap();
    let mut m = h.attach("main").unwrap();
    let node_size = 16 + 24 + 8;
    let trees = (heap / 2) as usize / (16 * node_size);
    let chunks = trees.div_ceil(16384);
    let t0 = Instant::now();
    m.scope(|s| {
        let table = s.alloc(2, chunks as u32, 0).unwrap();
        let ring = s.alloc(3, 1024, 0).unwrap();
        let mut id = 0;
        for c in 0..chunks {
            let ch = s.alloc(2, 16384, 0).unwrap();
            s.store(table, c, Some(ch));
        }
        for t in 0..trees {
            s.scope(|s| {
                let tr = tree(s, 16, &mut id);
                let ch = s.load(table, t / 16384).unwrap();
                s.store(ch, t % 16384, Some(tr));
            });
        }
        eprintln!("built {trees} trees in {:?}", t0.elapsed());
        let start = Instant::now();
        let mut rng = 0x12345u64;
        let mut ops = 0u64;
        while start.elapsed() < Duration::from_secs(secs) {
            for _ in 0..100 {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                let t = (rng % trees as u64) as usize;
                s.scope(|s| {
                    let tr = tree(s, 16, &mut id);
                    let ch = s.load(table, t / 16384).unwrap();
                    s.store(ch, t % 16384, Some(tr));
                    let p = s.alloc(4, 0, 16).unwrap();
                    s.store(tr, 0, Some(p));
                    let g = s.alloc(5, 0, 512).unwrap();
                    s.store(ring, (ops % 1024) as usize, Some(g));
                });
                ops += 1;
            }
        }
        eprintln!("{ops} ops in {secs}s");
    });
    let st = h.stats();
    let mut v: Vec<u64> = st.pauses.iter().map(|p| p.total_ns).collect();
    v.sort();
    if !v.is_empty() {
        let q = |f: f64| v[((v.len() - 1) as f64 * f) as usize] as f64 / 1e3;
        eprintln!(
            "{} cycles {} pauses p50 {:.0}us p99 {:.0}us max {:.0}us",
            st.cycles.len(),
            v.len(),
            q(0.5),
            q(0.99),
            q(1.0)
        );
        let mut t: Vec<u64> = st.pauses.iter().map(|p| p.time_to_safepoint_ns).collect();
        t.sort();
        eprintln!(
            "ttsp max {}us p50 {}us",
            t.last().unwrap() / 1000,
            t[t.len() / 2] / 1000
        );
        for k in ["Pause Mark Start", "Pause Mark End", "Pause Relocate Start"] {
            let mut a: Vec<u64> = st
                .pauses
                .iter()
                .filter(|p| p.kind.name() == k)
                .map(|p| p.at_safepoint_ns)
                .collect();
            a.sort();
            if !a.is_empty() {
                eprintln!(
                    "{k}: at-safepoint p50 {}us max {}us",
                    a[a.len() / 2] / 1000,
                    a.last().unwrap() / 1000
                );
            }
        }
        for c in st.cycles.iter().take(3) {
            eprintln!(
                "{} {:?}",
                c.cause,
                c.phases
                    .iter()
                    .map(|p| format!("{} {:.1}ms", p.name, p.duration_ns as f64 / 1e6))
                    .collect::<Vec<_>>()
            );
        }
    }
}
