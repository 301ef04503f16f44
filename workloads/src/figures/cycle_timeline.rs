//! The cycle-timeline figure: one real GC cycle of a 64 MiB heap with a 16 MiB live set,
//! its three pauses (stop the world: the mutator stopped) and six concurrent phases (the
//! mutator running beside the GC threads), in order, each labeled with its measured duration
//! and each pause with its time to safepoint. ZGC logs the same phases as `gc,phases` lines.
//! The boxes' widths follow the logarithm of each duration, so that a pause of microseconds
//! stays visible next to a phase of milliseconds; the labels carry the real figures.

use gc_runtime::stats::{CyclePhase, CycleRecord, PauseRecord};
use gc_runtime::{Heap, HeapConfig, Mode};
use plotters::prelude::*;

const HEAP: u64 = 64 << 20;
/// The live set: this many 4 KiB objects, held by one table object.
const LIVE_OBJECTS: u32 = 4096;
const LIVE_BYTES: usize = 4 << 10;
/// Cycles to wait for; the figure shows the last complete one (the first ones build the
/// live set).
const CYCLES: usize = 4;
const WIDTH: u32 = 1200;
const HEIGHT: u32 = 420;

/// One complete cycle and the pause records of its pauses.
struct Facts {
    cycle: CycleRecord,
    pauses: Vec<PauseRecord>,
}

fn measure() -> Result<Facts, String> {
    let heap =
        Heap::new(HeapConfig::new(HEAP).mode(Mode::Concurrent)).map_err(|e| e.to_string())?;
    let mut m = heap.attach("mutator").map_err(|e| e.to_string())?;
    let oom = |e: gc_runtime::OutOfMemory| e.to_string();
    let table = m.scope(|s| -> Result<_, String> {
        let t = s.alloc(1, LIVE_OBJECTS, 0).map_err(oom)?;
        for i in 0..LIVE_OBJECTS as usize {
            s.scope(|s| -> Result<(), String> {
                let o = s.alloc(2, 0, LIVE_BYTES).map_err(oom)?;
                s.store(t, i, Some(o));
                Ok(())
            })?;
        }
        Ok(s.global(t))
    })?;
    // Garbage until enough cycles completed (bounded: a heap that never collects is an error).
    let mut allocated = 0u64;
    while heap.stats().cycles.len() < CYCLES {
        m.scope(|s| -> Result<(), String> {
            for _ in 0..256 {
                s.alloc(2, 0, 1024).map_err(oom)?;
            }
            Ok(())
        })?;
        allocated += 256 * 1024;
        if allocated > 64 * HEAP {
            return Err(format!(
                "no {CYCLES} complete cycles after allocating {} MiB",
                allocated >> 20
            ));
        }
    }
    drop(table);
    drop(m);
    let stats = heap.stats();
    let cycle = stats
        .cycles
        .last()
        .cloned()
        .ok_or("the heap recorded no cycle")?;
    let pauses = stats
        .pauses
        .iter()
        .filter(|p| p.cycle == cycle.cycle)
        .cloned()
        .collect();
    Ok(Facts { cycle, pauses })
}

/// A duration for a label: µs below 1 ms, else ms.
fn label(ns: u64) -> String {
    if ns < 1_000_000 {
        format!("{:.1} µs", ns as f64 / 1e3)
    } else {
        format!("{:.2} ms", ns as f64 / 1e6)
    }
}

