//! Command-line options of the `lox` binary.
//!
//! ```text
//! lox [OPTIONS] [SCRIPT]
//!   --heap <SIZE>      maximum heap size: bytes, or with a K/M/G/T suffix (64m, 16MB, 1GiB);
//!                      at least 6m unless --gc epsilon; default a quarter of the
//!                      machine's memory, committed only as needed
//!   --gc <MODE>        concurrent | stw | epsilon | generational (default concurrent)
//!   --young-size <SIZE>
//!                      --gc generational's young generation: a minor once the program
//!                      allocated this much (default 8m, a quarter of a heap under 32m)
//!   --gc-log           print the runtime's collector log
//!   --gc-stats         print a pause summary and the heap's footprint on exit
//!   --verify           run the collector's heap verifier in every pause (slow; for tests)
//!   --gc-stress        start collection cycles back to back (for tests)
//!   --pacing <on|off>  slow the program a little while a cycle runs, instead of stalling it
//!                      when the heap fills (default on; concurrent and generational modes)
//!   --pacing-floor <SHARE>
//!                      the least share of every 10 ms pacing leaves the program unless
//!                      free memory is about to run out (default 0.5; 0 for no floor)
//!   --huge-pages <off|transparent|hugetlb>
//!                      the heap's pages: 4 KiB (default), shmem transparent huge pages or the
//!                      hugetlb pool; refused with what to set if the system does not allow it
//!   --compile-only     compile the script, report compile errors, run nothing
//!   --disassemble      print the bytecode of every function before running
//! ```
//!
//! Exit statuses follow clox (and BSD `sysexits.h`): 0 success, 64 bad usage, 65 compile error,
//! 70 runtime error, 74 unreadable script.

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::Parser;
use gc_runtime::Mode;
use std::path::PathBuf;

/// Exit status: success.
pub const EXIT_OK: u8 = 0;
/// Exit status: bad command line (`EX_USAGE`).
pub const EXIT_USAGE: u8 = 64;
/// Exit status: compile error (`EX_DATAERR`).
pub const EXIT_COMPILE_ERROR: u8 = 65;
/// Exit status: runtime error (`EX_SOFTWARE`).
pub const EXIT_RUNTIME_ERROR: u8 = 70;
/// Exit status: the script could not be read (`EX_IOERR`).
pub const EXIT_IO_ERROR: u8 = 74;

