//! Shared look of the SVG plots: one colour per mode, per pause kind, for allocation stalls,
//! for pacing delays and per memory series, the font family, and
//! turning plotters' errors into messages.

use crate::buffer_kind::BufferKind;
use crate::run_result::Mode;
use gc_runtime::stats::PauseKind;
use plotters::style::RGBColor;

/// Font family of every text element (the SVG viewer picks the actual font).
pub const FONT: &str = "sans-serif";

/// The colour of a mode's lines.
pub fn mode_color(mode: Mode) -> RGBColor {
    match mode {
        Mode::Concurrent => RGBColor(31, 119, 180),
        Mode::Stw => RGBColor(214, 39, 40),
        Mode::Epsilon => RGBColor(127, 127, 127),
        Mode::Generational => RGBColor(44, 160, 44),
    }
}

/// The colour of a mode's lines for runs of one buffer kind: the mode's colour for `heap`
/// (and runs without buffers), darker for `direct`, lighter for `pooled`.
pub fn series_color(mode: Mode, kind: Option<BufferKind>) -> RGBColor {
    let RGBColor(r, g, b) = mode_color(mode);
    let scale = |c: u8, f: f64| (f64::from(c) * f) as u8;
    let lift = |c: u8| c + ((255 - c) as f64 * 0.55) as u8;
    match kind {
        None | Some(BufferKind::Heap) => RGBColor(r, g, b),
        Some(BufferKind::Direct) => RGBColor(scale(r, 0.55), scale(g, 0.55), scale(b, 0.55)),
        Some(BufferKind::Pooled) => RGBColor(lift(r), lift(g), lift(b)),
    }
}

/// The colour of the `i`-th JVM series (`--jvm`) of a plot: none of the modes' colours.
pub fn jvm_color(i: usize) -> RGBColor {
    const PALETTE: [RGBColor; 6] = [
        RGBColor(44, 160, 44),
        RGBColor(255, 127, 14),
        RGBColor(148, 103, 189),
        RGBColor(227, 119, 194),
        RGBColor(188, 189, 34),
        RGBColor(23, 190, 207),
    ];
    PALETTE[i % PALETTE.len()]
}

/// The colour of a pause kind's marks.
pub fn kind_color(kind: PauseKind) -> RGBColor {
    match kind {
        PauseKind::MarkStart => RGBColor(31, 119, 180),
        PauseKind::MarkEnd => RGBColor(255, 127, 14),
        PauseKind::RelocateStart => RGBColor(44, 160, 44),
        PauseKind::Full => RGBColor(148, 103, 189),
    }
}

/// The colour of allocation stalls.
pub const STALL_COLOR: RGBColor = RGBColor(214, 39, 40);

/// The colour of pacing delays.
pub const PACING_COLOR: RGBColor = RGBColor(140, 86, 75);

/// The colour of slow page allocations.
pub const PAGE_ALLOC_COLOR: RGBColor = RGBColor(23, 190, 207);

/// A plotters error as a message.
pub fn plot_err<E: std::fmt::Debug>(e: E) -> String {
    format!("plotting failed: {e:?}")
}

/// The colours of the memory-over-time series: committed heap, direct, pooled, Pss, RSS.
pub const COMMITTED_COLOR: RGBColor = RGBColor(31, 119, 180);
pub const DIRECT_COLOR: RGBColor = RGBColor(255, 127, 14);
pub const POOLED_COLOR: RGBColor = RGBColor(44, 160, 44);
pub const PSS_COLOR: RGBColor = RGBColor(0, 0, 0);
pub const RSS_COLOR: RGBColor = RGBColor(148, 103, 189);
