//! `pause-vs-heap.svg`: the picture the project exists for. x is the heap size on a log2 axis
//! (labelled 256M, 512M, 1G, ...), y the time on a log axis; per mode one solid line with
//! filled dots for the maximum pause, one dotted line with hollow squares for the maximum
//! mutator wait (the longest pause, allocation stall or pacing delay: what the program felt,
//! never below the max pause), beside it a thin dotted line with filled squares for the
//! longest wait counting only what the collector imposed (a pacing delay as asked for, not
//! as held; drawn where the runs have the figure) and one dashed line with hollow triangles
//! for the p99 pause.
//! A thin line with crosses per mode is the control meter's longest overshoot: what a thread
//! sleeping outside the heap felt in the same runs (the machine's noise, and in `stw` the
//! pauses' workers on every core), the floor under the waits. A flat `concurrent` line next to a rising `stw` line is the expected
//! picture; a `concurrent` max-wait line far above its max-pause line says the waits are not
//! pauses, and one near the control line says they are as long as any thread's; a felt line
//! far above its imposed line says the machine, not the collector, held the mutator. Runs that show a
//! buffer kind (`--buffers`) get lines of their own per mode and kind, in shades of the mode's
//! colour; JVM runs (`--jvm`) lines of their own per JDK and collector (`JDK 17 ZGC`).

use super::format;
use super::style::{jvm_color, plot_err, series_color, FONT};
use crate::buffer_kind::BufferKind;
use crate::run_result::Mode;
use crate::summary::RunSummary;
use plotters::element::DashedPathElement;
use plotters::prelude::*;

/// x positions are log2(heap bytes) in 1/16 steps (plotters' key points need an integer axis).
pub(super) const STEPS_PER_OCTAVE: f64 = 16.0;

/// Room right of the plot for the legend.
const LEGEND_WIDTH: u32 = 200;

/// Dash and gap of the max-wait line (dotted), in pixels.
const WAIT_DASH: (u32, u32) = (2, 4);

/// What the legend shows of one series.
struct LegendEntry {
    name: String,
    color: RGBColor,
    /// The runs have an imposed longest wait.
    imposed: bool,
    /// The runs had a control meter.
    control: bool,
}

/// The legend, in the right margin outside the data: per mode a solid line with a dot
/// (`<mode> max pause`), a dotted line with a square (`<mode> max wait`), when the runs have
/// it a thin dotted line with a filled square (`<mode> imposed wait`), a dashed line with
/// a triangle (`<mode> p99 pause`) and, when the runs had a control meter, a thin line with a
/// cross (`<mode> control max`).
fn draw_legend<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    entries: &[LegendEntry],
) -> Result<(), String> {
    let x = root.dim_in_pixel().0 as i32 - LEGEND_WIDTH as i32 + 10;
    let text = TextStyle::from((FONT, 14)).color(&BLACK);
    let mut y = 70;
    for e in entries {
        let (mode, color, control) = (&e.name, &e.color, &e.control);
        let color = *color;
        let label = |y: i32, what: &str| {
            root.draw(&Text::new(
                format!("{mode} {what}"),
                (x + 40, y - 8),
                text.clone(),
            ))
            .map_err(plot_err)
        };
        let style = color.stroke_width(2);
        root.draw(&PathElement::new(vec![(x, y), (x + 30, y)], style))
            .map_err(plot_err)?;
        root.draw(&Circle::new((x + 15, y), 4, color.filled()))
            .map_err(plot_err)?;
        label(y, "max pause")?;
        y += 24;
        root.draw(&DashedPathElement::new(
            vec![(x, y), (x + 30, y)],
            WAIT_DASH.0,
            WAIT_DASH.1,
            style,
        ))
        .map_err(plot_err)?;
        root.draw(&Rectangle::new([(x + 11, y - 4), (x + 19, y + 4)], style))
            .map_err(plot_err)?;
        label(y, "max wait")?;
        if e.imposed {
            y += 24;
            root.draw(&DashedPathElement::new(
                vec![(x, y), (x + 30, y)],
                WAIT_DASH.0,
                WAIT_DASH.1,
                color.stroke_width(1),
            ))
            .map_err(plot_err)?;
            root.draw(&Rectangle::new(
                [(x + 12, y - 3), (x + 18, y + 3)],
                color.filled(),
            ))
            .map_err(plot_err)?;
            label(y, "imposed wait")?;
        }
        y += 24;
        root.draw(&DashedPathElement::new(
            vec![(x, y), (x + 30, y)],
            6,
            4,
            style,
        ))
        .map_err(plot_err)?;
        root.draw(&TriangleMarker::new((x + 15, y), 5, style))
            .map_err(plot_err)?;
        label(y, "p99 pause")?;
        if *control {
            y += 24;
            root.draw(&PathElement::new(
                vec![(x, y), (x + 30, y)],
                color.stroke_width(1),
            ))
            .map_err(plot_err)?;
            root.draw(&Cross::new((x + 15, y), 4, color.stroke_width(1)))
                .map_err(plot_err)?;
            label(y, "control max")?;
        }
        y += 34;
    }
    Ok(())
}