/// Parsed command line.
#[derive(Clone, Debug, PartialEq, Parser)]
#[command(
    name = "lox",
    version,
    about = "Run a Lox script (or start a REPL) on the ZGC-style collector"
)]
pub struct Options {
    /// The script to run; without one, lox starts a REPL.
    pub script: Option<PathBuf>,
    /// Maximum heap size: bytes, or a number with a k, m, g or t suffix (e.g. 64m, 16MB);
    /// rounded up to a multiple of 2m; at least 6m unless --gc epsilon. A hard limit: a
    /// program that needs more ends with "Out of memory.".
    /// Default: a quarter of the machine's memory (the JVM's default maximum heap); the heap
    /// commits memory only as the program needs it, cycles once it doubles what the last cycle
    /// left (16m at least), and gives back memory unused for 5 minutes.
    #[arg(long, value_name = "SIZE", value_parser = parse_heap_size)]
    pub heap: Option<u64>,
    /// Collector mode: concurrent (mark and relocation run beside the program, with short
    /// pauses), stw (every phase in one pause), epsilon (never collect) or generational
    /// (concurrent, plus a store barrier and minor cycles of the young objects only, each
    /// started when the program has allocated 8m since the last cycle: a quarter of a heap
    /// under 32m).
    #[arg(long, value_name = "MODE", default_value = "concurrent", value_parser = mode_parser())]
    pub gc: Mode,
    /// The young generation of --gc generational: a minor cycle starts once the program has
    /// allocated this much since the last cycle started. A size like --heap's, at least 2m
    /// (one small page) and at most half the heap; only with --gc generational. Default: 8m
    /// (half the heap target's 16m floor), a quarter of a heap under 32m.
    #[arg(long, value_name = "SIZE", value_parser = parse_young_size)]
    pub young_size: Option<u64>,
    /// Print the runtime's collector log.
    #[arg(long)]
    pub gc_log: bool,
    /// Print a pause summary (count, p50, p99, max, cycles) on exit.
    #[arg(long)]
    pub gc_stats: bool,
    /// Run the collector's heap verifier in every pause and poison freed memory (slow; for
    /// tests).
    #[arg(long)]
    pub verify: bool,
    /// Start collection cycles back to back (the runtime's "continuous" director rule), so
    /// that even a program that allocates little is collected while it runs (for tests).
    #[arg(long)]
    pub gc_stress: bool,
    /// Mutator pacing in concurrent mode: on (while a cycle runs, short delays at page
    /// allocations keep the program from filling the heap before the cycle ends) or off (it
    /// runs into a full heap and stalls until memory is freed). Generational mode paces too;
    /// no effect with stw or epsilon.
    #[arg(long, value_name = "on|off", default_value = "on", value_parser = parse_on_off,
          action = clap::ArgAction::Set)]
    pub pacing: bool,
    /// The pacer's floor: pacing holds the program no more than 1 − SHARE of any 10 ms, so
    /// it keeps at least SHARE of every 10 ms (pauses and stalls aside); 0 for no floor. The
    /// floor yields only when free memory, at the program's pace in the running cycle,
    /// would run out before the cycle ends: it is then held longer (each delay still at most
    /// 1 ms) rather than stalled until the cycle frees memory. [default: 0.5, or
    /// ZRS_PACING_MIN_MUTATOR_SHARE]
    #[arg(long, value_name = "SHARE", value_parser = parse_pacing_floor)]
    pub pacing_floor: Option<f64>,
    /// The heap's pages: off (4 KiB pages, works everywhere), transparent (shmem transparent
    /// huge pages: needs /sys/kernel/mm/transparent_hugepage/shmem_enabled set to advise, the
    /// kernel falls back to 4 KiB pages where it has no 2 MiB free) or hugetlb (2 MiB pages
    /// from the kernel's reserved pool: needs vm.nr_hugepages of at least the heap in 2 MiB
    /// pages, so give a --heap). When the system does not allow it, lox says what to set and
    /// runs nothing. --gc-stats shows how much of the heap got huge pages. Default: the
    /// ZRS_HUGE_PAGES environment variable, else off.
    #[arg(long, value_name = "off|transparent|hugetlb", value_parser = huge_pages_parser())]
    pub huge_pages: Option<gc_runtime::HugePages>,
    /// Only compile the script: print compile errors and exit 65, or exit 0.
    #[arg(long)]
    pub compile_only: bool,
    /// Print the bytecode of every function (innermost first) after compiling.
    #[arg(long)]
    pub disassemble: bool,
}

/// The `--gc` parser: one of the mode names (listed in `--help`).
fn mode_parser() -> impl TypedValueParser<Value = Mode> {
    PossibleValuesParser::new(Mode::ALL.map(Mode::name))
        .map(|s| s.parse::<Mode>().expect("a possible value is a mode name"))
}

/// The `--huge-pages` parser: one of the setting names (listed in `--help`).
fn huge_pages_parser() -> impl TypedValueParser<Value = gc_runtime::HugePages> {
    PossibleValuesParser::new(gc_runtime::HugePages::ALL.map(gc_runtime::HugePages::name)).map(
        |s| {
            s.parse::<gc_runtime::HugePages>()
                .expect("a possible value is a setting name")
        },
    )
}

/// The smallest default heap (`--heap`), on a machine with less than 256m of memory.
pub const MIN_DEFAULT_HEAP: u64 = 64 << 20;

/// The default heap size (`--heap`): a quarter of physical memory, as the JVM's default
/// maximum heap (1g if the machine's memory cannot be read), but no more than
/// `vm.max_map_count` leaves room for (a big machine with the default limit), and at least
/// [`MIN_DEFAULT_HEAP`].
pub fn default_heap() -> u64 {
    let quarter = gc_runtime::physical_memory_bytes().map_or(1 << 30, |m| m / 4);
    let mappable = gc_runtime::heap_limit_for_map_count().unwrap_or(u64::MAX);
    quarter.min(mappable).max(MIN_DEFAULT_HEAP)
}

