//! `mmu-vs-heap.svg`, the companion of `pause-vs-heap.svg`: the same heap-size axis (log2,
//! labelled 256M, 1G, ...), y the minimum mutator utilization at 10 ms from 0 to 100%. Per
//! mode (or JVM series) a solid line with filled dots for the MMU the program felt and a
//! dashed line with hollow dots for the MMU counting only what the collector imposed (pauses
//! with time to safepoint, stalls, page allocations, each pacing delay as long as the pacer
//! asked for; see [`crate::waits::WaitMeasure`]). The gap between the two lines is what the
//! machine added (a late wake-up, a pause holding a sleeper), not the collector; runs whose
//! imposed figure is not available draw no imposed point.

use super::format;
use super::plot_heap::{plot_series, STEPS_PER_OCTAVE};
use super::style::{plot_err, FONT};
use crate::summary::RunSummary;
use plotters::element::DashedPathElement;
use plotters::prelude::*;

/// The MMU window plotted: 10 ms, the table's.
pub const MMU_PLOT_WINDOW_NS: u64 = 10_000_000;

/// Room right of the plot for the legend.
const LEGEND_WIDTH: u32 = 230;

/// Dash and gap of the imposed line, in pixels.
const IMPOSED_DASH: (u32, u32) = (6, 4);

/// Per series a solid line with a dot (`<series> felt`) and, when the runs have it, a dashed
/// line with a hollow dot (`<series> imposed`).
fn draw_legend<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    entries: &[(String, RGBColor, bool)],
) -> Result<(), String> {
    let x = root.dim_in_pixel().0 as i32 - LEGEND_WIDTH as i32 + 10;
    let text = TextStyle::from((FONT, 14)).color(&BLACK);
    let mut y = 70;
    for (name, color, imposed) in entries {
        let style = color.stroke_width(2);
        let label = |y: i32, what: &str| {
            root.draw(&Text::new(
                format!("{name} {what}"),
                (x + 40, y - 8),
                text.clone(),
            ))
            .map_err(plot_err)
        };
        root.draw(&PathElement::new(vec![(x, y), (x + 30, y)], style))
            .map_err(plot_err)?;
        root.draw(&Circle::new((x + 15, y), 4, color.filled()))
            .map_err(plot_err)?;
        label(y, "felt")?;
        if *imposed {
            y += 24;
            root.draw(&DashedPathElement::new(
                vec![(x, y), (x + 30, y)],
                IMPOSED_DASH.0,
                IMPOSED_DASH.1,
                style,
            ))
            .map_err(plot_err)?;
            root.draw(&Circle::new((x + 15, y), 4, style))
                .map_err(plot_err)?;
            label(y, "imposed")?;
        }
        y += 34;
    }
    Ok(())
}

