//! `memory-N-<run>.svg`: one run's memory over its measured phase, from the samples the
//! runner took every 100 ms (`RunResult::memory`): x = seconds since the start of the
//! measured phase, y = bytes (linear, from 0), one line each for the heap's committed bytes,
//! the direct and the pooled buffers' native bytes (drawn only when a run has any) and RSS
//! (dashed: it counts a heap page once per view it was touched through); Pss as dots where
//! it was read (at the start and at the end: reading it holds the mutators, see
//! `memory_timeline`). Shows where a
//! workload's memory lives — in the heap or beside it — and whether it is given back.

use super::format;
use super::style::{
    plot_err, COMMITTED_COLOR, DIRECT_COLOR, FONT, POOLED_COLOR, PSS_COLOR, RSS_COLOR,
};
use crate::memory_timeline::MemorySample;
use crate::run_result::RunResult;
use plotters::prelude::*;

const WIDTH: u32 = 1000;
const HEIGHT: u32 = 520;

/// The file name of run `index` (0-based, in results.json order):
/// `memory-1-buffer-echo-concurrent-256M-pooled.svg`.
pub fn memory_svg_name(index: usize, r: &RunResult) -> String {
    let label: String = format!("{} {}", r.config.workload, r.label())
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    format!("memory-{}-{label}.svg", index + 1)
}

/// How a series is drawn.
#[derive(Clone, Copy, PartialEq)]
enum Draw {
    Line,
    Dashed,
    /// A dot per sample that has a value (0: not read).
    Dots,
}

/// One series: its name, colour, how it is drawn, and value per sample.
struct Series {
    name: &'static str,
    color: RGBColor,
    draw: Draw,
    value: fn(&MemorySample) -> u64,
}

const SERIES: [Series; 5] = [
    Series {
        name: "committed heap",
        color: COMMITTED_COLOR,
        draw: Draw::Line,
        value: |s| s.committed_heap_bytes,
    },
    Series {
        name: "direct buffers",
        color: DIRECT_COLOR,
        draw: Draw::Line,
        value: |s| s.direct_bytes,
    },
    Series {
        name: "pooled buffers",
        color: POOLED_COLOR,
        draw: Draw::Line,
        value: |s| s.pooled_bytes,
    },
    Series {
        name: "Pss",
        color: PSS_COLOR,
        draw: Draw::Dots,
        value: |s| s.pss_bytes,
    },
    Series {
        name: "RSS",
        color: RSS_COLOR,
        draw: Draw::Dashed,
        value: |s| s.rss_bytes,
    },
];

/// Render run `r`'s memory over time as SVG text.
pub fn memory_svg(r: &RunResult) -> Result<String, String> {
    let samples = &r.memory;
    let title = format!("Memory over time: {} {}", r.config.workload, r.label());
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(plot_err)?;
        if samples.is_empty() {
            root.draw(&Text::new(title, (20, 20), (FONT, 22)))
                .map_err(plot_err)?;
            root.draw(&Text::new("no memory samples", (20, 60), (FONT, 18)))
                .map_err(plot_err)?;
            root.present().map_err(plot_err)?;
            drop(root);
            return Ok(svg);
        }
        // Series that are 0 throughout (direct or pooled buffers of a run without them) are
        // left out, and so from the legend.
        let shown: Vec<&Series> = SERIES
            .iter()
            .filter(|s| samples.iter().any(|m| (s.value)(m) > 0))
            .collect();
        let x_hi = samples
            .iter()
            .map(|s| s.at_ns)
            .max()
            .map_or(1.0, |ns| ns as f64 / 1e9)
            .max(0.001);
        let y_max = shown
            .iter()
            .flat_map(|s| samples.iter().map(|m| (s.value)(m)))
            .max()
            .unwrap_or(0)
            .max(1 << 20) as f64;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, (FONT, 20))
            .margin(15)
            .x_label_area_size(40)
            .y_label_area_size(80)
            .build_cartesian_2d(0f64..x_hi, 0f64..y_max * 1.05)
            .map_err(plot_err)?;
        chart
            .configure_mesh()
            .x_desc("time since start (s)")
            .y_desc("bytes")
            .y_label_formatter(&|y| format::memory(*y as u64))
            .label_style((FONT, 12))
            .draw()
            .map_err(plot_err)?;
        for s in shown {
            let points: Vec<(f64, f64)> = samples
                .iter()
                .filter(|m| s.draw != Draw::Dots || (s.value)(m) > 0)
                .map(|m| (m.at_ns as f64 / 1e9, (s.value)(m) as f64))
                .collect();
            let style = s.color.stroke_width(2);
            let color = s.color;
            match s.draw {
                Draw::Dashed => chart
                    .draw_series(DashedLineSeries::new(points, 6, 4, style))
                    .map_err(plot_err)?
                    .label(s.name)
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                    }),
                Draw::Line => chart
                    .draw_series(LineSeries::new(points, style))
                    .map_err(plot_err)?
                    .label(s.name)
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                    }),
                Draw::Dots => chart
                    .draw_series(
                        points
                            .into_iter()
                            .map(|p| Circle::new(p, 5, color.filled())),
                    )
                    .map_err(plot_err)?
                    .label(format!("{} (read at start and end)", s.name))
                    .legend(move |(x, y)| Circle::new((x + 10, y), 5, color.filled())),
            };
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .label_font((FONT, 14))
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .map_err(plot_err)?;
        root.present().map_err(plot_err)?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run_result::Mode;
    use crate::test_support::sample_result;

    #[test]
    fn lines_for_the_series_a_run_has() {
        let mut r = sample_result(Mode::Concurrent, 256 << 20, &[100_000]);
        r.memory = (0..10u64)
            .map(|i| MemorySample {
                at_ns: i * 100_000_000,
                committed_heap_bytes: (64 + i) << 20,
                direct_bytes: (i * 3) << 20,
                // Pss read at the two ends only.
                pss_bytes: if i == 0 || i == 9 { (100 + i) << 20 } else { 0 },
                rss_bytes: (200 + i) << 20,
                ..MemorySample::default()
            })
            .collect();
        let svg = memory_svg(&r).unwrap();
        assert!(
            svg.contains("Memory over time: heap-churn concurrent 256M"),
            "{svg}"
        );
        for name in [
            "committed heap",
            "direct buffers",
            "Pss (read at start and end)",
            "RSS",
        ] {
            assert!(svg.contains(name), "missing {name}");
        }
        // Two Pss dots (plus the legend's), none for the samples that did not read it.
        let dots = svg.matches("<circle").count();
        assert_eq!(dots, 3, "{svg}");
        assert!(
            !svg.contains("pooled buffers"),
            "a series that stays 0 is left out"
        );
        assert_eq!(
            memory_svg_name(0, &r),
            "memory-1-heap-churn-concurrent-256M.svg"
        );
        r.memory.clear();
        assert!(memory_svg(&r).unwrap().contains("no memory samples"));
    }
}