/// When the collector runs: once the heap doubles what the last cycle left, 16m at least. With
/// a large maximum heap this is what keeps a small program's footprint small.
pub const HEAP_TARGET: gc_runtime::HeapTarget = gc_runtime::HeapTarget {
    min_bytes: 16 << 20,
    growth_percent: 100,
};

/// At most this many GC worker threads (the runtime's default is half the cores).
pub const MAX_GC_THREADS: usize = 2;

/// The heap's granule: heap sizes are rounded up to a multiple of it.
pub const HEAP_GRANULE: u64 = 2 << 20;

/// The smallest heap a collecting mode (`concurrent`, `stw`) can run in: the runtime's
/// `gc_runtime::MIN_COLLECTED_HEAP`, three 2m pages. The runtime keeps a relocation reserve
/// from the program (an eighth of the heap, but at least one small page), and the program
/// needs two pages besides: the one a cycle leaves its surviving objects on, and one to
/// allocate in once that cycle retired the page it was using. In a 4m heap the program had
/// one page and failed at random with "the heap is too small to start" or "Out of memory.";
/// `Heap::new` now refuses such a heap, and lox refuses it earlier, as a usage error naming
/// the option. `epsilon` never collects and keeps no reserve: any heap that holds the program
/// does.
pub const MIN_COLLECTED_HEAP: u64 = gc_runtime::MIN_COLLECTED_HEAP;

impl Options {
    /// The heap size to use: `--heap` rounded up to a granule, or [`default_heap`] rounded
    /// down to one.
    pub fn heap_size(&self) -> u64 {
        match self.heap {
            Some(h) => h.div_ceil(HEAP_GRANULE).saturating_mul(HEAP_GRANULE),
            None => default_heap() / HEAP_GRANULE * HEAP_GRANULE,
        }
    }

    /// Refuse a heap too small for the collector mode (see [`MIN_COLLECTED_HEAP`]), with a
    /// message naming the minimum, and a `--young-size` that does not fit it or is given
    /// without `--gc generational`.
    pub fn check_heap(&self) -> Result<(), String> {
        let heap = self.heap_size();
        if let Some(young) = self.young_size {
            if self.gc != Mode::Generational {
                return Err(format!(
                    "--young-size is the young generation of --gc generational: add --gc \
                     generational, or drop --young-size (--gc {} has no minor cycles)",
                    self.gc
                ));
            }
            let lo = gc_runtime::GenerationalConfig::MIN_YOUNG_SIZE;
            if !(lo..=heap / 2).contains(&young) {
                return Err(format!(
                    "--young-size {}k does not fit a {}m heap: give between {}m (one small \
                     page) and half the heap ({}k)",
                    young >> 10,
                    heap >> 20,
                    lo >> 20,
                    (heap / 2) >> 10
                ));
            }
        }
        if self.gc != Mode::Epsilon && heap < MIN_COLLECTED_HEAP {
            return Err(format!(
                "--heap {}m is too small for --gc {}: a collected heap needs at least {}m (or use \
                 --gc epsilon, which never collects)",
                heap >> 20,
                self.gc,
                MIN_COLLECTED_HEAP >> 20
            ));
        }
        Ok(())
    }

    /// The collector configuration the options ask for, over the environment's overrides
    /// (`ZRS_GC_LOG`, `ZRS_GC_THREADS`, the pacing variables, `ZRS_HUGE_PAGES`:
    /// `HeapConfig::from_env`); `--huge-pages` overrides `ZRS_HUGE_PAGES`.
    ///
    /// # Errors
    /// A malformed environment variable, named in the error.
    /// The young generation of a `generational` heap of `heap` bytes: half the heap target's
    /// floor (8m), so that minors come before the heap target's majors on a program whose
    /// garbage dies young; a quarter of a smaller heap, at least 2m (the runtime's default, a
    /// quarter of the heap up to 64m, would never fill before the heap target starts a major
    /// on Lox's default maximum heap).
    pub fn young_size(heap: u64) -> u64 {
        (heap / 4).clamp(2 << 20, HEAP_TARGET.min_bytes / 2)
    }

