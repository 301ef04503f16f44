//! Units for people: durations with three significant digits in ns/µs/ms/s, rates with k/M,
//! utilizations as percentages, ratios as `0.05×`. Used by the tables and the plot labels.

/// A duration in the largest unit that keeps the number ≥ 1, to 3 significant digits:
/// `850 ns`, `12.3 µs`, `250 µs`, `1.05 ms`, `2.40 s`.
pub fn duration_ns(ns: u64) -> String {
    duration_f64(ns as f64)
}

/// [`duration_ns`] for a fractional number of nanoseconds (plot axes).
pub fn duration_f64(ns: f64) -> String {
    if ns <= 0.0 {
        return "0".to_string();
    }
    const UNITS: [(f64, &str); 4] = [(1.0, "ns"), (1e3, "µs"), (1e6, "ms"), (1e9, "s")];
    let mut i = UNITS
        .iter()
        .rposition(|&(scale, _)| ns >= scale)
        .unwrap_or(0);
    // 999.7 µs would print as "1000 µs": use the next unit instead.
    if i + 1 < UNITS.len() && sig3(ns / UNITS[i].0) == "1000" {
        i += 1;
    }
    let (scale, unit) = UNITS[i];
    if i == 0 {
        return format!("{ns:.0} ns");
    }
    format!("{} {unit}", sig3(ns / scale))
}

/// [`duration_f64`] without trailing zeros, for axis ticks: `10 ms`, `1 s`, `250 µs`, `1.5 ms`.
pub fn duration_axis(ns: f64) -> String {
    let s = duration_f64(ns);
    match s.split_once(' ') {
        Some((num, unit)) if num.contains('.') => {
            let num = num.trim_end_matches('0').trim_end_matches('.');
            format!("{num} {unit}")
        }
        _ => s,
    }
}

/// Three significant digits for a value in [0.001, 1000): `1.23`, `12.3`, `123`.
fn sig3(v: f64) -> String {
    if v >= 99.95 {
        format!("{v:.0}")
    } else if v >= 9.995 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// An operation rate: `950`, `12.3k`, `1.23M`.
pub fn rate(per_sec: f64) -> String {
    if per_sec >= 999_500.0 {
        format!("{}M", sig3(per_sec / 1e6))
    } else if per_sec >= 999.5 {
        format!("{}k", sig3(per_sec / 1e3))
    } else {
        format!("{per_sec:.0}")
    }
}

/// A fraction as a percentage with one decimal: `87.3%` (`100%` and `0%` exactly).
pub fn percent(fraction: f64) -> String {
    if fraction >= 1.0 {
        "100%".to_string()
    } else if fraction <= 0.0 {
        "0%".to_string()
    } else {
        format!("{:.1}%", fraction * 100.0)
    }
}

/// `a / b` as `0.042×` (two significant digits below 1, else one decimal), or `–` when either
/// side is missing or `b` is zero.
pub fn ratio(a: f64, b: f64) -> String {
    if !(a.is_finite() && b.is_finite()) || b == 0.0 {
        return "–".to_string();
    }
    let r = a / b;
    if r == 0.0 {
        "0×".to_string()
    } else if r < 1.0 {
        // Two significant digits: 0.50×, 0.042×, 0.0031×.
        let digits = ((-r.log10().floor()) as usize + 1).min(6);
        format!("{r:.digits$}×")
    } else {
        format!("{r:.1}×")
    }
}

/// A measured amount of memory, to three significant figures: `1.25G`, `122M`, `87.5M`,
/// `640K`, `12B` (binary units). [`bytes`] is for sizes people chose (`256M`).
pub fn memory(b: u64) -> String {
    for (unit, shift) in [("G", 30), ("M", 20), ("K", 10)] {
        if b >= 1 << shift {
            let v = b as f64 / (1u64 << shift) as f64;
            return if v >= 100.0 {
                format!("{v:.0}{unit}")
            } else if v >= 10.0 {
                format!("{v:.1}{unit}")
            } else {
                format!("{v:.2}{unit}")
            };
        }
    }
    format!("{b}B")
}

/// A byte count as a short size: `256M`, `1G`, `1536M` (exact binary units as `gc-core`
/// writes them), or with one decimal where no unit is exact (`953.7M`).
pub fn bytes(b: u64) -> String {
    let s = gc_core::format_size(b);
    if !s.ends_with('B') {
        return s;
    }
    for (unit, shift) in [("G", 30), ("M", 20), ("K", 10)] {
        if b >= 1 << shift {
            return format!("{:.1}{unit}", b as f64 / (1u64 << shift) as f64);
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measured_memory_has_three_significant_figures() {
        assert_eq!(memory(0), "0B");
        assert_eq!(memory(640 << 10), "640K");
        assert_eq!(memory(125_430 << 10), "122M");
        assert_eq!(memory(87_951 << 10), "85.9M");
        assert_eq!(memory(1_342_177_280), "1.25G");
    }

    #[test]
    fn durations_pick_a_unit_and_three_digits() {
        assert_eq!(duration_ns(0), "0");
        assert_eq!(duration_ns(850), "850 ns");
        assert_eq!(duration_ns(1_000), "1.00 µs");
        assert_eq!(duration_ns(12_345), "12.3 µs");
        assert_eq!(duration_ns(250_000), "250 µs");
        assert_eq!(duration_ns(999_700), "1.00 ms");
        assert_eq!(duration_ns(1_050_000), "1.05 ms");
        assert_eq!(duration_ns(123_456_789), "123 ms");
        assert_eq!(duration_ns(2_400_000_000), "2.40 s");
        assert_eq!(duration_ns(7), "7 ns");
        assert_eq!(duration_axis(1e7), "10 ms");
        assert_eq!(duration_axis(1e9), "1 s");
        assert_eq!(duration_axis(1.5e6), "1.5 ms");
        assert_eq!(duration_axis(1e5), "100 µs");
        assert_eq!(duration_axis(0.0), "0");
    }

    #[test]
    fn rates_percentages_ratios_sizes() {
        assert_eq!(rate(950.0), "950");
        assert_eq!(rate(12_345.0), "12.3k");
        assert_eq!(rate(1_234_567.0), "1.23M");
        assert_eq!(percent(0.8734), "87.3%");
        assert_eq!(percent(1.0), "100%");
        assert_eq!(percent(0.0), "0%");
        assert_eq!(ratio(1.0, 2.0), "0.50×");
        assert_eq!(ratio(42.0, 1000.0), "0.042×");
        assert_eq!(ratio(3.0, 1.0), "3.0×");
        assert_eq!(ratio(1.0, 0.0), "–");
        assert_eq!(ratio(0.0, 5.0), "0×");
        assert_eq!(bytes(256 << 20), "256M");
        assert_eq!(bytes(3 << 29), "1536M");
        assert_eq!(bytes(1_000_000_000), "953.7M");
        assert_eq!(bytes(100), "100B");
    }
}
