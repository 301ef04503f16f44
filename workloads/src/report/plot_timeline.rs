//! `pause-timeline.svg`: one panel per run (in table order), x = seconds since the start of the
//! measured phase, y = wait duration on a log axis shared by all panels (so a 200 µs pause sits
//! at the same height everywhere): every mutator wait as its own mark, a dot per pause in its
//! kind's colour, red crosses for allocation stalls, brown hollow triangles for pacing
//! delays as long as the thread was held, with small filled ones at the delay the pacer asked
//! for (the longest of each 10 ms: a paced run has tens of thousands) and cyan hollow
//! squares for slow page allocations. Shows whether waits are steady, grow over the run, or
//! cluster.

use super::format;
use super::style::{kind_color, plot_err, FONT, PACING_COLOR, PAGE_ALLOC_COLOR, STALL_COLOR};
use crate::run_result::RunResult;
use gc_runtime::stats::{PacingRecord, PauseKind};
use plotters::prelude::*;

const PANEL_HEIGHT: u32 = 240;
const LEGEND_HEIGHT: u32 = 30;
const WIDTH: u32 = 1000;

const KINDS: [PauseKind; 4] = [
    PauseKind::MarkStart,
    PauseKind::MarkEnd,
    PauseKind::RelocateStart,
    PauseKind::Full,
];

/// Width of the time bins pacing delays are thinned to (see [`thin_pacing`]).
const PACING_BIN_S: f64 = 0.01;

/// The pacing marks to draw of `delays` (seconds since the start, wait in µs): a paced run
/// can have tens of thousands of delays, one a few hundred microseconds apart, which would
/// draw as a solid band and make a file of megabytes. Per 10 ms of time only the longest
/// delay is drawn (the first of equals): the upper edge of the band, what the plot is for,
/// stays exact. Returns the indices of the delays drawn, in time-bin order.
fn thin_pacing(delays: impl Iterator<Item = (f64, f64)>) -> Vec<usize> {
    let mut bins: std::collections::BTreeMap<i64, (usize, f64)> = Default::default();
    for (i, (x, y)) in delays.enumerate() {
        let bin = (x / PACING_BIN_S).floor() as i64;
        let e = bins.entry(bin).or_insert((i, y));
        if y > e.1 {
            *e = (i, y);
        }
    }
    bins.into_values().map(|(i, _)| i).collect()
}

/// Seconds since the start of `r`'s measured phase, the timeline's x.
fn seconds_in(r: &RunResult, at_ns: u64) -> f64 {
    at_ns.saturating_sub(r.measure_start_at_ns) as f64 / 1e9
}

/// A wait's length as the timeline's y: microseconds, at least 1 ns.
fn us(ns: u64) -> f64 {
    (ns as f64 / 1e3).max(0.001)
}

/// The pacing records of `r`'s measured phase the timeline draws a mark for: the longest
/// held of each 10 ms (hollow marks) and the longest asked for of each 10 ms (filled marks,
/// where the delay asked for is recorded), as two lists of references into `gc.pacing`.
pub fn drawn_pacing(r: &RunResult) -> (Vec<&PacingRecord>, Vec<&PacingRecord>) {
    let pacing: Vec<&PacingRecord> = r.measured_pacing().collect();
    let held = thin_pacing(
        pacing
            .iter()
            .map(|d| (seconds_in(r, d.start_at_ns), us(d.duration_ns))),
    );
    let asked_from: Vec<&PacingRecord> = pacing
        .iter()
        .copied()
        .filter(|d| d.imposed_ns > 0)
        .collect();
    let asked = thin_pacing(
        asked_from
            .iter()
            .map(|d| (seconds_in(r, d.start_at_ns), us(d.imposed_ns))),
    );
    (
        held.into_iter().map(|i| pacing[i]).collect(),
        asked.into_iter().map(|i| asked_from[i]).collect(),
    )
}