    pub fn heap_config(&self) -> Result<gc_runtime::HeapConfig, gc_runtime::EnvError> {
        let mut config = gc_runtime::HeapConfig::from_env(self.heap_size())?
            .mode(self.gc)
            .verify(self.verify)
            .continuous(self.gc_stress)
            .pacing(self.pacing)
            .heap_target(Some(HEAP_TARGET));
        if let Some(h) = self.huge_pages {
            config = config.huge_pages(h);
        }
        if self.gc == Mode::Generational {
            let young = self
                .young_size
                .unwrap_or_else(|| Self::young_size(self.heap_size()));
            config = config.young_size(young);
        }
        // One mutator needs few GC workers, and every worker adds a page to the relocation
        // reserve, which would eat a small heap on a many-core machine.
        let threads = config.gc_threads.min(MAX_GC_THREADS);
        config = config.gc_threads(threads);
        if let Some(share) = self.pacing_floor {
            config.pacing.min_mutator_share = share;
        }
        if self.gc_log {
            config = config.log(gc_runtime::LogLevel::Gc);
        }
        Ok(config)
    }
}

/// The `--gc-stats` summary of a run: pauses (count, p50, p99, max, and the longest time to
/// safepoint: how long the slowest stop waited for the program to reach a poll), cycles,
/// stalls, allocation and the CPU time of the collector's own threads (`GcStats::gc_cpu_ns`:
/// driver and GC workers, not the barriers' work on the program's thread), one line, e.g.
/// `gc-stats: 12 cycles, 36 pauses (p50 0.041 ms, p99 0.180 ms, max 0.200 ms, max ttsp 0.150 ms), 0 stalls, 3 pacing delays, 250.0 MiB allocated, GC CPU 41.2 ms`.
pub fn gc_summary(stats: &gc_runtime::GcStats) -> String {
    // The heap's totals cover the whole run however long it was (its records keep only the
    // most recent events); percentiles are the histograms', to three significant digits.
    let t = &stats.totals;
    let pauses = t.pauses.summary();
    let ms = |ns: u64| ns as f64 / 1e6;
    format!(
        "gc-stats: {} cycles, {} pauses (p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms, max ttsp {:.3} \
         ms), {} stalls, {} pacing delays, {:.1} MiB allocated, GC CPU {:.1} ms",
        t.cycles,
        pauses.count,
        ms(pauses.p50_ns),
        ms(pauses.p99_ns),
        ms(pauses.max_ns),
        ms(t.time_to_safepoint.summary().max_ns),
        t.stalls.len(),
        t.pacing.len(),
        stats.allocated_bytes as f64 / (1 << 20) as f64,
        ms(stats.gc_cpu_ns),
    )
}

/// Parses `on` or `off` (also `true`/`false`, `yes`/`no`, `1`/`0`).
pub fn parse_on_off(text: &str) -> Result<bool, String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" => Ok(true),
        "off" | "false" | "no" | "0" => Ok(false),
        _ => Err(format!("invalid switch '{text}' (expected on or off)")),
    }
}

/// Parses `--pacing-floor`: a share of at least 0 and below 1.
pub fn parse_pacing_floor(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(f) if (0.0..1.0).contains(&f) => Ok(f),
        _ => Err(format!(
            "invalid share '{text}' (expected at least 0 and below 1, e.g. 0.5; 0 for no floor)"
        )),
    }
}

/// Parses `--young-size`: a size as `--heap` takes it, more than 0 bytes (whether it fits the
/// heap is `Options::check_heap`'s question).
pub fn parse_young_size(text: &str) -> Result<u64, String> {
    match gc_runtime::parse_size(text)? {
        0 => Err(
            "a young generation of 0 bytes would start a minor for every allocation: \
                  give at least 2m (one small page)"
                .to_string(),
        ),
        size => Ok(size),
    }
}

