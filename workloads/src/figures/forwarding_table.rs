//! The forwarding figure: a real page of a real heap relocated by a stepped cycle (ZGC's
//! evacuation of a relocation-set page), drawn as the page before (live objects and the
//! garbage between them), the target page after (the copies, in the order they were made),
//! and the page's forwarding table as it stands after Concurrent Relocate: one entry per live
//! object, from-offset → to-offset (`ZForwarding`'s entries).

use super::tiny_graph::{self, Relocated, PAGE};
use plotters::prelude::*;

const HEAP: u64 = 64 << 20;
const WIDTH: u32 = 1100;
const HEIGHT: u32 = 560;

fn measure() -> Result<Relocated, String> {
    tiny_graph::relocate_one_page(HEAP, false)
}

fn err(e: impl std::fmt::Debug) -> String {
    format!("drawing the forwarding figure: {e:?}")
}

/// The figure as SVG text.
pub fn svg() -> Result<String, String> {
    let f = measure()?;
    f.check_values("the copies")?;
    let extent = super::strip_extent(&f.objs);
    let to_page = f.entries.first().map_or(0, |e| e.1 / PAGE * PAGE);
    let moved = f.forwarded("'");
    let mut out = String::new();
    {
        let root = super::canvas(&mut out, (WIDTH, HEIGHT))?;
        let text = |t: &str, x: i32, y: i32, size: u32, c: &RGBColor| {
            super::text(&root, t, (x, y), size, c)
        };
        text(
            "A page relocated: its live objects copied to a target page, one forwarding entry each",
            20,
            14,
            22,
            &BLACK,
        )?;
        text(
            &format!(
                "from-page at {:#x} (first {:#x} of its 2 MiB): R -> A..E, garbage (grey) between",
                f.page, extent
            ),
            20,
            60,
            15,
            &BLACK,
        )?;
        let (x0, x1) = (20, 1080);
        super::draw_strip(&root, &f.objs, f.page, extent, (x0, x1), 84)?;
        text(
            &format!(
                "target page at {to_page:#x}: the copies, packed in the order the GC thread made them"
            ),
            20,
            330,
            15,
            &BLACK,
        )?;
        super::draw_strip(&root, &moved, to_page, extent, (x0, x1), 234)?;
        let scale = |off: u64, base: u64| {
            x0 + ((off - base) as f64 / extent as f64 * (x1 - x0) as f64) as i32
        };
        for (o, m) in f.objs.iter().filter(|o| o.live).zip(&moved) {
            root.draw(&PathElement::new(
                vec![
                    (scale(o.off + o.size / 2, f.page), 178),
                    (scale(m.off + m.size / 2, to_page), 232),
                ],
                RGBColor(120, 120, 120).stroke_width(1),
            ))
            .map_err(err)?;
        }
        text("forwarding table (from → to):", 20, 370, 15, &BLACK)?;
        for (i, (from, to)) in f.entries.iter().enumerate() {
            let name = f
                .objs
                .iter()
                .find(|o| o.off == *from)
                .map_or("?", |o| o.name.as_str());
            let (col, row) = (i as i32 / 3, i as i32 % 3);
            text(
                &format!("{name}: {from:#x} → {to:#x}"),
                40 + 300 * col,
                396 + 24 * row,
                15,
                &BLACK,
            )?;
        }
        text(
            "Garbage gets no entry and is never copied; the from-page is freed once its live objects are out. A stale pointer",
            20,
            490,
            13,
            &BLACK,
        )?;
        text(
            "to a from-offset is healed through this table until the next cycle's marking has remapped them all. Offsets relative \
             to the heap; redrawn by `book-figures`.",
            20,
            508,
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
    fn every_live_object_and_no_garbage_has_one_entry_into_one_other_page() {
        let f = measure().unwrap();
        let live: Vec<u64> = f.objs.iter().filter(|o| o.live).map(|o| o.off).collect();
        let mut froms: Vec<u64> = f.entries.iter().map(|e| e.0).collect();
        froms.sort_unstable();
        assert_eq!(froms, live, "one entry per live object, none for garbage");
        let to_page = f.entries[0].1 / PAGE;
        assert_ne!(to_page, f.page / PAGE, "copied to another page");
        assert!(f.entries.iter().all(|e| e.1 / PAGE == to_page));
        assert_eq!(
            f.values_before, f.values_after,
            "the copies are the objects"
        );
        assert_eq!(f.values_before, [100, 101, 102, 103, 104]);
    }
}
