//! The machine's floor for a marker: how long a random cache-line load takes on this machine,
//! one at a time (a pointer chase: each load's address comes from the previous load, as a
//! marker with nothing prefetched waits for each object) and many at once (independent loads,
//! as a marker whose prefetches keep several misses in flight gets them), over buffers from
//! cache-sized to heap-sized, on 4 KiB pages and on transparent huge pages. Marking an object
//! takes at least two random lines (the object and the word of its mark bit, the live map's:
//! ZGC's `ZLiveMap`), so the independent figure at the heap's size, times two, is about the
//! least a marked object can cost one GC thread here, however the marker is written. The
//! `memory-probe` binary prints it; the book's *Reading the reports* sets it beside the
//! collector's own figures. Plain safe code over an anonymous mapping (`memmap2`), advised
//! with `madvise(MADV_HUGEPAGE)` or `MADV_NOHUGEPAGE`.

use memmap2::{Advice, MmapMut};
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use std::time::Instant;

/// A cache line, the unit every load of the probe touches once.
const LINE: usize = 64;

/// The pages a probe's buffer is asked to be on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProbePages {
    /// `madvise(MADV_NOHUGEPAGE)`: 4 KiB pages, as the heap's views get without huge pages.
    Small,
    /// `madvise(MADV_HUGEPAGE)`: transparent huge pages where the system allows them for
    /// anonymous memory (`/sys/kernel/mm/transparent_hugepage/enabled` not `never`).
    Transparent,
}

/// One buffer's figures.
#[derive(Clone, Copy, Debug)]
pub struct ProbeResult {
    pub bytes: usize,
    pub pages: ProbePages,
    /// How much of the buffer the kernel put on huge pages (`AnonHugePages` grew by this).
    pub huge_bytes: u64,
    /// Nanoseconds per load when each load's address is the previous load's value.
    pub dependent_ns: f64,
    /// Nanoseconds per load when the addresses are known ahead (the loads overlap).
    pub independent_ns: f64,
}

/// Measures one buffer of `bytes` (rounded down to whole lines, at least two) on `pages`,
/// `loads` loads of each kind, the random order from `seed`.
pub fn probe(
    bytes: usize,
    pages: ProbePages,
    loads: usize,
    seed: u64,
) -> Result<ProbeResult, String> {
    let lines = bytes / LINE;
    if lines < 2 {
        return Err(format!(
            "a probe needs at least {} bytes, got {bytes}",
            2 * LINE
        ));
    }
    let len = lines * LINE;
    let huge_before = anon_huge_bytes();
    let mut buf = MmapMut::map_anon(len)
        .map_err(|e| format!("mapping {len} bytes for the probe failed: {e}"))?;
    let advice = match pages {
        ProbePages::Small => Advice::NoHugePage,
        ProbePages::Transparent => Advice::HugePage,
    };
    buf.advise(advice)
        .map_err(|e| format!("madvise({advice:?}) on the probe's buffer failed: {e}"))?;
    let order = random_order(lines, seed);
    for (line, next) in chase_links(&order).into_iter().enumerate() {
        buf[line * LINE..line * LINE + 8].copy_from_slice(&(next as u64).to_ne_bytes());
    }
    let huge_bytes = anon_huge_bytes().saturating_sub(huge_before);
    let read = |buf: &[u8], line: usize| -> u64 {
        let at = line * LINE;
        u64::from_ne_bytes(buf[at..at + 8].try_into().expect("8 bytes"))
    };
    // Dependent: the chase.
    let mut at = order[0];
    let start = Instant::now();
    for _ in 0..loads {
        at = read(&buf, at) as usize;
    }
    let dependent_ns = start.elapsed().as_nanos() as f64 / loads as f64;
    std::hint::black_box(at);
    // Independent: the same random lines, addresses read from `order` (sequential, so
    // prefetched by the hardware), each load's value only summed.
    let mut sum = 0u64;
    let start = Instant::now();
    for i in 0..loads {
        sum = sum.wrapping_add(read(&buf, order[i % lines]));
    }
    let independent_ns = start.elapsed().as_nanos() as f64 / loads as f64;
    std::hint::black_box(sum);
    Ok(ProbeResult {
        bytes: len,
        pages,
        huge_bytes,
        dependent_ns,
        independent_ns,
    })
}

/// The lines `0..lines` in a random order from `seed`.
fn random_order(lines: usize, seed: u64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..lines).collect();
    order.shuffle(&mut SmallRng::seed_from_u64(seed));
    order
}

/// The chase through `order`: for each line, the line after it in `order` (the last leads
/// back to the first), so that following the links from any line visits every line once.
fn chase_links(order: &[usize]) -> Vec<usize> {
    let mut next = vec![0; order.len()];
    for (i, &line) in order.iter().enumerate() {
        next[line] = order[(i + 1) % order.len()];
    }
    next
}

/// Whether the system gives anonymous memory transparent huge pages on `madvise`, from
/// `/sys/kernel/mm/transparent_hugepage/enabled` (`None` if it cannot be read).
pub fn transparent_allowed() -> Option<bool> {
    let s = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").ok()?;
    Some(!s.contains("[never]"))
}

/// The process's anonymous memory on transparent huge pages (`AnonHugePages` of
/// `/proc/self/smaps_rollup`), in bytes; 0 where it cannot be read.
fn anon_huge_bytes() -> u64 {
    let Ok(s) = std::fs::read_to_string("/proc/self/smaps_rollup") else {
        return 0;
    };
    s.lines()
        .find_map(|l| l.strip_prefix("AnonHugePages:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small buffer is probed on both page kinds, with positive figures.
    #[test]
    fn a_small_probe_measures_both_kinds_of_load() {
        for pages in [ProbePages::Small, ProbePages::Transparent] {
            let r = probe(1 << 20, pages, 100_000, 1).expect("a 1 MiB probe");
            assert_eq!(r.bytes, 1 << 20);
            assert!(r.dependent_ns > 0.0 && r.independent_ns > 0.0, "{r:?}");
        }
    }

    #[test]
    fn a_buffer_of_less_than_two_lines_is_refused() {
        let e = probe(100, ProbePages::Small, 10, 1).unwrap_err();
        assert!(e.contains("at least 128 bytes"), "{e}");
    }

    /// The chase visits every line once per round: one cycle, not several.
    #[test]
    fn the_chase_is_one_cycle_through_every_line() {
        let next = chase_links(&random_order(1000, 7));
        let (mut at, mut seen) = (0, vec![false; next.len()]);
        for _ in 0..next.len() {
            assert!(!seen[at], "line {at} visited twice");
            seen[at] = true;
            at = next[at];
        }
        assert!(seen.iter().all(|&s| s));
        assert_eq!(at, 0, "back at the start");
    }
}