/// Parses `--heap`: the workspace's one size grammar, [`gc_runtime::parse_size`] (bytes with
/// an optional K, M, G or T and an optional B or iB, any case: `65536`, `512k`, `64m`, `16MB`,
/// `1GiB`, `2T`), and more than 0 bytes.
pub fn parse_heap_size(text: &str) -> Result<u64, String> {
    match gc_runtime::parse_size(text)? {
        0 => Err("heap size must be positive".to_string()),
        size => Ok(size),
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn the_young_generation_is_half_the_heap_targets_floor_or_a_quarter_of_a_small_heap() {
        const M: u64 = 1 << 20;
        for (heap, young) in [
            (6 * M, 2 * M),
            (16 * M, 4 * M),
            (64 * M, 8 * M),
            (6 << 30, 8 * M),
        ] {
            assert_eq!(Options::young_size(heap), young, "{heap}");
            gc_runtime::HeapConfig::new(heap)
                .mode(Mode::Generational)
                .young_size(young)
                .validate()
                .unwrap();
        }
    }
    use super::*;

    /// lox's own check and the runtime's agree: the smallest heap `check_heap` accepts for a
    /// collecting mode is one `Heap::new` creates from lox's configuration, and one granule
    /// less is refused by both, the runtime naming the same minimum.
    #[test]
    fn the_heap_check_agrees_with_the_runtime() {
        for gc in ["concurrent", "stw"] {
            let min = format!("{}m", MIN_COLLECTED_HEAP >> 20);
            let below = format!("{}m", (MIN_COLLECTED_HEAP - HEAP_GRANULE) >> 20);
            let o = Options::try_parse_from(["lox", "--gc", gc, "--heap", &min]).unwrap();
            o.check_heap().unwrap();
            gc_runtime::Heap::new(o.heap_config().unwrap()).unwrap();
            let o = Options::try_parse_from(["lox", "--gc", gc, "--heap", &below]).unwrap();
            let lox_says = o.check_heap().unwrap_err();
            let Err(runtime_says) = gc_runtime::Heap::new(o.heap_config().unwrap()) else {
                panic!("the runtime accepted a {below} {gc} heap");
            };
            let runtime_says = runtime_says.to_string();
            assert!(lox_says.contains(&format!("at least {min}")), "{lox_says}");
            assert!(
                runtime_says.contains(&format!("at least {}", min.to_uppercase())),
                "{runtime_says}"
            );
        }
    }

    /// `--young-size` reaches a generational heap's configuration; 0, a malformed size, one
    /// that does not fit the heap and one without `--gc generational` are refused, saying
    /// what to give; the runtime accepts what lox accepts.
    #[test]
    fn young_size_is_checked_against_the_heap_and_the_mode() {
        let opts = |args: &[&str]| {
            Options::try_parse_from(std::iter::once("lox").chain(args.iter().copied()))
        };
        let o = opts(&[
            "--gc",
            "generational",
            "--heap",
            "64m",
            "--young-size",
            "32m",
        ])
        .unwrap();
        o.check_heap().unwrap();
        let config = o.heap_config().unwrap();
        assert_eq!(config.young_size_bytes(), 32 << 20);
        gc_runtime::Heap::new(config).unwrap();
        let default = opts(&["--gc", "generational", "--heap", "64m"]).unwrap();
        assert_eq!(default.heap_config().unwrap().young_size_bytes(), 8 << 20);
        let e = opts(&[
            "--gc",
            "generational",
            "--heap",
            "64m",
            "--young-size",
            "33m",
        ])
        .unwrap()
        .check_heap()
        .unwrap_err();
        assert!(
            e.contains("does not fit a 64m heap")
                && e.contains("between 2m")
                && e.contains("32768k"),
            "{e}"
        );
        let e = opts(&["--gc", "generational", "--young-size", "1m"])
            .unwrap()
            .check_heap()
            .unwrap_err();
        assert!(e.contains("between 2m"), "{e}");
        let e = opts(&["--young-size", "8m"])
            .unwrap()
            .check_heap()
            .unwrap_err();
        assert!(e.contains("add --gc generational"), "{e}");
        for (bad, says) in [
            ("0", "at least 2m"),
            ("lots", "not a size"),
            ("1x", "unknown"),
        ] {
            let e = opts(&["--gc", "generational", "--young-size", bad]).unwrap_err();
            assert!(e.to_string().contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn heap_sizes() {
        assert_eq!(parse_heap_size("65536"), Ok(65536));
        assert_eq!(parse_heap_size("512k"), Ok(512 << 10));
        assert_eq!(parse_heap_size("64m"), Ok(64 << 20));
        assert_eq!(parse_heap_size("64M"), Ok(64 << 20));
        assert_eq!(parse_heap_size("16MB"), Ok(16 << 20));
        assert_eq!(parse_heap_size("1g"), Ok(1 << 30));
        assert_eq!(parse_heap_size("1GiB"), Ok(1 << 30));
        assert_eq!(parse_heap_size("2T"), Ok(2 << 40));
        assert!(parse_heap_size("").is_err());
        assert!(parse_heap_size("m").is_err());
        assert!(parse_heap_size("0").is_err());
        assert!(parse_heap_size("-1m").is_err());
        assert!(parse_heap_size("1.5m").is_err());
        assert!(parse_heap_size("12x").is_err());
        assert!(parse_heap_size("99999999999999999999g").is_err());
    }

    #[test]
    fn options() {
        let o = Options::try_parse_from(["lox"]).unwrap();
        assert_eq!(o.script, None);
        assert_eq!(o.gc, Mode::Concurrent);
        assert_eq!(o.heap, None);
        let o = Options::try_parse_from([
            "lox",
            "--gc",
            "stw",
            "--heap",
            "16m",
            "--gc-stats",
            "--compile-only",
            "a.lox",
        ])
        .unwrap();
        assert_eq!(o.script, Some(PathBuf::from("a.lox")));
        assert_eq!(o.gc, Mode::Stw);
        assert_eq!(o.heap, Some(16 << 20));
        assert!(o.gc_stats && o.compile_only && !o.gc_log && !o.disassemble && !o.verify);
        assert_eq!(o.heap_size(), 16 << 20);
        let o = Options::try_parse_from(["lox", "--heap", "3m", "--verify"]).unwrap();
        assert_eq!(o.heap_size(), 4 << 20);
        assert!(o.verify && o.heap_config().unwrap().verify);
        let default = Options::try_parse_from(["lox"]).unwrap().heap_size();
        assert!(default >= MIN_DEFAULT_HEAP && default.is_multiple_of(HEAP_GRANULE));
        if let Some(m) = gc_runtime::physical_memory_bytes() {
            assert!(default <= (m / 4).max(MIN_DEFAULT_HEAP));
        }
        if let Some(l) = gc_runtime::heap_limit_for_map_count() {
            assert!(default <= l.max(MIN_DEFAULT_HEAP));
        }
        assert!(Options::try_parse_from(["lox", "--gc", "bogus"]).is_err());
        assert!(Options::try_parse_from(["lox", "a.lox", "b.lox"]).is_err());
        assert!(Options::try_parse_from(["lox", "--heap", "lots"]).is_err());
    }

    #[test]
    fn pacing_switch() {
        let o = Options::try_parse_from(["lox"]).unwrap();
        assert!(o.pacing && o.heap_config().unwrap().pacing.enabled);
        let o = Options::try_parse_from(["lox", "--pacing", "off"]).unwrap();
        assert!(!o.pacing && !o.heap_config().unwrap().pacing.enabled);
        let e = Options::try_parse_from(["lox", "--pacing", "maybe"]).unwrap_err();
        assert!(e.to_string().contains("expected on or off"), "{e}");
        let o = Options::try_parse_from(["lox", "--pacing-floor", "0.25"]).unwrap();
        assert_eq!(o.heap_config().unwrap().pacing.min_mutator_share, 0.25);
        let defaults = gc_runtime::PacingConfig::default();
        let o = Options::try_parse_from(["lox"]).unwrap();
        assert_eq!(
            o.heap_config().unwrap().pacing.min_mutator_share,
            defaults.min_mutator_share
        );
        for bad in ["1", "1.5", "half"] {
            let e = Options::try_parse_from(["lox", "--pacing-floor", bad]).unwrap_err();
            assert!(e.to_string().contains("below 1"), "{e}");
        }
    }

    #[test]
    fn huge_pages_option_reaches_the_heap_config() {
        use gc_runtime::HugePages;
        for h in HugePages::ALL {
            let o = Options::try_parse_from(["lox", "--huge-pages", h.name()]).unwrap();
            assert_eq!(o.heap_config().unwrap().memory.huge_pages, h);
        }
        let e = Options::try_parse_from(["lox", "--huge-pages", "thp"]).unwrap_err();
        assert!(e.to_string().contains("transparent"), "{e}");
    }
}