/// One legend for all panels, under the title: a mark and the name of each pause kind (and of
/// allocation stalls and pacing delays) that occurs in any run.
fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    runs: &[&RunResult],
) -> Result<(), String> {
    let style = TextStyle::from((FONT, 14)).color(&BLACK);
    let mut x = 80i32;
    let y = (LEGEND_HEIGHT / 2) as i32;
    let mut entry = |name: &str, mark: &dyn Fn((i32, i32)) -> Result<(), String>| {
        mark((x, y))?;
        area.draw(&Text::new(name.to_string(), (x + 10, y - 8), style.clone()))
            .map_err(plot_err)?;
        let (w, _) = area.estimate_text_size(name, &style).map_err(plot_err)?;
        x += w as i32 + 40;
        Ok::<(), String>(())
    };
    for kind in KINDS {
        if runs
            .iter()
            .any(|r| r.measured_pauses().any(|p| p.kind == kind))
        {
            let color = kind_color(kind);
            entry(kind.name(), &|c| {
                area.draw(&Circle::new(c, 4, color.filled()))
                    .map_err(plot_err)
            })?;
        }
    }
    if runs.iter().any(|r| r.measured_stalls().next().is_some()) {
        entry("Allocation stall", &|c| {
            area.draw(&Cross::new(c, 4, STALL_COLOR.stroke_width(2)))
                .map_err(plot_err)
        })?;
    }
    if runs.iter().any(|r| r.measured_pacing().next().is_some()) {
        entry("Pacing delay, held", &|c| {
            area.draw(&TriangleMarker::new(c, 5, PACING_COLOR.stroke_width(2)))
                .map_err(plot_err)
        })?;
    }
    if runs
        .iter()
        .any(|r| r.measured_pacing().any(|p| p.imposed_ns > 0))
    {
        entry("asked for", &|c| {
            area.draw(&TriangleMarker::new(c, 3, PACING_COLOR.filled()))
                .map_err(plot_err)
        })?;
    }
    if runs
        .iter()
        .any(|r| r.measured_page_allocations().next().is_some())
    {
        entry("Page allocation", &|(x, y)| {
            area.draw(&Rectangle::new(
                [(x - 4, y - 4), (x + 4, y + 4)],
                PAGE_ALLOC_COLOR.stroke_width(2),
            ))
            .map_err(plot_err)
        })?;
    }
    Ok(())
}

