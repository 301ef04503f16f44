//! The in-place compaction figure: a real page of a full heap (the smallest collected heap,
//! no relocation reserve, every other page full of live objects), which Concurrent Relocate
//! cannot evacuate for want of a free page and so compacts in place (as ZGC has done since JDK
//! 16): the page before, live objects and garbage, and after, each live object slid down over
//! the garbage below it in address order, with the forwarding entries that say where.

use super::tiny_graph::{self, Relocated};
use plotters::prelude::*;

const WIDTH: u32 = 1100;
const HEIGHT: u32 = 500;

fn measure() -> Result<Relocated, String> {
    tiny_graph::relocate_one_page(gc_runtime::MIN_COLLECTED_HEAP, true)
}

fn err(e: impl std::fmt::Debug) -> String {
    format!("drawing the in-place figure: {e:?}")
}

/// The figure as SVG text.
pub fn svg() -> Result<String, String> {
    let f = measure()?;
    f.check_values("the moved objects")?;
    if !f.compacted_in_place {
        return Err("the page was not compacted in place".into());
    }
    let extent = super::strip_extent(&f.objs);
    let after = f.forwarded("");
    let mut out = String::new();
    {
        let root = super::canvas(&mut out, (WIDTH, HEIGHT))?;
        let text = |t: &str, x: i32, y: i32, size: u32, c: &RGBColor| {
            super::text(&root, t, (x, y), size, c)
        };
        text(
            "In-place compaction: no free page for the copies, so the live objects slide down on their own page",
            20,
            14,
            20,
            &BLACK,
        )?;
        text(
            &format!(
                "before (page at {:#x}, first {extent:#x} of its 2 MiB; F holds the fillers of the two full pages):",
                f.page
            ),
            20,
            60,
            15,
            &BLACK,
        )?;
        let (x0, x1) = (20, 1080);
        super::draw_strip(&root, &f.objs, f.page, extent, (x0, x1), 84)?;
        text(
            "after Concurrent Relocate: the same objects, packed from the page's start in address order",
            20,
            332,
            15,
            &BLACK,
        )?;
        super::draw_strip(&root, &after, f.page, extent, (x0, x1), 234)?;
        let scale =
            |off: u64| x0 + ((off - f.page) as f64 / extent as f64 * (x1 - x0) as f64) as i32;
        for (o, a) in f.objs.iter().filter(|o| o.live).zip(&after) {
            root.draw(&PathElement::new(
                vec![(scale(o.off), 178), (scale(a.off), 232)],
                RGBColor(120, 120, 120).stroke_width(1),
            ))
            .map_err(err)?;
        }
        text(
            "forwarding entries (from → to, on the same page):",
            20,
            364,
            15,
            &BLACK,
        )?;
        for (i, (from, to)) in f.entries.iter().enumerate() {
            let name = f
                .objs
                .iter()
                .find(|o| o.off == *from)
                .map_or("?", |o| o.name.as_str());
            let (col, row) = (i as i32 / 3, i as i32 % 3);
            text(
                &format!("{name}: {from:#x} → {to:#x}"),
                40 + 260 * col,
                390 + 24 * row,
                15,
                &BLACK,
            )?;
        }
        text(
            "R was already at the bottom: it is forwarded to itself. Objects only move down, so each header is read before \
             anything is copied over it. Offsets relative to the heap; redrawn by `book-figures`.",
            20,
            470,
            13,
            &BLACK,
        )?;
        root.present().map_err(err)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_live_objects_end_packed_from_the_page_start_in_address_order() {
        let f = measure().unwrap();
        assert!(f.compacted_in_place);
        let mut live: Vec<&tiny_graph::Obj> = f.objs.iter().filter(|o| o.live).collect();
        live.sort_by_key(|o| o.off);
        let mut next = f.page;
        for o in live {
            let to = f
                .entries
                .iter()
                .find(|e| e.0 == o.off)
                .unwrap_or_else(|| panic!("{} has no entry", o.name))
                .1;
            assert_eq!(to, next, "{} slid to the first free offset", o.name);
            next += o.size;
        }
        let garbage: Vec<u64> = f.objs.iter().filter(|o| !o.live).map(|o| o.off).collect();
        assert!(f.entries.iter().all(|e| !garbage.contains(&e.0)));
        assert_eq!(
            f.values_before, f.values_after,
            "the objects kept their values"
        );
    }
}
