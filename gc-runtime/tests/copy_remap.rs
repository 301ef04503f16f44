//! A relocating GC worker writes into its copy, before publishing it, the new addresses of
//! the neighbours on the same page that have their entries already (`relocate::copy_remap`;
//! it publishes its copies in batches from the last to the first, so those are the objects
//! allocated after it in its batch and those of earlier batches): right after a cycle, before
//! any load, a chain relocated together points forwards to its neighbours' new addresses with
//! good pointers, in reference and value slots, with every mark color; its backward links,
//! but those crossing into an earlier batch, stay for the next marking, which remaps nothing
//! else in the chain. The verifier runs at every pause.
use gc_runtime::inspect::GoodColor;
use gc_runtime::{ColorChoice, CycleRecord, Heap, HeapConfig, Local, Mode, Scope, Value};

/// Nodes of the chain (a few sparse pages' worth, with the garbage between them).
const N: u64 = 20_000;

fn heap(colors: ColorChoice) -> Heap {
    Heap::new(
        HeapConfig::new(64 << 20)
            .mode(Mode::Concurrent)
            .verify(true)
            .mark_colors(colors),
    )
    .unwrap()
}

/// Which slots lead forwards (to the node allocated after) and which backwards.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Links {
    /// Reference slot 0 forwards, value slot 0 backwards.
    RefsForward,
    /// Value slot 0 forwards, reference slot 0 backwards.
    ValuesForward,
}

/// A chain of `N` nodes (id in the raw bytes) linked both ways, through a reference slot one
/// way and a value slot the other (`links`), with dropped garbage between the nodes so that
/// their pages are sparse and get relocated. Returns the newest node; the oldest one's
/// backward link and the newest one's forward link hold nothing.
fn build_chain<'s>(s: &mut Scope<'s>, links: Links) -> Local<'s> {
    s.scope_escape(|s| {
        let mut prev: Option<Local<'_>> = None;
        for i in 0..N {
            let node = s.alloc_with_values(7, 1, 1, 8).unwrap();
            s.get(node).write_u64(0, i);
            if let Some(p) = prev {
                match links {
                    Links::RefsForward => {
                        s.store(p, 0, Some(node));
                        s.store_value(node, 0, Value::Ref(p));
                    }
                    Links::ValuesForward => {
                        s.store_value(p, 0, Value::Ref(node));
                        s.store(node, 0, Some(p));
                    }
                }
            }
            prev = Some(node);
            s.scope(|s| {
                s.alloc(9, 0, 200).unwrap();
            });
        }
        prev
    })
    .expect("a non-empty chain")
}

/// Links of the chain that held a good pointer when read raw, before the walk's own load
/// healed them.
#[derive(Debug, Default)]
struct Good {
    forward: u64,
    backward: u64,
    /// Links each way (the chain's `N - 1`).
    links: u64,
}

/// Walk the chain backwards from its newest node, checking every id and both links, and
/// count the links that held a good pointer when read raw.
fn walk(s: &Scope<'_>, newest: Local<'_>, links: Links, bad_mask: u64) -> Good {
    let mut good = Good::default();
    let mut node = newest;
    let mut after: Option<gc_runtime::Offset> = None;
    let is_good = |raw: u64| u64::from(raw & bad_mask == 0);
    for i in (0..N).rev() {
        assert_eq!(s.get(node).read_u64(0), i, "node {i}");
        let (fwd_raw, back_raw) = match links {
            Links::RefsForward => (s.raw_slot(node, 0).raw(), s.raw_value_slot(node, 0).raw()),
            Links::ValuesForward => (s.raw_value_slot(node, 0).raw(), s.raw_slot(node, 0).raw()),
        };
        let (fwd, back) = match links {
            Links::RefsForward => (
                s.load(node, 0),
                match s.get(node).load_value(0) {
                    Value::Ref(v) => Some(s.root(v)),
                    _ => None,
                },
            ),
            Links::ValuesForward => (
                match s.get(node).load_value(0) {
                    Value::Ref(v) => Some(s.root(v)),
                    _ => None,
                },
                s.load(node, 0),
            ),
        };
        match after {
            None => assert!(fwd.is_none(), "the newest node links forwards"),
            Some(next) => {
                good.links += 1;
                good.forward += is_good(fwd_raw);
                let f = fwd.unwrap_or_else(|| panic!("node {i}: the forward link is gone"));
                assert_eq!(s.address_of(f), next, "node {i}: the forward link");
            }
        }
        after = Some(s.address_of(node));
        match back {
            None => {
                assert_eq!(i, 0, "node {i}: the backward link is gone");
                break;
            }
            Some(b) => {
                good.backward += is_good(back_raw);
                node = b;
            }
        }
    }
    assert_eq!(good.links, N - 1);
    good
}

