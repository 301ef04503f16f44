//! The small object graph the relocation figures draw, built on a real heap whose cycles a
//! `Stepper` holds between their concurrent phases: a root `R` with one reference slot per
//! live object, and a garbage object before each live one, so that the page is sparse and
//! Concurrent Select Relocation Set picks it. Offsets are kept relative to the heap's first
//! offset, so the figures are the same on every run (their committed SVGs are compared byte
//! for byte with what `book-figures` renders).

use gc_runtime::{GcPhase, Global, Heap, HeapConfig, Mode, Mutator, Step, Stepper};

/// A 2 MiB small page.
pub(super) const PAGE: u64 = 2 << 20;
/// Raw bytes of the live objects (varied, so that the slides of in-place compaction differ)
/// and of the garbage between them.
const LIVE_BYTES: [usize; 5] = [8, 40, 16, 56, 24];
const GARBAGE_BYTES: [usize; 5] = [48, 24, 80, 32, 64];
/// Raw bytes of the fillers that leave no page free (see [`Tiny::fill_heap`]).
const FILLER_BYTES: usize = 192 << 10;
/// Reference slots of F, the fillers' table (ten fillers fill a page).
const FILLERS: usize = 24;

/// One object of the graph, at an offset relative to the heap.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Obj {
    pub(super) name: String,
    pub(super) off: u64,
    pub(super) size: u64,
    pub(super) live: bool,
}

/// A heap's graph: its mutator, root and objects.
pub(super) struct Tiny<'h> {
    pub(super) heap: &'h Heap,
    pub(super) m: Mutator,
    pub(super) root: Global,
    pub(super) objs: Vec<Obj>,
    /// The heap's first offset (subtracted from every offset and word shown).
    pub(super) start: u64,
    /// The fillers of a full heap, kept alive.
    fillers: Option<Global>,
}

fn oom(e: gc_runtime::OutOfMemory) -> String {
    e.to_string()
}

fn size_of(n_refs: u64, n_bytes: usize) -> Result<u64, String> {
    gc_core::object_size(n_refs, n_bytes as u64).map_err(|e| e.to_string())
}

/// A concurrent heap of `max_heap` bytes for a figure: one GC thread, the verifier on; with
/// `no_reserve`, mutators may fill every page. Take its stepper before building the graph
/// (the director starts no cycle of its own while a stepper lives).
pub(super) fn heap(max_heap: u64, no_reserve: bool) -> Result<Heap, String> {
    let mut cfg = HeapConfig::new(max_heap)
        .mode(Mode::Concurrent)
        .gc_threads(1)
        .verify(true)
        .uncommit_delay(None);
    if no_reserve {
        cfg = cfg.relocation_reserve(0);
    }
    Heap::new(cfg).map_err(|e| e.to_string())
}