/// The lines of a plot over heap sizes: this project's series (per mode and buffer kind),
/// then the JVM's (per JDK and collector) in the order they ran, each with its name, colour
/// and runs (in `runs`' order).
pub(super) fn plot_series<'a>(
    runs: &[&'a RunSummary],
) -> Vec<(String, RGBColor, Vec<&'a RunSummary>)> {
    let kinds: Vec<Option<BufferKind>> = std::iter::once(None)
        .chain(BufferKind::ALL.into_iter().map(Some))
        .collect();
    let mut series: Vec<(String, RGBColor, Vec<&RunSummary>)> = Vec::new();
    for (mode, kind) in Mode::ALL
        .into_iter()
        .flat_map(|m| kinds.iter().map(move |&k| (m, k)))
    {
        let of: Vec<&RunSummary> = runs
            .iter()
            .copied()
            .filter(|s| s.is_ours() && s.mode == mode && s.buffers == kind)
            .collect();
        if of.is_empty() {
            continue;
        }
        let name = match kind {
            Some(k) => format!("{mode} {k}"),
            None => mode.to_string(),
        };
        series.push((name, series_color(mode, kind), of));
    }
    let mut jvm_series: Vec<String> = Vec::new();
    for s in runs {
        if let Some(j) = &s.jvm {
            if !jvm_series.contains(j) {
                jvm_series.push(j.clone());
            }
        }
    }
    for (i, name) in jvm_series.into_iter().enumerate() {
        let of: Vec<&RunSummary> = runs
            .iter()
            .copied()
            .filter(|s| s.jvm.as_ref() == Some(&name))
            .collect();
        series.push((name, jvm_color(i), of));
    }
    series
}