/// `name` broken into lines of at most `width` characters at spaces.
fn wrap(name: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in name.split(' ') {
        match lines.last_mut() {
            Some(l) if l.len() + 1 + word.len() <= width => {
                l.push(' ');
                l.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines
}

fn err(e: impl std::fmt::Debug) -> String {
    format!("drawing the cycle-timeline figure: {e:?}")
}

/// The figure as SVG text.
pub fn svg() -> Result<String, String> {
    let f = measure()?;
    let phases = &f.cycle.phases;
    if phases.is_empty() {
        return Err("the cycle has no phase records".into());
    }
    // Widths: log10 of the duration in ns, at least 1, scaled to the figure.
    let weight = |ns: u64| (ns.max(1) as f64).log10().max(1.0);
    let total: f64 = phases.iter().map(|p| weight(p.duration_ns)).sum();
    let (x0, x1) = (20.0, f64::from(WIDTH) - 20.0);
    let mut out = String::new();
    {
        let root = super::canvas(&mut out, (WIDTH, HEIGHT))?;
        let text = |t: &str, x: i32, y: i32, size: u32, c: &RGBColor| {
            super::text(&root, t, (x, y), size, c)
        };
        text(
            &format!(
                "GC({}) of a 64 MiB heap with a 16 MiB live set ({}): {} in all",
                f.cycle.cycle,
                f.cycle.cause.name(),
                label(f.cycle.duration_ns)
            ),
            20,
            14,
            20,
            &BLACK,
        )?;
        text("GC threads", 20, 56, 15, &BLACK)?;
        text("mutator", 20, 256, 15, &BLACK)?;
        let pause_c = RGBColor(214, 39, 40);
        let conc_c = RGBColor(31, 119, 180);
        let run_c = RGBColor(44, 160, 44);
        let mut x = x0;
        for p in phases {
            let w = weight(p.duration_ns) / total * (x1 - x0);
            let (l, r) = (x as i32, (x + w) as i32 - 2);
            let is_pause = matches!(p.name, CyclePhase::Pause(_));
            let c = if is_pause { pause_c } else { conc_c };
            root.draw(&Rectangle::new([(l, 80), (r, 200)], c.mix(0.25).filled()))
                .map_err(err)?;
            root.draw(&Rectangle::new([(l, 80), (r, 200)], c.stroke_width(2)))
                .map_err(err)?;
            let chars = ((r - l) / 8).max(6) as usize;
            for (i, line) in wrap(p.name.name(), chars).iter().enumerate() {
                text(line, l + 4, 86 + 16 * i as i32, 13, &BLACK)?;
            }
            text(&label(p.duration_ns), l + 4, 178, 13, &BLACK)?;
            // The mutator: stopped during a pause, running otherwise.
            let (mc, what) = if is_pause {
                (pause_c, "stopped")
            } else {
                (run_c, "running")
            };
            root.draw(&Rectangle::new([(l, 280), (r, 320)], mc.mix(0.6).filled()))
                .map_err(err)?;
            text(what, l + 4, 292, 13, &BLACK)?;
            if let CyclePhase::Pause(kind) = p.name {
                if let Some(rec) = f.pauses.iter().find(|q| q.kind == kind) {
                    text(
                        &format!("ttsp {}", label(rec.time_to_safepoint_ns)),
                        l + 4,
                        326,
                        12,
                        &BLACK,
                    )?;
                }
            }
            x += w;
        }
        text(
            "Red: pauses (every mutator stopped at a safepoint; ttsp = time to reach it). Blue: concurrent \
             phases, beside the running mutator.",
            20,
            360,
            14,
            &BLACK,
        )?;
        text(
            "Box widths follow the logarithm of each duration; the labels are the measured durations. \
             Redrawn by `cargo run --release -p workloads --bin book-figures`.",
            20,
            382,
            14,
            &BLACK,
        )?;
        root.present().map_err(err)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_real_cycle_has_its_three_pauses_and_six_concurrent_phases() {
        let f = measure().unwrap();
        let pauses = f
            .cycle
            .phases
            .iter()
            .filter(|p| matches!(p.name, CyclePhase::Pause(_)))
            .count();
        assert_eq!(pauses, 3, "{:?}", f.cycle.phases);
        assert_eq!(f.cycle.phases.len(), 9, "{:?}", f.cycle.phases);
        assert_eq!(f.pauses.len(), 3);
    }

    #[test]
    fn names_wrap_at_spaces() {
        assert_eq!(
            wrap("Concurrent Process Non-Strong References", 18),
            ["Concurrent Process", "Non-Strong", "References"]
        );
    }
}