impl<'h> Tiny<'h> {
    /// Build the graph on `heap`.
    pub(super) fn new(heap: &'h Heap) -> Result<Tiny<'h>, String> {
        let start = heap.offset_range().0.raw();
        let mut m = heap.attach("figure").map_err(|e| e.to_string())?;
        let n = LIVE_BYTES.len();
        let (root, objs) = m.scope(|s| -> Result<_, String> {
            let r = s.alloc(1, n as u32, 8).map_err(oom)?;
            let mut objs = vec![Obj {
                name: "R".into(),
                off: s.address_of(r).raw() - start,
                size: size_of(n as u64, 8)?,
                live: true,
            }];
            for i in 0..n {
                let g = s.alloc(9, 0, GARBAGE_BYTES[i]).map_err(oom)?;
                objs.push(Obj {
                    name: String::new(),
                    off: s.address_of(g).raw() - start,
                    size: size_of(0, GARBAGE_BYTES[i])?,
                    live: false,
                });
                let o = s.alloc(2, 0, LIVE_BYTES[i]).map_err(oom)?;
                s.get(o).write_u64(0, 100 + i as u64);
                s.store(r, i, Some(o));
                objs.push(Obj {
                    name: ((b'A' + i as u8) as char).to_string(),
                    off: s.address_of(o).raw() - start,
                    size: size_of(0, LIVE_BYTES[i])?,
                    live: true,
                });
            }
            Ok((s.global(r), objs))
        })?;
        Ok(Tiny {
            heap,
            m,
            root,
            objs,
            start,
            fillers: None,
        })
    }

    /// The live objects' values (`100 + i` in each one's first word), read through the
    /// barrier: proof that a figure's moved objects are the same objects.
    pub(super) fn values(&mut self) -> Vec<u64> {
        let root = &self.root;
        self.m.scope(|s| {
            let r = s.from_global(root);
            (0..LIVE_BYTES.len())
                .map(|i| s.load(r, i).map_or(0, |o| s.get(o).read_u64(0)))
                .collect()
        })
    }

    /// F, a table of live fillers, then garbage up to the end of the graph's page, then the
    /// fillers over every other page of the heap, so that relocation finds no free page.
    pub(super) fn fill_heap(&mut self) -> Result<(), String> {
        let first_page = self.objs[0].off / PAGE;
        let pages = self.heap.usage().capacity / PAGE;
        let filler = size_of(0, FILLER_BYTES)?;
        let start = self.start;
        let table_size = size_of(FILLERS as u64, 0)?;
        let (fillers, table_at) = self.m.scope(|s| -> Result<_, String> {
            let table = s.alloc(3, FILLERS as u32, 0).map_err(oom)?;
            let table_at = s.address_of(table).raw() - start;
            loop {
                let at = s.scope(|s| s.alloc(9, 0, 48).map(|l| s.address_of(l).raw() - start));
                if at.map_err(oom)? / PAGE != first_page {
                    break;
                }
            }
            for i in 0..FILLERS {
                let o = s.alloc(4, 0, FILLER_BYTES).map_err(oom)?;
                let at = s.address_of(o).raw() - start;
                s.store(table, i, Some(o));
                if at / PAGE == first_page + pages - 1
                    && at + 2 * filler > (first_page + pages) * PAGE
                {
                    return Ok((s.global(table), table_at));
                }
            }
            Err(format!("{FILLERS} fillers did not fill the heap"))
        })?;
        self.fillers = Some(fillers);
        self.objs.push(Obj {
            name: "F".into(),
            off: table_at,
            size: table_size,
            live: true,
        });
        Ok(())
    }
}

/// Start a cycle on `stepper` and step until it is held before `phase`.
pub(super) fn run_to(stepper: &Stepper<'_>, phase: GcPhase) -> Result<(), String> {
    let mut step = stepper.start_cycle("book-figures")?;
    while step != Step::Before(phase) {
        if step == Step::CycleEnded {
            return Err(format!("the cycle ended before {}", phase.name()));
        }
        step = stepper.step()?;
    }
    Ok(())
}

/// One page of the tiny graph relocated by a stepped cycle, as the forwarding and in-place
/// figures draw it: offsets relative to the heap's first offset.
pub(super) struct Relocated {
    /// The graph's objects where they were before the cycle.
    pub(super) objs: Vec<Obj>,
    /// The relocated page's first offset.
    pub(super) page: u64,
    /// Compacted in place rather than evacuated.
    pub(super) compacted_in_place: bool,
    /// The page's forwarding entries, from → to.
    pub(super) entries: Vec<(u64, u64)>,
    /// The live objects' values before the cycle and after it.
    pub(super) values_before: Vec<u64>,
    pub(super) values_after: Vec<u64>,
}

/// Builds the tiny graph on a heap of `max_heap` (with no relocation reserve and every other
/// page full of live objects if `full`), runs one stepped cycle with no mutator load between
/// its phases (the GC thread makes every copy), and reads the one page it relocated.
pub(super) fn relocate_one_page(max_heap: u64, full: bool) -> Result<Relocated, String> {
    let heap = heap(max_heap, full)?;
    let stepper = heap.stepper()?;
    let mut t = Tiny::new(&heap)?;
    if full {
        t.fill_heap()?;
    }
    let values_before = t.values();
    run_to(&stepper, GcPhase::ConcurrentRelocate)?;
    stepper.finish_cycle()?;
    let set = heap.relocation_set();
    let [p] = &set[..] else {
        return Err(format!("expected one relocated page, found {}", set.len()));
    };
    let start = t.start;
    let entries = p
        .entries
        .iter()
        .map(|e| (e.from.raw() - start, e.to.raw() - start))
        .collect();
    let values_after = t.values();
    Ok(Relocated {
        objs: t.objs.clone(),
        page: p.page.raw() - start,
        compacted_in_place: p.compacted_in_place,
        entries,
        values_before,
        values_after,
    })
}

impl Relocated {
    /// An error naming `what` unless the live objects kept their values through the cycle.
    pub(super) fn check_values(&self, what: &str) -> Result<(), String> {
        if self.values_before == self.values_after {
            return Ok(());
        }
        Err(format!(
            "{what} do not hold the objects' values: {:?} before, {:?} after",
            self.values_before, self.values_after
        ))
    }

    /// The live objects where the forwarding entries say they went, each named as before
    /// with `suffix`.
    pub(super) fn forwarded(&self, suffix: &str) -> Vec<Obj> {
        self.objs
            .iter()
            .filter_map(|o| {
                let (_, to) = self.entries.iter().find(|e| e.0 == o.off)?;
                Some(Obj {
                    name: format!("{}{suffix}", o.name),
                    off: *to,
                    size: o.size,
                    live: true,
                })
            })
            .collect()
    }
}