/// Render the plot as SVG text.
pub fn mmu_vs_heap_svg(summaries: &[RunSummary]) -> Result<String, String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (1000, 460)).into_drawing_area();
        root.fill(&WHITE).map_err(plot_err)?;
        let mut workloads: Vec<&str> = summaries.iter().map(|s| s.workload.name()).collect();
        workloads.sort_unstable();
        workloads.dedup();
        let window = format::duration_axis(MMU_PLOT_WINDOW_NS as f64);
        let title = format!(
            "MMU at {window} vs heap size, felt and collector-imposed ({})",
            workloads.join(", ")
        );
        let runs: Vec<&RunSummary> = summaries
            .iter()
            .filter(|s| s.mmu_at(MMU_PLOT_WINDOW_NS).is_some())
            .collect();
        if runs.is_empty() {
            root.draw(&Text::new(title, (20, 20), (FONT, 22)))
                .map_err(plot_err)?;
            root.draw(&Text::new("no runs", (20, 60), (FONT, 18)))
                .map_err(plot_err)?;
            root.present().map_err(plot_err)?;
            drop(root);
            return Ok(svg);
        }
        let steps = STEPS_PER_OCTAVE as i32;
        let log2 = |b: u64| ((b.max(1) as f64).log2() * STEPS_PER_OCTAVE).round() as i32;
        let xs = runs.iter().map(|s| log2(s.heap_bytes));
        let x_lo = xs.clone().min().unwrap_or(0) - steps / 2;
        let x_hi = xs.max().unwrap_or(0) + steps / 2;
        let key_points: Vec<i32> = (x_lo..=x_hi).filter(|x| x % steps == 0).collect();

        let mut chart = ChartBuilder::on(&root)
            .caption(title, (FONT, 22))
            .margin(15)
            .margin_right(LEGEND_WIDTH)
            .x_label_area_size(50)
            .y_label_area_size(70)
            .build_cartesian_2d((x_lo..x_hi).with_key_points(key_points), 0f64..100f64)
            .map_err(plot_err)?;
        chart
            .configure_mesh()
            .x_desc("heap size (log2 scale)")
            .y_desc(format!("MMU {window}"))
            .x_label_formatter(&|x| {
                format::bytes(2f64.powf(f64::from(*x) / STEPS_PER_OCTAVE).round() as u64)
            })
            .y_label_formatter(&|y| format!("{y:.0}%"))
            .label_style((FONT, 14))
            .draw()
            .map_err(plot_err)?;

        let mut legend = Vec::new();
        for (name, color, mut of) in plot_series(&runs) {
            of.sort_by_key(|s| s.heap_bytes);
            let points = |f: &dyn Fn(&RunSummary) -> Option<f64>| -> Vec<(i32, f64)> {
                of.iter()
                    .filter_map(|s| Some((log2(s.heap_bytes), f(s)? * 100.0)))
                    .collect()
            };
            let felt = points(&|s| s.mmu_at(MMU_PLOT_WINDOW_NS));
            let imposed = points(&|s| s.mmu_imposed_at(MMU_PLOT_WINDOW_NS));
            let style = color.stroke_width(2);
            chart
                .draw_series(LineSeries::new(felt.clone(), style))
                .map_err(plot_err)?;
            chart
                .draw_series(felt.iter().map(|&p| Circle::new(p, 4, color.filled())))
                .map_err(plot_err)?;
            chart
                .draw_series(DashedLineSeries::new(
                    imposed.clone(),
                    IMPOSED_DASH.0,
                    IMPOSED_DASH.1,
                    style,
                ))
                .map_err(plot_err)?;
            chart
                .draw_series(imposed.iter().map(|&p| Circle::new(p, 5, style)))
                .map_err(plot_err)?;
            legend.push((name, color, !imposed.is_empty()));
        }
        draw_legend(&root, &legend)?;
        root.present().map_err(plot_err)?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run_result::Mode;
    use crate::test_support::{oversleeping_result, sample_result};

    #[test]
    fn felt_and_imposed_lines_per_series() {
        let results = [
            oversleeping_result(256 << 20),
            oversleeping_result(1 << 30),
            sample_result(Mode::Stw, 256 << 20, &[5_000_000]),
            sample_result(Mode::Stw, 1 << 30, &[20_000_000]),
        ];
        let summaries: Vec<RunSummary> = results.iter().map(RunSummary::of).collect();
        let svg = mmu_vs_heap_svg(&summaries).unwrap();
        for name in [
            "concurrent felt",
            "concurrent imposed",
            "stw felt",
            "stw imposed",
            "MMU at 10 ms vs heap size",
            "256M",
            "1G",
            "100%",
        ] {
            assert!(svg.contains(name), "missing {name}");
        }
    }

    #[test]
    fn no_imposed_line_where_the_figure_is_not_available() {
        let mut r = oversleeping_result(1 << 30);
        for p in &mut r.gc.pacing {
            p.imposed_ns = 0;
        }
        let svg = mmu_vs_heap_svg(&[RunSummary::of(&r)]).unwrap();
        assert!(svg.contains("concurrent felt"));
        assert!(!svg.contains("concurrent imposed"), "{svg}");
        let svg = mmu_vs_heap_svg(&[]).unwrap();
        assert!(svg.contains("no runs"));
    }
}
