//! The book's concept figures, drawn from a real heap by one command
//! (`cargo run --release -p workloads --bin book-figures`): the colored pointer of a real
//! object in its three views ([`colored_pointer`]), one real GC cycle's pauses and
//! concurrent phases ([`cycle_timeline`]), and, from cycles a `Stepper` holds between their
//! phases, the load barrier's fast and slow paths on a real slot ([`barrier_paths`]), a page
//! relocated with its forwarding table ([`forwarding_table`]) and a page compacted in place
//! ([`in_place`]). Each figure is computed, not drawn by hand, so it shows what the code does
//! today; the command rewrites the SVGs under `docs/src/img/`. The three stepped figures are
//! the same on every run (offsets relative to the heap), and a test compares them byte for
//! byte with the committed files.

pub mod barrier_paths;
pub mod colored_pointer;
pub mod cycle_timeline;
pub mod forwarding_table;
pub mod in_place;
pub mod report_plots;
mod tiny_graph;

use crate::report::style::FONT;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::{Path, PathBuf};

/// A figure's drawing area.
type Canvas<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// A white canvas of `size` pixels whose SVG text goes to `out`.
fn canvas(out: &mut String, size: (u32, u32)) -> Result<Canvas<'_>, String> {
    let root = SVGBackend::with_string(out, size).into_drawing_area();
    root.fill(&WHITE)
        .map_err(|e| format!("drawing a figure: {e:?}"))?;
    Ok(root)
}

/// Draw `t` with its top left corner at `at`, in the figures' font.
fn text(root: &Canvas<'_>, t: &str, at: (i32, i32), size: u32, c: &RGBColor) -> Result<(), String> {
    root.draw(&Text::new(
        t.to_string(),
        at,
        (FONT, size).into_font().color(c),
    ))
    .map_err(|e| format!("drawing a figure's text {t:?}: {e:?}"))
}

/// The byte range of a strip of the page: the objects' extent, rounded up to 0x40.
fn strip_extent(objs: &[tiny_graph::Obj]) -> u64 {
    let page = objs.iter().map(|o| o.off).min().unwrap_or(0) / tiny_graph::PAGE * tiny_graph::PAGE;
    let end = objs.iter().map(|o| o.off + o.size).max().unwrap_or(page);
    (end - page).div_ceil(0x40) * 0x40
}

/// Draw `objs` (offsets from `page`, over `extent` bytes) as boxes between `xs` at height `y`:
/// live objects named and colored, garbage grey; each box labeled with its offset.
fn draw_strip(
    root: &Canvas<'_>,
    objs: &[tiny_graph::Obj],
    page: u64,
    extent: u64,
    xs: (i32, i32),
    y: i32,
) -> Result<(), String> {
    let err = |e: DrawingAreaErrorKind<std::io::Error>| format!("drawing a page strip: {e:?}");
    let scale =
        |off: u64| xs.0 + ((off - page) as f64 / extent as f64 * (xs.1 - xs.0) as f64) as i32;
    root.draw(&Rectangle::new(
        [(xs.0, y), (xs.1, y + 60)],
        RGBColor(200, 200, 200).stroke_width(1),
    ))
    .map_err(err)?;
    for (i, o) in objs.iter().enumerate() {
        let (l, r) = (scale(o.off), scale(o.off + o.size) - 1);
        let c = if o.live {
            RGBColor(31, 119, 180)
        } else {
            RGBColor(190, 190, 190)
        };
        root.draw(&Rectangle::new(
            [(l, y), (r, y + 60)],
            c.mix(if o.live { 0.35 } else { 0.5 }).filled(),
        ))
        .map_err(err)?;
        root.draw(&Rectangle::new(
            [(l, y), (r, y + 60)],
            BLACK.stroke_width(1),
        ))
        .map_err(err)?;
        if o.live {
            text(root, &o.name, (l + 4, y + 6), 16, &BLACK)?;
        }
        // Alternate rows, so that the offsets of narrow neighbours do not overlap.
        let below = y + 64 + 13 * (i as i32 % 2);
        text(root, &format!("{:#x}", o.off), (l + 2, below), 11, &BLACK)?;
    }
    Ok(())
}

/// The figures drawn from stepped cycles, which are the same on every run: their committed
/// files must be what this renders, byte for byte.
pub fn reproducible() -> Result<Vec<(&'static str, String)>, String> {
    Ok(vec![
        ("concept-barrier-paths.svg", barrier_paths::svg()?),
        ("concept-forwarding-table.svg", forwarding_table::svg()?),
        ("concept-in-place-compaction.svg", in_place::svg()?),
    ])
}

/// Write every figure into `dir` (created if missing); returns the files written.
pub fn write_all(dir: &Path) -> Result<Vec<PathBuf>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut figures = vec![
        ("concept-colored-pointer.svg", colored_pointer::svg()?),
        ("concept-cycle-timeline.svg", cycle_timeline::svg()?),
    ];
    figures.extend(reproducible()?);
    let mut written = Vec::new();
    for (name, svg) in figures {
        let path = dir.join(name);
        std::fs::write(&path, svg).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stepped figures are the same on every run, so the committed SVGs must be exactly
    /// what `book-figures` renders now: a change to the collector that changes what they show
    /// fails here until the figures are redrawn.
    #[test]
    fn the_committed_stepped_figures_are_what_book_figures_renders() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/src/img");
        for (name, svg) in reproducible().unwrap() {
            let path = dir.join(name);
            let committed = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
            assert!(
                committed == svg,
                "{} differs from what book-figures renders now: redraw it with `cargo run \
                 --release -p workloads --bin book-figures` and commit it",
                path.display()
            );
        }
    }
}