fn last_cycle(h: &Heap) -> CycleRecord {
    h.stats().cycles.last().cloned().expect("a cycle ran")
}

/// Relocate a fresh chain linked forwards by `links` with the colors `colors`, after `before`
/// empty cycles (to reach a given mark color), and check what the relocation remapped.
fn relocate_chain(colors: ColorChoice, before: usize, mark: GoodColor, links: Links) {
    let h = heap(colors);
    let mut m = h.attach("main").unwrap();
    m.scope(|s| {
        for _ in 0..before {
            s.collect("test");
        }
        let newest = build_chain(s, links);
        s.collect("test");
        let c = last_cycle(&h);
        assert_eq!(c.mark_color, Some(mark));
        assert!(
            c.bytes_relocated > 0,
            "the chain's pages were not relocated: {c:?}"
        );
        assert!(c.copy_slots_remapped > 0, "no copy's slot healed: {c:?}");
        // Without the remap every link would still hold the mark color, bad after the cycle
        // (nothing loaded them); with it, every forward link but those crossing into another
        // page is good. A backward link leads to an object published after its own within a
        // batch: stale, but for the first of each batch.
        let good = walk(s, newest, links, h.gc_state().bad_mask);
        assert!(
            good.forward * 10 >= good.links * 9,
            "{links:?}: {good:?} forward links remapped by the relocation: {c:?}"
        );
        assert!(c.copy_slots_remapped >= good.forward, "{good:?}: {c:?}");
        eprintln!("{colors:?} {links:?}: {good:?} after the cycle; {c:?}");
    })
}

#[test]
fn copies_point_forwards_to_their_neighbours_new_addresses() {
    relocate_chain(
        ColorChoice::Alternate,
        0,
        GoodColor::Marked1,
        Links::RefsForward,
    );
    relocate_chain(
        ColorChoice::Alternate,
        0,
        GoodColor::Marked1,
        Links::ValuesForward,
    );
}

/// The third cycle of rotating colors marks with Marked2: its pointers are remapped too.
#[test]
fn copies_are_remapped_when_the_mark_color_is_marked2() {
    relocate_chain(
        ColorChoice::Rotate,
        2,
        GoodColor::Marked2,
        Links::RefsForward,
    );
}

/// The next cycle's marking meets the chain's forward links good (Remapped): it recolors them
/// with no forwarding lookup, and remaps (most of) the backward links only (without the remap
/// at relocation: both).
#[test]
fn the_next_marking_remaps_only_the_backward_links() {
    let h = heap(ColorChoice::Alternate);
    let mut m = h.attach("main").unwrap();
    m.scope(|s| {
        let newest = build_chain(s, Links::RefsForward);
        s.collect("test");
        let first = last_cycle(&h);
        assert!(first.copy_slots_remapped > 0, "{first:?}");
        s.collect("test");
        let second = last_cycle(&h);
        // At most the backward links, the newest node's handle and a few links across pages.
        assert!(
            second.stale_slots_remapped <= N + N / 10,
            "the second cycle remapped {} stale slots for a chain of {} links each way: \
             {second:?}",
            second.stale_slots_remapped,
            N - 1
        );
        // The chain is intact after both cycles.
        walk(s, newest, Links::RefsForward, h.gc_state().bad_mask);
    });
}
