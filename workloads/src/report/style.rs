//! Shared look of the SVG plots: one colour per mode, per pause kind, for allocation stalls and
//! for pacing delays, the font family, and
//! turning plotters' errors into messages.

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
    }
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

/// A plotters error as a message.
pub fn plot_err<E: std::fmt::Debug>(e: E) -> String {
    format!("plotting failed: {e:?}")
}
