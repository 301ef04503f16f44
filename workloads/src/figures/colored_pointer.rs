//! The colored-pointer figure: one real object of a real 256 MiB heap, its offset, and the
//! pointer to it in each of the three views the non-generational modes use by default (ZGC's
//! Marked0, Marked1 and Remapped), drawn as the 64 bits of the word with the color bits above
//! the offset (Marked2, the third mark color, among them). Each view address is checked
//! against the process's own mappings (`/proc/self/maps`): the figure shows the mapping of
//! the heap file that holds it, so the three addresses are seen to reach one physical page.

use gc_core::{AddressLayout, Color as PtrColor, Offset, View};
use gc_runtime::{Heap, HeapConfig, Mode};
use plotters::prelude::*;

/// The heap the figure allocates its object in.
const HEAP: u64 = 256 << 20;
const WIDTH: u32 = 1000;
const HEIGHT: u32 = 600;

/// One view's line of the figure: its name, the color bit, the pointer, the mapping.
struct ViewRow {
    name: &'static str,
    color: RGBColor,
    pointer: u64,
    mapping: String,
}

/// The figure's facts, measured: the offset bits, the object's offset, one row per view.
struct Facts {
    offset_bits: u32,
    offset: u64,
    rows: Vec<ViewRow>,
}

/// The line of `/proc/self/maps` whose range holds `addr` (shortened), or why there is none.
fn mapping_of(maps: &str, addr: u64) -> Result<String, String> {
    for line in maps.lines() {
        let Some((range, rest)) = line.split_once(' ') else {
            continue;
        };
        let Some((lo, hi)) = range.split_once('-') else {
            continue;
        };
        let (Ok(lo), Ok(hi)) = (u64::from_str_radix(lo, 16), u64::from_str_radix(hi, 16)) else {
            continue;
        };
        if (lo..hi).contains(&addr) {
            let fields: Vec<&str> = rest.split_whitespace().collect();
            // perms, file offset, device, inode, path
            let perms = fields.first().copied().unwrap_or("");
            let file_off = fields.get(1).copied().unwrap_or("");
            let path = fields.get(4..).map(|p| p.join(" ")).unwrap_or_default();
            return Ok(format!(
                "{lo:x}-{hi:x} {perms} file offset {file_off} {path}"
            ));
        }
    }
    Err(format!(
        "no mapping of this process holds {addr:#x}: the view is not mapped"
    ))
}

fn measure() -> Result<Facts, String> {
    let heap =
        Heap::new(HeapConfig::new(HEAP).mode(Mode::Concurrent)).map_err(|e| e.to_string())?;
    let mut m = heap.attach("figure").map_err(|e| e.to_string())?;
    let offset = m.scope(|s| -> Result<u64, String> {
        // A few objects first, so that the one drawn is not at the page's start.
        for _ in 0..3 {
            s.alloc(1, 1, 48).map_err(|e| e.to_string())?;
        }
        let l = s.alloc(1, 1, 16).map_err(|e| e.to_string())?;
        Ok(s.get(l).address().raw())
    })?;
    let layout = AddressLayout::for_max_heap(HEAP).ok_or("no layout for a 256 MiB heap")?;
    let maps = std::fs::read_to_string("/proc/self/maps")
        .map_err(|e| format!("cannot read /proc/self/maps: {e}"))?;
    let off = Offset::from_raw(offset);
    let rows = [
        (
            "Marked0",
            View::Marked0,
            PtrColor::MARKED0,
            RGBColor(31, 119, 180),
        ),
        (
            "Marked1",
            View::Marked1,
            PtrColor::MARKED1,
            RGBColor(255, 127, 14),
        ),
        (
            "Remapped",
            View::Remapped,
            PtrColor::REMAPPED,
            RGBColor(44, 160, 44),
        ),
    ]
    .into_iter()
    .map(|(name, view, color, rgb)| {
        let pointer = layout.with_color(off, color).raw();
        // The colored pointer is the view address: the same bits.
        debug_assert_eq!(pointer, layout.address(off, view).raw());
        Ok(ViewRow {
            name,
            color: rgb,
            pointer,
            mapping: mapping_of(&maps, pointer)?,
        })
    })
    .collect::<Result<Vec<_>, String>>()?;
    drop(m);
    Ok(Facts {
        offset_bits: layout.offset_bits(),
        offset,
        rows,
    })
}

fn err(e: impl std::fmt::Debug) -> String {
    format!("drawing the colored-pointer figure: {e:?}")
}