/// Render the timeline as SVG text.
pub fn pause_timeline_svg(results: &[RunResult]) -> Result<String, String> {
    let mut runs: Vec<&RunResult> = results.iter().collect();
    runs.sort_by_key(|r| (r.config.heap_bytes, r.config.jvm.is_some(), r.config.mode));
    let panels = runs.len().max(1);
    let height = 50 + LEGEND_HEIGHT + PANEL_HEIGHT * panels as u32;

    let all_values: Vec<f64> = runs
        .iter()
        .flat_map(|r| {
            let p = r.measured_pauses().map(|p| us(p.total_ns));
            let s = r.measured_stalls().map(|s| us(s.duration_ns));
            let d = r.measured_pacing().map(|d| us(d.duration_ns));
            let a = r.measured_page_allocations().map(|a| us(a.duration_ns));
            p.chain(s).chain(d).chain(a).collect::<Vec<_>>()
        })
        .collect();
    let (y_lo, y_hi) = if all_values.is_empty() {
        (1.0, 1000.0)
    } else {
        let lo = all_values.iter().copied().fold(f64::MAX, f64::min);
        let hi = all_values.iter().copied().fold(f64::MIN, f64::max);
        let lo = 10f64.powf(lo.log10().floor());
        let hi = 10f64.powf(hi.log10().ceil());
        (lo, if hi > lo { hi } else { lo * 10.0 })
    };

    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(plot_err)?;
        let root = root
            .titled(
                "Mutator waits over time: pauses, allocation stalls, pacing delays, page \
                 allocations (measured phase)",
                (FONT, 22),
            )
            .map_err(plot_err)?;
        if runs.is_empty() {
            root.draw(&Text::new("no runs", (20, 20), (FONT, 18)))
                .map_err(plot_err)?;
        }
        let (legend, root) = root.split_vertically(LEGEND_HEIGHT);
        draw_legend(&legend, &runs)?;
        let areas = root.split_evenly((panels, 1));
        for (area, r) in areas.iter().zip(&runs) {
            let pauses: Vec<_> = r.measured_pauses().collect();
            let stalls: Vec<_> = r.measured_stalls().collect();
            let pacing: Vec<_> = r.measured_pacing().collect();
            let pages: Vec<_> = r.measured_page_allocations().collect();
            let caption = if pauses.is_empty()
                && stalls.is_empty()
                && pacing.is_empty()
                && pages.is_empty()
            {
                format!("{} {}: no pauses", r.config.workload, r.label())
            } else {
                let max = pauses.iter().map(|p| p.total_ns).max().unwrap_or(0);
                let mut c = format!(
                    "{} {}: {} pauses, max {}",
                    r.config.workload,
                    r.label(),
                    pauses.len(),
                    format::duration_ns(max)
                );
                if !stalls.is_empty() {
                    let s = if stalls.len() == 1 { "" } else { "s" };
                    c += &format!(", {} allocation stall{s}", stalls.len());
                }
                if !pacing.is_empty() {
                    let n = pacing.len() as u64 + r.pacing_thinned_out;
                    let s = if n == 1 { "" } else { "s" };
                    c += &format!(", {n} pacing delay{s}");
                }
                if !pages.is_empty() {
                    let s = if pages.len() == 1 { "" } else { "s" };
                    c += &format!(", {} slow page allocation{s}", pages.len());
                }
                c
            };
            let x_hi = (r.wall_ns as f64 / 1e9).max(0.001);
            let mut chart = ChartBuilder::on(area)
                .caption(caption, (FONT, 16))
                .margin(10)
                .x_label_area_size(35)
                .y_label_area_size(80)
                .build_cartesian_2d(0f64..x_hi, (y_lo..y_hi).log_scale())
                .map_err(plot_err)?;
            chart
                .configure_mesh()
                .x_desc("time since start (s)")
                .y_desc("wait")
                .y_label_formatter(&|y| format::duration_axis(*y * 1e3))
                .label_style((FONT, 12))
                .draw()
                .map_err(plot_err)?;
            let t = |at_ns: u64| seconds_in(r, at_ns);
            for kind in KINDS {
                let points: Vec<(f64, f64)> = pauses
                    .iter()
                    .filter(|p| p.kind == kind)
                    .map(|p| (t(p.start_at_ns), us(p.total_ns)))
                    .collect();
                if points.is_empty() {
                    continue;
                }
                let color = kind_color(kind);
                chart
                    .draw_series(points.iter().map(|&p| Circle::new(p, 3, color.filled())))
                    .map_err(plot_err)?;
            }
            if !stalls.is_empty() {
                let points: Vec<(f64, f64)> = stalls
                    .iter()
                    .map(|s| (t(s.start_at_ns), us(s.duration_ns)))
                    .collect();
                chart
                    .draw_series(
                        points
                            .iter()
                            .map(|&p| Cross::new(p, 4, STALL_COLOR.stroke_width(2))),
                    )
                    .map_err(plot_err)?;
            }
            let (held, asked) = drawn_pacing(r);
            chart
                .draw_series(held.iter().map(|d| {
                    TriangleMarker::new(
                        (t(d.start_at_ns), us(d.duration_ns)),
                        5,
                        PACING_COLOR.stroke_width(2),
                    )
                }))
                .map_err(plot_err)?;
            // What the pacer asked for, where it is recorded (0 in older results).
            chart
                .draw_series(asked.iter().map(|d| {
                    TriangleMarker::new(
                        (t(d.start_at_ns), us(d.imposed_ns)),
                        3,
                        PACING_COLOR.filled(),
                    )
                }))
                .map_err(plot_err)?;
            let square = PAGE_ALLOC_COLOR.stroke_width(2);
            chart
                .draw_series(pages.iter().map(|a| {
                    EmptyElement::at((t(a.start_at_ns), us(a.duration_ns)))
                        + Rectangle::new([(-4, -4), (4, 4)], square)
                }))
                .map_err(plot_err)?;
        }
        root.present().map_err(plot_err)?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run_result::Mode;
    use crate::test_support::sample_result;
    use gc_runtime::stats::{PacingRecord, PageAllocationRecord, StallRecord};

    #[test]
    fn pacing_delays_are_thinned_to_the_longest_per_bin() {
        let delays = [(0.001, 50.0), (0.004, 900.0), (0.009, 10.0), (0.015, 20.0)];
        assert_eq!(
            thin_pacing(delays.into_iter()),
            vec![1, 3],
            "(0.004, 900.0) and (0.015, 20.0)"
        );
    }

    #[test]
    fn one_panel_per_run_with_kinds_and_stalls() {
        let mut stw = sample_result(Mode::Stw, 1 << 30, &[40_000_000, 50_000_000]);
        stw.gc.stalls.push(StallRecord {
            thread: "mutator-0".into(),
            start_at_ns: stw.measure_start_at_ns + 500_000_000,
            duration_ns: 3_000_000,
            failed: false,
        });
        for at in [600_000_000, 700_000_000] {
            stw.gc.pacing.push(PacingRecord {
                thread: "mutator-0".into(),
                start_at_ns: stw.measure_start_at_ns + at,
                duration_ns: 250_000,
                imposed_ns: 0,
                beyond_floor_ns: 0,
            });
        }
        let mut conc = sample_result(Mode::Concurrent, 1 << 30, &[100_000, 200_000, 150_000]);
        conc.gc.page_allocations.push(PageAllocationRecord {
            thread: "mutator-0".into(),
            start_at_ns: conc.measure_start_at_ns + 300_000_000,
            duration_ns: 4_000_000,
        });
        let results = [conc, stw, sample_result(Mode::Epsilon, 256 << 20, &[])];
        let svg = pause_timeline_svg(&results).unwrap();
        assert!(svg.contains("<svg"));
        assert!(
            svg.contains("heap-churn concurrent 1G: 3 pauses, max 200 µs, 1 slow page allocation"),
            "{svg}"
        );
        assert!(svg.contains(
            "heap-churn stw 1G: 2 pauses, max 50.0 ms, 1 allocation stall, 2 pacing delays"
        ));
        assert!(svg.contains("heap-churn epsilon 256M: no pauses"));
        for series in [
            "Pause Mark Start",
            "Pause Mark End",
            "Pause Relocate Start",
            "Pause Full",
            "Allocation stall",
            "Pacing delay",
            "Page allocation",
        ] {
            assert!(svg.contains(series), "missing series {series}");
        }
        // Panels in table order: by heap, then mode.
        let pos = |s: &str| svg.find(s).unwrap();
        assert!(pos("epsilon 256M") < pos("concurrent 1G"));
        assert!(pos("concurrent 1G") < pos("stw 1G"));
        // Two pacing marks and the legend's, in the pacing colour (#8C564B).
        assert_eq!(svg.matches("#8C564B").count(), 3, "{svg}");
        // One page allocation mark and the legend's (#17BECF).
        assert_eq!(svg.matches("#17BECF").count(), 2, "{svg}");
        // Without the delay asked for (older results), no mark or legend entry for it.
        assert!(!svg.contains("asked for"));
        // With it, a filled mark per delay beside the held one, and the legend's.
        let o = crate::test_support::oversleeping_result(1 << 30);
        let svg = pause_timeline_svg(std::slice::from_ref(&o)).unwrap();
        assert!(svg.contains("Pacing delay, held") && svg.contains("asked for"));
        assert_eq!(svg.matches("#8C564B").count(), 6, "{svg}");
        // Without pacing delays or page allocations, no legend entry for them.
        let svg = pause_timeline_svg(&results[2..]).unwrap();
        assert!(!svg.contains("Pacing delay"));
        assert!(!svg.contains("Page allocation"));
    }
}
