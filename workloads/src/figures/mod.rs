//! The book's concept figures, drawn from a real heap by one command
//! (`cargo run --release -p workloads --bin book-figures`): the colored pointer of a real
//! object in its three views ([`colored_pointer`]) and one real GC cycle's pauses and
//! concurrent phases ([`cycle_timeline`]). Each figure is computed, not drawn by hand, so it
//! shows what the code does today; the command rewrites the SVGs under `docs/src/img/`.

pub mod colored_pointer;
pub mod cycle_timeline;

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

/// Write every figure into `dir` (created if missing); returns the files written.
pub fn write_all(dir: &Path) -> Result<Vec<PathBuf>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let figures = [
        ("concept-colored-pointer.svg", colored_pointer::svg()?),
        ("concept-cycle-timeline.svg", cycle_timeline::svg()?),
    ];
    let mut written = Vec::new();
    for (name, svg) in figures {
        let path = dir.join(name);
        std::fs::write(&path, svg).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}