/// Render the plot as SVG text.
pub fn pause_vs_heap_svg(summaries: &[RunSummary]) -> Result<String, String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (1000, 560)).into_drawing_area();
        root.fill(&WHITE).map_err(plot_err)?;
        let mut workloads: Vec<&str> = summaries.iter().map(|s| s.workload.name()).collect();
        workloads.sort_unstable();
        workloads.dedup();
        let title = format!(
            "Pauses and mutator waits vs heap size ({})",
            workloads.join(", ")
        );
        let with_pauses: Vec<&RunSummary> = summaries
            .iter()
            .filter(|s| s.pauses.count > 0 || s.longest_wait.is_some())
            .collect();
        if with_pauses.is_empty() {
            root.draw(&Text::new(title, (20, 20), (FONT, 22)))
                .map_err(plot_err)?;
            root.draw(&Text::new(
                "no pauses or other waits recorded",
                (20, 60),
                (FONT, 18),
            ))
            .map_err(plot_err)?;
            root.present().map_err(plot_err)?;
            drop(root);
            return Ok(svg);
        }

        let steps = STEPS_PER_OCTAVE as i32;
        let log2 = |b: u64| ((b.max(1) as f64).log2() * STEPS_PER_OCTAVE).round() as i32;
        let x_lo = with_pauses
            .iter()
            .map(|s| log2(s.heap_bytes))
            .min()
            .unwrap_or(0)
            - steps / 2;
        let x_hi = with_pauses
            .iter()
            .map(|s| log2(s.heap_bytes))
            .max()
            .unwrap_or(0)
            + steps / 2;
        // A tick at every power of two in range.
        let key_points: Vec<i32> = (x_lo..=x_hi).filter(|x| x % steps == 0).collect();

        let us = |ns: u64| (ns as f64 / 1e3).max(0.001);
        let max_wait = |s: &RunSummary| s.longest_wait.as_ref().map_or(0, |w| w.duration_ns);
        let values = with_pauses.iter().flat_map(|s| {
            let control = (s.control_hiccup.count > 0).then(|| us(s.control_hiccup.max_ns));
            let imposed = s.longest_wait_imposed.as_ref().map(|w| us(w.duration_ns));
            [us(s.pauses.p99_ns), us(s.pauses.max_ns), us(max_wait(s))]
                .into_iter()
                .chain(imposed)
                .chain(control)
        });
        let (y_min, y_max) =
            values.fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)));
        let y_lo = 10f64.powf(y_min.log10().floor());
        let mut y_hi = 10f64.powf(y_max.log10().ceil());
        if y_hi <= y_lo {
            y_hi = y_lo * 10.0;
        }

        let mut chart = ChartBuilder::on(&root)
            .caption(title, (FONT, 22))
            .margin(15)
            .margin_right(LEGEND_WIDTH)
            .x_label_area_size(50)
            .y_label_area_size(85)
            .build_cartesian_2d(
                (x_lo..x_hi).with_key_points(key_points),
                (y_lo..y_hi).log_scale(),
            )
            .map_err(plot_err)?;
        chart
            .configure_mesh()
            .x_desc("heap size (log2 scale)")
            .y_desc("pause / wait (log scale)")
            .x_label_formatter(&|x| {
                format::bytes(2f64.powf(f64::from(*x) / STEPS_PER_OCTAVE).round() as u64)
            })
            .y_label_formatter(&|y| format::duration_axis(*y * 1e3))
            .label_style((FONT, 14))
            .draw()
            .map_err(plot_err)?;

        let mut legend = Vec::new();
        for (name, color, mut runs) in plot_series(&with_pauses) {
            runs.sort_by_key(|s| s.heap_bytes);
            let max: Vec<(i32, f64)> = runs
                .iter()
                .map(|s| (log2(s.heap_bytes), us(s.pauses.max_ns)))
                .collect();
            let wait: Vec<(i32, f64)> = runs
                .iter()
                .map(|s| (log2(s.heap_bytes), us(max_wait(s))))
                .collect();
            // The imposed longest wait where the run has the figure (0 when nothing waited).
            let imposed: Vec<(i32, f64)> = runs
                .iter()
                .filter(|s| s.imposed_unavailable.is_none())
                .map(|s| {
                    let ns = s.longest_wait_imposed.as_ref().map_or(0, |w| w.duration_ns);
                    (log2(s.heap_bytes), us(ns))
                })
                .collect();
            let p99: Vec<(i32, f64)> = runs
                .iter()
                .map(|s| (log2(s.heap_bytes), us(s.pauses.p99_ns)))
                .collect();
            let solid = color.stroke_width(2);
            chart
                .draw_series(LineSeries::new(max.clone(), solid))
                .map_err(plot_err)?;
            chart
                .draw_series(max.iter().map(|&p| Circle::new(p, 4, color.filled())))
                .map_err(plot_err)?;
            chart
                .draw_series(DashedLineSeries::new(
                    wait.clone(),
                    WAIT_DASH.0,
                    WAIT_DASH.1,
                    solid,
                ))
                .map_err(plot_err)?;
            chart
                .draw_series(
                    wait.iter()
                        .map(|&p| EmptyElement::at(p) + Rectangle::new([(-4, -4), (4, 4)], solid)),
                )
                .map_err(plot_err)?;
            let thin = color.stroke_width(1);
            chart
                .draw_series(DashedLineSeries::new(
                    imposed.clone(),
                    WAIT_DASH.0,
                    WAIT_DASH.1,
                    thin,
                ))
                .map_err(plot_err)?;
            chart
                .draw_series(imposed.iter().map(|&p| {
                    EmptyElement::at(p) + Rectangle::new([(-3, -3), (3, 3)], color.filled())
                }))
                .map_err(plot_err)?;
            chart
                .draw_series(DashedLineSeries::new(p99.clone(), 8, 5, solid))
                .map_err(plot_err)?;
            chart
                .draw_series(
                    p99.iter()
                        .map(|&p| TriangleMarker::new(p, 5, color.stroke_width(2))),
                )
                .map_err(plot_err)?;
            let control: Vec<(i32, f64)> = runs
                .iter()
                .filter(|s| s.control_hiccup.count > 0)
                .map(|s| (log2(s.heap_bytes), us(s.control_hiccup.max_ns)))
                .collect();
            chart
                .draw_series(LineSeries::new(control.clone(), thin))
                .map_err(plot_err)?;
            chart
                .draw_series(control.iter().map(|&p| Cross::new(p, 4, thin)))
                .map_err(plot_err)?;
            legend.push(LegendEntry {
                name,
                color,
                imposed: !imposed.is_empty(),
                control: !control.is_empty(),
            });
        }
        draw_legend(&root, &legend)?;
        root.present().map_err(plot_err)?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::sample_result;

    #[test]
    fn jvm_runs_get_lines_of_their_own() {
        use crate::jvm::JvmCollector;
        use crate::test_support::sample_jvm_result;
        let results = [
            sample_result(Mode::Stw, 256 << 20, &[5_000_000]),
            sample_jvm_result(JvmCollector::G1, 256 << 20, &[9_000_000]),
            sample_jvm_result(JvmCollector::G1, 1 << 30, &[19_000_000]),
            sample_jvm_result(JvmCollector::Zgc, 1 << 30, &[50_000]),
        ];
        let summaries: Vec<RunSummary> = results.iter().map(RunSummary::of).collect();
        let svg = pause_vs_heap_svg(&summaries).unwrap();
        for name in [
            "stw max pause",
            "JDK 17 G1 max pause",
            "JDK 17 G1 max wait",
            "JDK 17 ZGC p99 pause",
            "JDK 17 ZGC control max",
        ] {
            assert!(svg.contains(name), "missing series {name}");
        }
        assert!(
            !svg.contains("concurrent max pause"),
            "ZGC is not this project's"
        );
    }

    #[test]
    fn svg_has_a_line_per_mode_and_statistic() {
        let results = [
            sample_result(Mode::Concurrent, 256 << 20, &[100_000, 200_000]),
            sample_result(Mode::Concurrent, 4 << 30, &[120_000, 220_000]),
            sample_result(Mode::Stw, 256 << 20, &[5_000_000]),
            sample_result(Mode::Stw, 4 << 30, &[80_000_000]),
        ];
        let summaries: Vec<RunSummary> = results.iter().map(RunSummary::of).collect();
        let svg = pause_vs_heap_svg(&summaries).unwrap();
        assert!(svg.contains("<svg"), "{svg}");
        for name in [
            "concurrent max pause",
            "concurrent max wait",
            "concurrent p99 pause",
            "stw max pause",
            "stw max wait",
            "stw p99 pause",
            "concurrent control max",
            "stw control max",
            "concurrent imposed wait",
            "stw imposed wait",
        ] {
            assert!(svg.contains(name), "missing series {name}");
        }
        assert!(!svg.contains("epsilon"));
        // Heap labels on the log2 axis, pause labels in time units.
        for label in ["256M", "1G", "4G", "µs", "ms"] {
            assert!(svg.contains(label), "missing axis label {label}");
        }
        assert!(svg.contains("heap-churn"));
    }

    /// The max-wait line reaches a stall longer than every pause, so the axis covers it.
    #[test]
    fn a_stall_longer_than_every_pause_raises_the_wait_line_and_the_axis() {
        let mut r = sample_result(Mode::Concurrent, 1 << 30, &[100_000, 200_000]);
        r.gc.stalls.push(gc_runtime::stats::StallRecord {
            thread: "mutator-0".into(),
            start_at_ns: r.measure_start_at_ns + 10_000_000,
            duration_ns: 300_000_000,
            failed: false,
        });
        let summaries = [RunSummary::of(&r)];
        let svg = pause_vs_heap_svg(&summaries).unwrap();
        // Pauses alone span 100-1000 µs on the axis; the 300 ms stall needs the 1 s decade.
        assert!(svg.contains("\n1 s\n"), "{svg}");
        let without = sample_result(Mode::Concurrent, 1 << 30, &[100_000, 200_000]);
        let svg = pause_vs_heap_svg(&[RunSummary::of(&without)]).unwrap();
        assert!(!svg.contains("\n1 s\n"), "{svg}");
    }

    /// The imposed longest wait gets its own line, below the felt one where a pacing delay
    /// was held longer than asked; a run without the figure draws none.
    #[test]
    fn the_imposed_wait_line_sits_beside_the_felt_one() {
        let r = crate::test_support::oversleeping_result(1 << 30);
        let svg = pause_vs_heap_svg(&[RunSummary::of(&r)]).unwrap();
        assert!(svg.contains("concurrent imposed wait"), "{svg}");
        let mut old = r.clone();
        for p in &mut old.gc.pacing {
            p.imposed_ns = 0;
        }
        let svg_old = pause_vs_heap_svg(&[RunSummary::of(&old)]).unwrap();
        assert!(svg_old.contains("concurrent max wait"));
        assert!(!svg_old.contains("imposed wait"), "{svg_old}");
        assert!(svg.len() > svg_old.len());
    }

    /// Runs without a control meter (results written before it existed) get no control line.
    #[test]
    fn no_control_line_without_control_samples() {
        let mut r = sample_result(Mode::Concurrent, 1 << 30, &[100_000, 200_000]);
        r.control_hiccup = crate::hiccup::HiccupSamples::empty();
        let svg = pause_vs_heap_svg(&[RunSummary::of(&r)]).unwrap();
        assert!(svg.contains("concurrent max wait"));
        assert!(!svg.contains("control max"), "{svg}");
    }

    #[test]
    fn no_pauses_still_gives_an_svg_that_says_so() {
        let results = [sample_result(Mode::Epsilon, 1 << 30, &[])];
        let summaries: Vec<RunSummary> = results.iter().map(RunSummary::of).collect();
        let svg = pause_vs_heap_svg(&summaries).unwrap();
        assert!(svg.contains("<svg"));
        assert!(svg.contains("no pauses or other waits recorded"));
    }
}