/// The figure as SVG text.
pub fn svg() -> Result<String, String> {
    let f = measure()?;
    let s = f.offset_bits;
    let mut out = String::new();
    {
        let root = super::canvas(&mut out, (WIDTH, HEIGHT))?;
        let text = |t: &str, x: i32, y: i32, size: u32, c: &RGBColor| {
            super::text(&root, t, (x, y), size, c)
        };
        text(
            &format!("A colored pointer: one object of a 256 MiB heap (S = {s} offset bits)"),
            20,
            14,
            22,
            &BLACK,
        )?;
        // The word, bit 63 on the left: [unused][F][M2][R][M1][M0][offset]. Not to scale:
        // each color bit gets a box wide enough for its name.
        let (y0, y1) = (70, 120);
        let fields: [(&str, u32, u32, RGBColor, i32); 7] = [
            ("0 (unused)", 63, s + 5, RGBColor(230, 230, 230), 180),
            ("F", s + 4, s + 4, RGBColor(200, 200, 200), 44),
            ("M2", s + 3, s + 3, RGBColor(148, 103, 189), 44),
            ("R", s + 2, s + 2, RGBColor(44, 160, 44), 44),
            ("M1", s + 1, s + 1, RGBColor(255, 127, 14), 44),
            ("M0", s, s, RGBColor(31, 119, 180), 44),
            ("offset in the heap", s - 1, 0, RGBColor(245, 245, 220), 520),
        ];
        let mut l = 40;
        for (label, hi, lo, c, w) in fields {
            let r = l + w;
            root.draw(&Rectangle::new([(l, y0), (r, y1)], c.filled()))
                .map_err(err)?;
            root.draw(&Rectangle::new([(l, y0), (r, y1)], BLACK.stroke_width(1)))
                .map_err(err)?;
            text(label, l + 6, y0 + 18, 15, &BLACK)?;
            text(&format!("{hi}"), l + 1, y1 + 4, 11, &BLACK)?;
            if lo != hi {
                text(&format!("{lo}"), r - 14, y1 + 4, 11, &BLACK)?;
            }
            l = r;
        }
        text(
            "bit (boxes not to scale)",
            l - 140,
            y1 + 20,
            11,
            &RGBColor(90, 90, 90),
        )?;
        text(
            &format!(
                "The object's offset: {:#x}. Its pointer in each view is that offset with one color bit set:",
                f.offset
            ),
            20,
            160,
            16,
            &BLACK,
        )?;
        for (i, r) in f.rows.iter().enumerate() {
            let y = 200 + 100 * i as i32;
            root.draw(&Rectangle::new([(20, y), (34, y + 14)], r.color.filled()))
                .map_err(err)?;
            text(
                &format!("{:<9} {:#018x}", r.name, r.pointer),
                44,
                y - 2,
                18,
                &BLACK,
            )?;
            text(
                &format!(
                    "= {:#x} (the {} view's base) + {:#x}",
                    r.pointer - f.offset,
                    r.name,
                    f.offset
                ),
                44,
                y + 22,
                14,
                &BLACK,
            )?;
            text(
                &format!("/proc/self/maps: {}", r.mapping),
                44,
                y + 42,
                13,
                &RGBColor(90, 90, 90),
            )?;
        }
        text(
            "All three mappings are of the one heap file, at the same file offset: three addresses, one physical page.",
            20,
            HEIGHT as i32 - 60,
            15,
            &BLACK,
        )?;
        text(
            "Marked2's view (bit S+3) maps the file too; only rotating mark colors or a generational mode use it.",
            20,
            HEIGHT as i32 - 34,
            15,
            &RGBColor(90, 90, 90),
        )?;
        root.present().map_err(err)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_view_address_of_a_real_object_is_mapped_from_the_heap_file() {
        let f = measure().unwrap();
        assert_eq!(f.rows.len(), 3);
        for r in &f.rows {
            assert!(
                r.mapping.contains("zgc-rs-heap"),
                "{}: {:#x} is in {}",
                r.name,
                r.pointer,
                r.mapping
            );
            assert_eq!(r.pointer & ((1 << f.offset_bits) - 1), f.offset);
        }
        // The three mappings map the same file offset range.
        let file_off = |m: &str| {
            m.split("file offset ")
                .nth(1)
                .map(|t| t.split(' ').next().unwrap().to_string())
        };
        let offs: Vec<_> = f.rows.iter().map(|r| file_off(&r.mapping)).collect();
        assert!(offs.windows(2).all(|w| w[0] == w[1]), "{offs:?}");
    }

    #[test]
    fn a_missing_mapping_is_an_error_naming_the_address() {
        let e = mapping_of("1000-2000 rw-s 00000000 00:01 5 /memfd:x\n", 0x3000).unwrap_err();
        assert!(e.contains("0x3000"), "{e}");
    }
}
