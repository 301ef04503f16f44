//! Parsers of command-line values, shared by the `pause-sweep` options ([`crate::cli`]) and
//! the workloads' own options: heap sizes (the workspace's one size grammar,
//! `gc_core::parse_size`, then `gc-core`'s heap-geometry check, as ZGC checks `-Xmx` against
//! its granule and address space), modes, huge-page settings, seconds, on/off switches and
//! fractions. Each error
//! says what to give instead.

use clap::builder::{PossibleValuesParser, TypedValueParser};
use gc_runtime::Mode;

/// The `--mode`/`--modes` parser: one of the mode names (listed in `--help`).
pub fn mode_parser() -> impl TypedValueParser<Value = Mode> {
    PossibleValuesParser::new(Mode::ALL.map(Mode::name))
        .map(|s| s.parse::<Mode>().expect("a possible value is a mode name"))
}

/// The `--huge-pages` parser: one of the setting names (listed in `--help`).
pub fn huge_pages_parser() -> impl TypedValueParser<Value = gc_runtime::HugePages> {
    PossibleValuesParser::new(gc_runtime::HugePages::ALL.map(gc_runtime::HugePages::name)).map(
        |s| {
            s.parse::<gc_runtime::HugePages>()
                .expect("a possible value is a setting name")
        },
    )
}

/// Parse and check a heap size: `gc_core::parse_size`, then `gc-core`'s heap-geometry check
/// (non-zero, a multiple of the 2 MiB granule, addressable, within physical memory).
pub fn parse_heap(s: &str) -> Result<u64, String> {
    let bytes = gc_core::parse_size(s)?;
    gc_core::MemoryConfig::new(bytes)
        .validate()
        .map_err(|e| e.to_string())?;
    Ok(bytes)
}

/// Parse `--young-size`: `gc_core::parse_size`, more than 0 bytes (whether it fits a heap is
/// [`check_young_size`]'s question, once the heap is known).
pub fn parse_young_size(s: &str) -> Result<u64, String> {
    match gc_core::parse_size(s)? {
        0 => Err(
            "a young generation of 0 bytes would start a minor for every allocation: give at \
             least 2M (one small page), e.g. 32M"
                .into(),
        ),
        bytes => Ok(bytes),
    }
}

/// Check `--young-size` against a heap of `heap` bytes: at least one small page (2 MiB) and
/// at most half the heap, the runtime's `HeapConfig::young_size` range, with a message naming
/// the option and the range.
pub fn check_young_size(young: u64, heap: u64) -> Result<(), String> {
    let (lo, hi) = (gc_runtime::GenerationalConfig::MIN_YOUNG_SIZE, heap / 2);
    if (lo..=hi).contains(&young) {
        return Ok(());
    }
    Err(format!(
        "--young-size {} does not fit a {} heap: give between {} (one small page) and half the \
         heap ({})",
        gc_core::format_size(young),
        gc_core::format_size(heap),
        gc_core::format_size(lo),
        gc_core::format_size(hi),
    ))
}

/// Parse `--young-evacuation-live-percent`: a whole percentage, checked by the runtime's own
/// validation (`HeapConfig::validate`) so the option and the setting accept the same range;
/// the message names the option.
pub fn parse_young_evacuation_live_percent(s: &str) -> Result<u8, String> {
    let refused = |why: String| format!("--young-evacuation-live-percent {s}: {why}");
    let percent: u64 = s.trim().parse().map_err(|_| {
        refused("not a whole percentage: give between 0 and 100, e.g. 25, the default".into())
    })?;
    let percent = u8::try_from(percent).unwrap_or(u8::MAX);
    gc_runtime::HeapConfig::new(256 << 20)
        .young_evacuation_live_percent(percent)
        .validate()
        .map_err(|e| refused(e.to_string()))?;
    Ok(percent)
}

/// Parse a positive number of seconds (fractions allowed) into milliseconds (at least 1).
pub fn parse_seconds(s: &str) -> Result<u64, String> {
    let secs: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a number of seconds, e.g. 20 or 0.5"))?;
    if !secs.is_finite() || secs <= 0.0 {
        return Err(format!("duration must be more than 0 seconds, got {s}"));
    }
    if secs > 7.0 * 24.0 * 3600.0 {
        return Err(format!(
            "duration {s} s is over a week: give seconds, e.g. 20"
        ));
    }
    Ok(((secs * 1000.0).round() as u64).max(1))
}

/// Parse `on` or `off` (also `true`/`false`, `yes`/`no`, `1`/`0`).
pub fn parse_on_off(s: &str) -> Result<bool, String> {
    match s.trim().to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" => Ok(true),
        "off" | "false" | "no" | "0" => Ok(false),
        _ => Err(format!("{s:?} is neither on nor off")),
    }
}

/// Parse a fraction strictly between 0 and 1.
pub fn parse_fraction(s: &str) -> Result<f64, String> {
    let f: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a number, e.g. 0.5"))?;
    if !(f > 0.0 && f < 1.0) {
        return Err(format!("{s} is not between 0 and 1 (exclusive), e.g. 0.5"));
    }
    Ok(f)
}

/// Parse the pacer's floor, the mutator's least share of each window: at least 0, below 1.
pub fn parse_pacing_floor(s: &str) -> Result<f64, String> {
    let f: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a number, e.g. 0.5"))?;
    if !(0.0..1.0).contains(&f) {
        return Err(format!(
            "{s} is not at least 0 and below 1: give e.g. 0.5 (0 for no floor), or --pacing off"
        ));
    }
    Ok(f)
}

/// Parse the pacer's floor window in milliseconds: a whole number from 1 to 1000.
pub fn parse_pacing_window(s: &str) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(ms) if (1..=1000).contains(&ms) => Ok(ms),
        _ => Err(format!(
            "{s:?} is not a whole number of milliseconds from 1 to 1000, e.g. 10"
        )),
    }
}

/// Parse a fraction from 0 to 1 inclusive.
pub fn parse_unit_interval(s: &str) -> Result<f64, String> {
    let f: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a number, e.g. 0.9"))?;
    if !(0.0..=1.0).contains(&f) {
        return Err(format!("{s} is not between 0 and 1, e.g. 0.9"));
    }
    Ok(f)
}
