//! The `pause-sweep` command line (clap derive): the default command runs the sweep of one
//! workload over heap sizes and modes; a subcommand per workload runs it alone (with the
//! workload's own options); `report` renders the outputs again from a `results.json`.
//!
//! Parsing validates everything that can be checked without a heap: sizes (with `gc-core`'s
//! own heap-geometry check), modes, workloads, durations, fractions. A [`RunConfig`] built from
//! these arguments is ready for [`crate::runner::run_workload`].

use crate::arg_parsers::{
    check_young_size, huge_pages_parser, mode_parser, parse_fraction, parse_heap, parse_on_off,
    parse_pacing_floor, parse_pacing_window, parse_seconds, parse_young_evacuation_live_percent,
    parse_young_size,
};
use crate::buffer_kind::BufferKind;
use crate::jvm::JvmCollector;
use crate::run_result::{Mode, RunConfig};
use crate::workloads::{WorkloadKind, WorkloadParams};
use clap::error::ErrorKind;
use clap::{Arg, ArgAction, ArgMatches, Args, FromArgMatches, Parser, Subcommand};
use std::path::PathBuf;

const OUTPUTS: &str = "\
Outputs (in --out, default results/<UTC timestamp>/):
  table.md            the markdown tables printed at the end, one row per mode and heap:
                      complete GC cycles, pause count and p50/p99/max, the longest mutator wait
                      of any kind (pause, allocation stall, pacing delay or a page allocation
                      of 1 ms or more) and the total wait of the most-delayed thread; the
                      longest wait and MMU at 10 ms as felt / collector-imposed (a pacing
                      delay as held or as asked for) beside the control meter's max; stalls
                      and pacing delays (count, total, longest), slow page allocations and
                      throughput; MMU at 1/10/100 ms, hiccup p99/p99.9/max and
                      the control meter's max (what a thread outside the heap felt); then concurrent ÷ stw
                      ratios per heap. † marks a row with fewer than 3
                      complete GC cycles (see --min-cycles)
  results.json        every run: configuration, all pauses, cycles, stalls and pacing delays,
                      hiccup, control-meter and latency histograms (percentiles + HdrHistogram
                      encoding),
                      memory, plus each run's derived summary (longest wait, total wait per
                      thread, MMU at 1/10/100 ms felt and imposed, the too-few-cycles
                      warning, ...)
  pause-vs-heap.svg   max pause, max mutator wait (felt and imposed), p99 pause and the
                      control meter's max against heap size, log scales, per mode
  mmu-vs-heap.svg     MMU at 10 ms, felt and collector-imposed, against heap size, per mode
  pause-timeline.svg  every pause, allocation stall, pacing delay and slow page allocation of
                      every run over time, one panel per run
  memory-N-<run>.svg  per run N (1, 2, ... in results.json order): committed heap, direct
                      and pooled buffer bytes, RSS and Pss over the measured phase, sampled
                      every 100 ms (the samples are each run's `memory` in results.json)
  gc-<run>.log        per JVM run (--jvm), its GC log (-Xlog:gc*,safepoint), e.g.
                      gc-JDK-17-ZGC-256M.log
  trace.json          Chrome Trace Event file, opens in Perfetto (ui.perfetto.dev): GC cycles,
                      phases, pauses, allocation stalls, pacing delays and slow page
                      allocations as tracks, one process per run

Exit status: 0 on success, 2 when a run or the arguments fail, 1 when an output cannot be
written.";

/// Measure how GC pauses scale with heap size, concurrent vs stop-the-world.
#[derive(Parser, Debug, Clone)]
#[command(
    name = "pause-sweep",
    version,
    about = "Measure how GC pauses scale with heap size: concurrent (ZGC-style) vs stop-the-world",
    long_about = "Measure how GC pauses scale with heap size: concurrent (ZGC-style) vs \
stop-the-world.

Without a subcommand, runs the sweep: one workload (default heap-churn) at every heap size of \
--heaps in every mode of --modes, same seed and parameters for all, each run for --duration \
seconds after its live set is built. Runs of one heap size follow each other (concurrent, then \
stw), so machine noise hits both alike. Every run records each pause (time to safepoint \
included), allocation stalls, pacing delays and slow page allocations (the mutator waits), a \
1 ms hiccup meter with \
coordinated-omission correction, a control meter (the same 1 ms sleep on a thread outside the \
heap: what any thread felt in that run, the machine's noise), MMU, throughput and GC cycles. A sweep's run goes on past \
--duration until its measured window holds 3 complete GC cycles (--min-cycles, at most 4× \
--duration); a row that still has fewer is flagged.

The defaults (heap-churn at 256M, 1G and 4G, concurrent and stw, live set 50%, one mutator \
thread, 20 s per run, longer where a run needs it to hold 3 complete cycles) finish in a \
few minutes on a 2-core machine.

With a workload subcommand, runs that workload once with its own options and writes the same \
outputs for that single run. `report` renders the outputs again from a results.json.

--buffers heap,direct,pooled (buffer-echo and message-engine) runs each buffer kind at every \
heap and mode, side by side in the tables (a buffers column) and plots.

Side by side with HotSpot: --jvm ZGC,G1 (and --java PATH to pick the JDK) also runs the Java \
twin of heap-churn or binary-trees (workloads/java/, compiled with that JDK's javac) under \
those collectors at every heap, and puts its rows, read from the JVM's GC log, into the same \
tables, results.json and plots. A JVM pause is a safepoint, time to safepoint included; ZGC's \
allocation and relocation stalls are its stalls; a collection (GC(n) of the log) is a cycle; \
the hiccup and control meters run as in this project's runs. e.g. \
`cargo run --release -- --jvm ZGC,G1 --heaps 256M,1G`.

Memory: `pause-sweep memory` runs a short workload (buffer-echo with pooled buffers on a 256M \
heap for 3 s unless told otherwise) and prints the memory report: like jcmd VM.native_memory \
summary, it explains the process's RSS and Pss — the heap (reserved, committed, used), GC \
metadata, direct buffers and native pools, malloc, thread stacks, mapped files, every \
smaps_rollup field and /proc/self/smaps per category, and the part nothing explains. \
--memory-report on any run prints the same report at the end of each run and stores it in \
results.json (memory_report, memory_report_text).",
    after_long_help = OUTPUTS,
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub sweep: SweepArgs,
}

/// What to run instead of the default sweep.
#[derive(Subcommand, Debug, Clone)]
pub enum Command {
    /// One subcommand per workload of the registry ([`crate::workloads`]): run it alone with
    /// its own options.
    #[command(flatten)]
    Workload(WorkloadCommand),
    /// Run a short workload (default: buffer-echo, pooled buffers, 256M heap, 3 s) and print
    /// the memory report that explains RSS (cf. jcmd VM.native_memory summary).
    Memory(MemoryArgs),
    /// Render table.md, the plots and trace.json again from an existing results.json.
    Report(ReportArgs),
}

/// Options of the default sweep.
#[derive(Args, Debug, Clone)]
pub struct SweepArgs {
    /// Heap sizes to sweep, comma-separated, with K/M/G/T suffixes (binary units); each must
    /// be a multiple of 2M and fit in physical memory.
    #[arg(long, value_name = "SIZES", value_delimiter = ',', value_parser = parse_heap,
          default_value = "256M,1G,4G")]
    pub heaps: Vec<u64>,
    /// Collector modes to run at every heap size, comma-separated: concurrent (ZGC-style),
    /// stw (the whole cycle in one pause, started when the heap is nearly full: the
    /// baseline), epsilon (no collection),
    /// generational (concurrent, with a store barrier and minor young-only cycles started
    /// when a quarter of the heap was allocated since the last cycle).
    #[arg(
        long,
        value_name = "MODES",
        value_delimiter = ',',
        default_value = "concurrent,stw",
        value_parser = mode_parser()
    )]
    pub modes: Vec<Mode>,
    /// The workload to sweep (run with its default options; see its subcommand's --help).
    #[arg(long, value_name = "NAME", default_value = "heap-churn")]
    pub workload: WorkloadKind,
    /// Buffer kinds to run at every heap and mode, comma-separated: heap, direct, pooled
    /// (buffer-echo and message-engine only) [default: the workload's own, heap].
    #[arg(long, value_name = "KINDS", value_delimiter = ',', value_enum)]
    pub buffers: Vec<BufferKind>,
    /// Also run the workload's Java twin (heap-churn and binary-trees have one) under these
    /// HotSpot collectors, comma-separated, after this project's runs of each heap: ZGC
    /// (non-generational, JDK 17–23), GenZGC (generational ZGC, JDK 21 and later), G1,
    /// Parallel, Serial. Same options, live set, threads, seed and duration; -Xms = -Xmx =
    /// the heap, as many GC threads as this project's runs; the GC log
    /// (-Xlog:gc*,safepoint) gives pauses with time to safepoint, allocation stalls and
    /// collections. Rows are labelled with the JDK (`JDK 17 ZGC`), their flags listed under
    /// the tables. Needs a JDK (see --java); without one the sweep stops before it starts,
    /// saying how to get one.
    #[arg(long, value_name = "COLLECTORS", value_delimiter = ',')]
    pub jvm: Vec<JvmCollector>,
    /// The JDK for --jvm: its directory or its bin/java [default: $JAVA_HOME, else java on
    /// PATH]. The twins are compiled with its javac when the sweep starts.
    #[arg(long, value_name = "PATH", requires = "jvm")]
    pub java: Option<PathBuf>,
    #[command(flatten)]
    pub common: CommonArgs,
}

/// The sweep's default `--min-cycles`: a run of the sweep goes on until its window holds as
/// many complete cycles as a row needs not to be flagged (within the extension's limit).
pub const SWEEP_MIN_CYCLES: u32 = crate::min_cycles::WARN_BELOW_CYCLES as u32;

/// Options of every run, for the sweep and for each workload alone.
#[derive(Args, Debug, Clone)]
pub struct CommonArgs {
    /// Seconds each run is measured (after its live set is built); fractions allowed.
    #[arg(long = "duration", value_name = "SECONDS", value_parser = parse_seconds, allow_negative_numbers = true,
          default_value = "20")]
    pub duration_ms: u64,
    /// Extend a run until its measured window holds N complete GC cycles (started and ended
    /// inside it): when --duration is up and cycles are missing, the run goes on in steps of a
    /// quarter of --duration, to at most 4× --duration in all, and stops as soon as it has N.
    /// The table and results.json say how far each run was extended. epsilon runs are never
    /// extended. 0: never extend; a row with fewer than 3 complete cycles is then only
    /// flagged (†) as measuring too little. [default: 3 for the sweep, so that every row of
    /// its table measures something; 0 for a workload run alone, which runs --duration]
    #[arg(long, value_name = "N", allow_negative_numbers = true,
          value_parser = clap::value_parser!(u32).range(0..=1000))]
    pub min_cycles: Option<u32>,
    /// Mutator threads of the workload. Keep it below the number of cores: the hiccup meter
    /// and the GC threads need CPU too.
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub threads: u32,
    /// Random seed of the workload (the same for every run of a sweep).
    #[arg(long, value_name = "N", default_value_t = 42)]
    pub seed: u64,
    /// Live set as a fraction of the heap (0 < f < 1), unless a workload's own size option
    /// (--live-mb, --retention-mb, --depth) is given.
    #[arg(long, value_name = "F", value_parser = parse_fraction, default_value = "0.5",
          allow_negative_numbers = true)]
    pub live_fraction: f64,
    /// Directory for the outputs (created if missing) [default: results/ and the UTC time, e.g.
    /// results/2025-01-31_12-00-00].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// No progress bar and no table on stdout; print only the output directory.
    #[arg(long, short)]
    pub quiet: bool,
    /// Mutator pacing in concurrent mode: on (short delays, every 64 KiB allocated, slow a
    /// mutator that would fill the heap before the cycle ends) or off (it runs into a full
    /// heap and stalls). Generational mode paces too; no effect in stw and epsilon mode.
    #[arg(long, value_name = "on|off", default_value = "on", value_parser = parse_on_off,
          action = clap::ArgAction::Set)]
    pub pacing: bool,
    /// The pacer's floor (minimum mutator utilization): the pacer holds a mutator no more
    /// than 1 − SHARE of any --pacing-window, so that it keeps at least SHARE of every window
    /// (pauses and stalls aside). 0: no floor, only the 1 ms cap per delay. The floor yields
    /// only when free memory, at the mutators' pace in the running cycle, would run out
    /// before the cycle ends: a window at a lower share beats the stall that would follow
    /// (the report's "beyond floor" column counts those delays). [default: 0.5, or
    /// ZRS_PACING_MIN_MUTATOR_SHARE]
    #[arg(long, value_name = "SHARE", value_parser = parse_pacing_floor)]
    pub pacing_floor: Option<f64>,
    /// The window of --pacing-floor, in milliseconds (1 to 1000). [default: 10, or
    /// ZRS_PACING_WINDOW_US]
    #[arg(long, value_name = "MS", value_parser = parse_pacing_window)]
    pub pacing_window: Option<u64>,
    /// Memory the heap commits when it is created, like the JVM's -Xms: a size (at most the
    /// heap), or `max` for the whole heap. With `max` the measured phase does not include the
    /// heap growing into fresh memory, which costs a mutator 1-25 ms per new page on a VM
    /// (recorded as page-alloc waits); `0` lets the heap grow from nothing and shows that.
    #[arg(long, value_name = "SIZE|max", default_value = "max", value_parser = parse_initial_heap)]
    pub initial_heap: InitialHeap,
    /// The heap's pages: off (4 KiB pages: works on every system), transparent (shmem
    /// transparent huge pages: madvise(MADV_HUGEPAGE) on the heap's views; needs
    /// /sys/kernel/mm/transparent_hugepage/shmem_enabled set to advise (or always), and the
    /// kernel falls back to 4 KiB pages where it finds no free 2 MiB) or hugetlb (the heap
    /// from the kernel's pool of reserved 2 MiB pages: needs vm.nr_hugepages of at least the
    /// largest heap in 2 MiB pages, e.g. 2048 for 4G, beyond pages others use). Checked for
    /// every run before the first: when the system does not allow it, the sweep says what to
    /// set and runs nothing. The table and results.json state the pages each run got
    /// ("4 KiB" or "2 MiB (N MiB of the heap on huge pages)"). [default: the ZRS_HUGE_PAGES
    /// environment variable, else off]
    #[arg(long, value_name = "off|transparent|hugetlb", value_parser = huge_pages_parser())]
    pub huge_pages: Option<gc_runtime::HugePages>,
    /// The young generation of `generational` runs: a minor cycle is due once the mutators
    /// allocated this much since the last cycle started (`HeapConfig::young_size`). A size
    /// with a K/M/G suffix, at least 2M (one small page) and at most half of every heap run.
    /// Ignored by the other modes. A young generation larger than the objects' lifetime in
    /// allocated bytes lets them die before a minor looks at them; one smaller than it makes
    /// minors mark live objects only, and the director stops running them. [default: a
    /// quarter of the heap, at most 64M]
    #[arg(long, value_name = "SIZE", value_parser = parse_young_size)]
    pub young_size: Option<u64>,
    /// The live share under which a `generational` run's minor evacuates a young page (copies
    /// its survivors to survivor or old pages and frees it); denser young pages are aged or
    /// promoted in place (`HeapConfig::young_evacuation_live_percent`). A percentage of a
    /// page from 0 (minors evacuate nothing) to 100. Ignored by the other modes. [default:
    /// 25]
    #[arg(long, value_name = "PERCENT", value_parser = parse_young_evacuation_live_percent)]
    pub young_evacuation_live_percent: Option<u8>,
    /// At the end of each run, print the memory report (what RSS is made of: heap, GC
    /// metadata, direct buffers and native pools, malloc, stacks, files, smaps) and store it
    /// in results.json. `pause-sweep memory` runs a short workload just for it.
    #[arg(long)]
    pub memory_report: bool,
}

impl CommonArgs {
    /// Copy the options every run takes into `c`; `min_cycles` is the command's default of
    /// `--min-cycles`.
    fn apply(&self, c: &mut RunConfig, min_cycles: u32) -> Result<(), String> {
        if let Some(young) = self.young_size {
            check_young_size(young, c.heap_bytes)?;
        }
        c.young_size = self.young_size;
        c.young_evacuation_live_percent = self.young_evacuation_live_percent;
        c.threads = self.threads;
        c.seed = self.seed;
        c.min_cycles = self.min_cycles.unwrap_or(min_cycles);
        c.pacing = self.pacing;
        c.pacing_floor = self.pacing_floor;
        c.pacing_window_ms = self.pacing_window;
        c.memory_report = self.memory_report;
        c.huge_pages = self.huge_pages;
        c.initial_heap_bytes = match self.initial_heap {
            InitialHeap::Max => c.heap_bytes,
            InitialHeap::Bytes(b) => b.min(c.heap_bytes),
        };
        Ok(())
    }
}

/// `--initial-heap`: how much the heap commits when it is created.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InitialHeap {
    /// The whole heap (the default).
    Max,
    /// This many bytes (rounded up to the granule), at most the heap.
    Bytes(u64),
}

/// Parse `--initial-heap`: `max` or a size (`0`, `512M`, `2G`, ...).
pub fn parse_initial_heap(s: &str) -> Result<InitialHeap, String> {
    if s.trim().eq_ignore_ascii_case("max") {
        return Ok(InitialHeap::Max);
    }
    gc_core::parse_size(s)
        .map(InitialHeap::Bytes)
        .map_err(|e| format!("{e}; or `max` for the whole heap"))
}

impl SweepArgs {
    /// The runs of the sweep, in order: for each heap (as given), each mode (as given), each
    /// buffer kind (as given). An error when `--buffers` is given to a workload without
    /// buffers.
    pub fn configs(&self) -> Result<Vec<RunConfig>, String> {
        let kinds: Vec<Option<BufferKind>> = if self.buffers.is_empty() {
            vec![None]
        } else {
            self.buffers.iter().copied().map(Some).collect()
        };
        let mut v = Vec::new();
        for &heap in &self.heaps {
            for &mode in &self.modes {
                for &kind in &kinds {
                    let o = &self.common;
                    let live = live_bytes(heap, o.live_fraction);
                    let mut c = RunConfig::new(self.workload, mode, heap, live, o.duration_ms);
                    o.apply(&mut c, SWEEP_MIN_CYCLES)?;
                    if let Some(k) = kind {
                        c.params.set_buffers(k)?;
                    }
                    v.push(c);
                }
            }
        }
        Ok(v)
    }
}

/// Options shared by every single-workload subcommand.
#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// Heap size with a K/M/G/T suffix (a multiple of 2M that fits in physical memory).
    #[arg(long, value_name = "SIZE", value_parser = parse_heap, default_value = "1G")]
    pub heap: u64,
    /// Collector mode: concurrent, stw, epsilon or generational (concurrent with a store
    /// barrier and minor young-only cycles; see the sweep's --modes).
    #[arg(long, value_name = "MODE", default_value = "concurrent", value_parser = mode_parser())]
    pub mode: Mode,
    #[command(flatten)]
    pub common: CommonArgs,
}

impl RunArgs {
    fn config(&self, workload: WorkloadKind, live_mb: Option<u64>) -> Result<RunConfig, String> {
        let live = match live_mb {
            Some(mb) => {
                let bytes = mb
                    .checked_mul(1 << 20)
                    .ok_or_else(|| format!("{mb} MB is too large"))?;
                if bytes == 0 || bytes >= self.heap {
                    return Err(format!(
                        "a live set of {mb} MB does not fit a {} heap: give more than 0 and less \
                         than the heap",
                        gc_core::format_size(self.heap)
                    ));
                }
                bytes
            }
            None => live_bytes(self.heap, self.common.live_fraction),
        };
        let o = &self.common;
        let mut c = RunConfig::new(workload, self.mode, self.heap, live, o.duration_ms);
        o.apply(&mut c, 0)?;
        Ok(c)
    }
}

/// A workload's subcommand as parsed: the options every run takes, the workload's live-set
/// option (`--live-mb`, `--retention-mb`) and its own options. clap builds one subcommand per
/// registered workload from the [`Workload`](crate::Workload) items (help, options, live-set
/// option), in registry order, each with the outputs in its long help.
#[derive(Debug, Clone)]
pub struct WorkloadCommand {
    pub run: RunArgs,
    /// The live set in MiB, for a workload with a live-set option.
    pub live_mb: Option<u64>,
    /// The workload's own options; they say which workload it is.
    pub params: WorkloadParams,
}

/// The id of the live-set option in a workload subcommand's matches.
const LIVE_MB: &str = "live_mb";

impl WorkloadCommand {
    /// The run this subcommand asks for (validated).
    pub fn run_config(&self) -> Result<RunConfig, String> {
        self.params.validate()?;
        let mut c = self.run.config(self.params.workload(), self.live_mb)?;
        c.params = self.params.clone();
        Ok(c)
    }

    /// The subcommand of workload `w`.
    fn command(w: WorkloadKind) -> clap::Command {
        let mut cmd = RunArgs::augment_args(clap::Command::new(w.name()));
        if let Some(live) = w.live_option() {
            cmd = cmd.arg(
                Arg::new(LIVE_MB)
                    .long(live.long)
                    .value_name("MB")
                    .value_parser(clap::value_parser!(u64))
                    .action(ArgAction::Set)
                    .help(live.help),
            );
        }
        // After the options: clap's derived `augment_args` sets the about of the command it is
        // given from the options struct's own doc comment.
        w.augment_args(cmd)
            .about(w.about())
            .long_about(None)
            .after_long_help(OUTPUTS)
    }
}

impl Subcommand for WorkloadCommand {
    fn augment_subcommands(cmd: clap::Command) -> clap::Command {
        WorkloadKind::ALL
            .iter()
            .fold(cmd, |cmd, &w| cmd.subcommand(Self::command(w)))
    }

    fn augment_subcommands_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_subcommands(cmd)
    }

    fn has_subcommand(name: &str) -> bool {
        name.parse::<WorkloadKind>().is_ok()
    }
}

impl FromArgMatches for WorkloadCommand {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let Some((name, sub)) = matches.subcommand() else {
            return Err(clap::Error::raw(
                ErrorKind::MissingSubcommand,
                "a workload subcommand is required",
            ));
        };
        let w: WorkloadKind = name
            .parse()
            .map_err(|e| clap::Error::raw(ErrorKind::InvalidSubcommand, e))?;
        Ok(WorkloadCommand {
            run: RunArgs::from_arg_matches(sub)?,
            live_mb: if w.live_option().is_some() {
                sub.get_one::<u64>(LIVE_MB).copied()
            } else {
                None
            },
            params: WorkloadParams::from_arg_matches(w, sub)?,
        })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

/// `memory` options: a short run, then the memory report.
#[derive(Args, Debug, Clone)]
pub struct MemoryArgs {
    /// The workload to run (with its default options).
    #[arg(long, value_name = "NAME", default_value = "buffer-echo")]
    pub workload: WorkloadKind,
    /// Buffer kind (buffer-echo and message-engine) [default: pooled for those].
    #[arg(long, value_name = "KIND", value_enum)]
    pub buffers: Option<BufferKind>,
    /// Heap size with a K/M/G/T suffix.
    #[arg(long, value_name = "SIZE", value_parser = parse_heap, default_value = "256M")]
    pub heap: u64,
    /// Collector mode: concurrent, stw, epsilon or generational (concurrent with a store
    /// barrier and minor young-only cycles; see the sweep's --modes).
    #[arg(long, value_name = "MODE", default_value = "concurrent", value_parser = mode_parser())]
    pub mode: Mode,
    /// Seconds to run before the report is taken; fractions allowed.
    #[arg(long = "duration", value_name = "SECONDS", value_parser = parse_seconds,
          allow_negative_numbers = true, default_value = "3")]
    pub duration_ms: u64,
    /// Mutator threads of the workload.
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub threads: u32,
    /// Live set as a fraction of the heap (0 < f < 1).
    #[arg(long, value_name = "F", value_parser = parse_fraction, default_value = "0.5",
          allow_negative_numbers = true)]
    pub live_fraction: f64,
    /// Random seed of the workload.
    #[arg(long, value_name = "N", default_value_t = 42)]
    pub seed: u64,
    /// Print the report as JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Also write the run's usual outputs (results.json with the report, table, plots) here.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

impl MemoryArgs {
    /// The run whose end the report describes.
    pub fn config(&self) -> Result<RunConfig, String> {
        let live = live_bytes(self.heap, self.live_fraction);
        let mut c = RunConfig::new(self.workload, self.mode, self.heap, live, self.duration_ms);
        c.threads = self.threads;
        c.seed = self.seed;
        c.memory_report = true;
        match self.buffers {
            Some(k) => c.params.set_buffers(k)?,
            None if self.workload.takes_buffers() => c.params.set_buffers(BufferKind::Pooled)?,
            None => {}
        }
        Ok(c)
    }
}

/// `report` options.
#[derive(Args, Debug, Clone)]
pub struct ReportArgs {
    /// The results.json of an earlier run.
    #[arg(value_name = "RESULTS_JSON")]
    pub results: PathBuf,
    /// Where to write the outputs [default: the directory of RESULTS_JSON].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Do not print the table.
    #[arg(long, short)]
    pub quiet: bool,
}

impl Command {
    /// The run of a workload subcommand (validated), or `None` for `report`.
    pub fn run_config(&self) -> Option<Result<RunConfig, String>> {
        match self {
            Command::Workload(w) => Some(w.run_config()),
            Command::Memory(a) => Some(a.config()),
            Command::Report(_) => None,
        }
    }

    /// The shared run options of a workload subcommand.
    pub fn run_args(&self) -> Option<&RunArgs> {
        match self {
            Command::Workload(w) => Some(&w.run),
            Command::Memory(_) | Command::Report(_) => None,
        }
    }
}

/// `heap × fraction`, at least 1 byte.
fn live_bytes(heap: u64, fraction: f64) -> u64 {
    ((heap as f64 * fraction) as u64).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A workload option as results.json records it.
    fn param(c: &RunConfig, key: &str) -> serde_json::Value {
        serde_json::to_value(&c.params).unwrap()[key].clone()
    }
    use clap::CommandFactory;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("pause-sweep").chain(args.iter().copied()))
    }

    /// The run configuration of a workload subcommand's arguments (which must parse).
    fn workload_config(args: &[&str]) -> Result<RunConfig, String> {
        parse(args)
            .unwrap()
            .command
            .expect("a workload subcommand")
            .run_config()
            .expect("a workload run")
    }

    #[test]
    fn initial_heap_is_a_size_or_max_and_at_most_the_heap() {
        let configs = |arg: &str| {
            parse(&["--heaps", "256M,1G", "--initial-heap", arg])
                .unwrap()
                .sweep
                .configs()
                .unwrap()
                .iter()
                .map(|c| c.initial_heap_bytes)
                .collect::<Vec<u64>>()
        };
        // Each heap in both modes: 256M, 256M, 1G, 1G.
        assert_eq!(configs("max"), [256 << 20, 256 << 20, 1 << 30, 1 << 30]);
        assert_eq!(configs("0"), [0, 0, 0, 0]);
        assert_eq!(
            configs("512M"),
            [256 << 20, 256 << 20, 512 << 20, 512 << 20]
        );
        let e = parse(&["--initial-heap", "lots"]).unwrap_err().to_string();
        assert!(e.contains("max"), "{e}");
    }

    #[test]
    fn definitions_are_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn defaults_are_the_issue_sweep() {
        let cli = parse(&[]).unwrap();
        assert!(cli.command.is_none());
        let s = &cli.sweep;
        assert_eq!(s.heaps, vec![256 << 20, 1 << 30, 4 << 30]);
        assert_eq!(s.modes, vec![Mode::Concurrent, Mode::Stw]);
        assert_eq!(s.workload, WorkloadKind::HeapChurn);
        assert_eq!(
            (s.common.threads, s.common.seed, s.common.live_fraction),
            (1, 42, 0.5)
        );
        assert_eq!(s.common.duration_ms, 20_000);
        assert_eq!(s.common.min_cycles, None);
        assert!(s.common.pacing);
        let configs = s.configs().unwrap();
        assert!(configs.iter().all(|c| c.pacing));
        assert!(configs.iter().all(|c| c.min_cycles == SWEEP_MIN_CYCLES));
        // The heap is committed whole at creation unless told otherwise.
        assert_eq!(s.common.initial_heap, InitialHeap::Max);
        assert!(configs.iter().all(|c| c.initial_heap_bytes == c.heap_bytes));
        assert_eq!(SWEEP_MIN_CYCLES, 3);
        let labels: Vec<String> = configs.iter().map(RunConfig::label).collect();
        assert_eq!(
            labels,
            [
                "concurrent 256M",
                "stw 256M",
                "concurrent 1G",
                "stw 1G",
                "concurrent 4G",
                "stw 4G"
            ]
        );
        assert_eq!(configs[2].live_set_bytes, 512 << 20);
        assert_eq!(param(&configs[2], "subgraph_nodes"), json!(16));
    }

    #[test]
    fn sweep_options_parse() {
        let cli = parse(&[
            "--heaps",
            "512M,2g",
            "--modes",
            "stw,epsilon",
            "--workload",
            "lru-cache",
            "--duration",
            "0.25",
            "--threads",
            "2",
            "--seed",
            "7",
            "--live-fraction",
            "0.3",
            "--min-cycles",
            "5",
            "--out",
            "/tmp/x",
            "--quiet",
        ])
        .unwrap();
        let s = cli.sweep;
        assert_eq!(s.heaps, vec![512 << 20, 2 << 30]);
        assert_eq!(s.modes, vec![Mode::Stw, Mode::Epsilon]);
        assert_eq!(s.workload, WorkloadKind::LruCache);
        assert_eq!(s.common.duration_ms, 250);
        assert_eq!(s.common.out, Some(PathBuf::from("/tmp/x")));
        assert!(s.common.quiet);
        let c = &s.configs().unwrap()[0];
        assert_eq!((c.threads, c.seed, c.min_cycles), (2, 7, 5));
        assert_eq!(c.live_set_bytes, ((512u64 << 20) as f64 * 0.3) as u64);
        assert_eq!(param(c, "hit_rate"), json!(0.9));
    }

    #[test]
    fn pacing_floor_reaches_every_run_and_bad_floors_are_refused() {
        let cli = parse(&["--pacing-floor", "0.25", "--pacing-window", "20"]).unwrap();
        let configs = cli.sweep.configs().unwrap();
        assert!(configs
            .iter()
            .all(|c| c.pacing_floor == Some(0.25) && c.pacing_window_ms == Some(20)));
        let c = workload_config(&["heap-churn", "--pacing-floor", "0"]).unwrap();
        assert_eq!((c.pacing_floor, c.pacing_window_ms), (Some(0.0), None));
        let defaults = parse(&[]).unwrap().sweep.configs().unwrap();
        assert!(defaults.iter().all(|c| c.pacing_floor.is_none()));
        for (args, says) in [
            (["--pacing-floor", "1"], "below 1"),
            (["--pacing-window", "0"], "from 1 to 1000"),
        ] {
            let e = parse(&args).expect_err("a bad floor").to_string();
            assert!(e.contains(says), "{e}");
        }
    }

    #[test]
    fn pacing_switch_reaches_every_run() {
        let cli = parse(&["--pacing", "off"]).unwrap();
        assert!(cli.sweep.configs().unwrap().iter().all(|c| !c.pacing));
        let cli = parse(&["--pacing", "on"]).unwrap();
        assert!(cli.sweep.configs().unwrap().iter().all(|c| c.pacing));
        let c = workload_config(&["heap-churn", "--pacing", "off"]).unwrap();
        assert!(!c.pacing);
    }

    #[test]
    fn bad_inputs_are_rejected_with_clear_messages() {
        let msg = |args: &[&str]| parse(args).unwrap_err().to_string();
        assert!(msg(&["--heaps", "1X"]).contains("unknown size unit 'X'"));
        assert!(msg(&["--heaps", "1.5G"]).contains("is not a size"));
        assert!(msg(&["--heaps", "0"]).contains("max heap is 0 bytes"));
        assert!(msg(&["--heaps", "3M"]).contains("not a multiple of the 2 MiB granule"));
        assert!(msg(&["--heaps", "32T"]).contains("choose 8T or less"));
        if let Some(physical) = gc_core::config::physical_memory_bytes() {
            let too_big = format!("256M,{}G", (physical >> 30) + 1);
            let m = msg(&["--heaps", &too_big]);
            assert!(m.contains("more than this machine's memory"), "{m}");
        }
        let m = msg(&["--modes", "concurrent,parallel"]);
        assert!(
            m.contains("parallel") && m.contains("concurrent, stw, epsilon"),
            "{m}"
        );
        let m = msg(&["--workload", "dacapo"]);
        assert!(
            m.contains("heap-churn, binary-trees, lru-cache, message-engine"),
            "{m}"
        );
        assert!(msg(&["--duration", "0"]).contains("more than 0 seconds"));
        assert!(msg(&["--duration", "-3"]).contains("more than 0 seconds"));
        assert!(msg(&["--duration", "soon"]).contains("not a number of seconds"));
        assert!(msg(&["--live-fraction", "1"]).contains("between 0 and 1"));
        assert!(msg(&["--threads", "0"]).contains("0"));
        let m = msg(&["--min-cycles", "-1"]);
        assert!(m.contains("--min-cycles") && m.contains("0..=1000"), "{m}");
        let m = msg(&["--min-cycles", "many"]);
        assert!(m.contains("invalid digit"), "{m}");
        assert!(msg(&["--min-cycles", "5000"]).contains("0..=1000"));
        assert!(msg(&["--pacing", "sometimes"]).contains("neither on nor off"));
        // Sweep options do not mix with a subcommand.
        assert!(parse(&["--heaps", "1G", "heap-churn"]).is_err());
    }

    /// `--young-size` reaches every run's configuration; 0, a malformed size and one that
    /// does not fit a heap of the sweep (or a workload's heap) are refused with the range.
    #[test]
    fn young_size_is_checked_against_every_heap() {
        let configs = |args: &[&str]| parse(args).unwrap().sweep.configs();
        let c = configs(&["--heaps", "256M,1G", "--young-size", "128M"]).unwrap();
        assert!(c.iter().all(|c| c.young_size == Some(128 << 20)));
        assert!(configs(&["--heaps", "256M"]).unwrap()[0]
            .young_size
            .is_none());
        let m = configs(&["--heaps", "256M,1G", "--young-size", "200M"]).unwrap_err();
        assert!(
            m.contains("--young-size 200M does not fit a 256M heap")
                && m.contains("between 2M (one small page) and half the heap (128M)"),
            "{m}"
        );
        let m = configs(&["--heaps", "256M", "--young-size", "1M"]).unwrap_err();
        assert!(m.contains("between 2M"), "{m}");
        let msg = |args: &[&str]| parse(args).unwrap_err().to_string();
        let m = msg(&["--young-size", "0"]);
        assert!(
            m.contains("--young-size") && m.contains("at least 2M"),
            "{m}"
        );
        assert!(msg(&["--young-size", "lots"]).contains("is not a size"));
        assert!(msg(&["--young-size", "1X"]).contains("unknown size unit 'X'"));
        let run = |args: &[&str]| {
            let mut all = vec!["message-engine", "--heap", "256M", "--mode", "generational"];
            all.extend_from_slice(args);
            parse(&all).unwrap().command.unwrap().run_config().unwrap()
        };
        assert_eq!(
            run(&["--young-size", "64M"]).unwrap().young_size,
            Some(64 << 20)
        );
        let m = run(&["--young-size", "512M"]).unwrap_err();
        assert!(m.contains("does not fit a 256M heap"), "{m}");
        let help = Cli::command().render_long_help().to_string();
        assert!(help.contains("--young-size <SIZE>"), "{help}");
    }

    /// `--young-evacuation-live-percent` reaches every run's configuration (the sweep's and a
    /// workload's alone); a share over 100 and a malformed one are refused by the runtime's
    /// validation, with the option named.
    #[test]
    fn young_evacuation_live_percent_is_checked_by_the_runtime() {
        let configs = |args: &[&str]| parse(args).unwrap().sweep.configs();
        let c = configs(&[
            "--heaps",
            "256M,1G",
            "--young-evacuation-live-percent",
            "75",
        ])
        .unwrap();
        assert!(c
            .iter()
            .all(|c| c.young_evacuation_live_percent == Some(75)));
        assert!(configs(&["--heaps", "256M"]).unwrap()[0]
            .young_evacuation_live_percent
            .is_none());
        let msg = |args: &[&str]| parse(args).unwrap_err().to_string();
        for bad in ["101", "300"] {
            let m = msg(&["--young-evacuation-live-percent", bad]);
            assert!(
                m.contains("--young-evacuation-live-percent")
                    && m.contains("young_evacuation_live_percent")
                    && m.contains("between 0"),
                "{m}"
            );
        }
        let m = msg(&["--young-evacuation-live-percent", "half"]);
        assert!(m.contains("not a whole percentage"), "{m}");
        let run = workload_config(&[
            "binary-trees",
            "--mode",
            "generational",
            "--young-evacuation-live-percent",
            "0",
        ])
        .unwrap();
        assert_eq!(run.young_evacuation_live_percent, Some(0));
        let help = Cli::command().render_long_help().to_string();
        assert!(
            help.contains("--young-evacuation-live-percent <PERCENT>"),
            "{help}"
        );
    }

    #[test]
    fn jvm_collectors_parse_by_name() {
        let s = parse(&["--jvm", "ZGC,g1,GenZGC"]).unwrap().sweep;
        assert_eq!(
            s.jvm,
            [JvmCollector::Zgc, JvmCollector::G1, JvmCollector::GenZgc]
        );
        assert_eq!(s.java, None);
        assert!(parse(&[]).unwrap().sweep.jvm.is_empty());
        let s = parse(&["--jvm", "G1", "--java", "/opt/jdk"]).unwrap().sweep;
        assert_eq!(s.java, Some(PathBuf::from("/opt/jdk")));
        let m = parse(&["--jvm", "Shenandoah"]).unwrap_err().to_string();
        assert!(m.contains("ZGC, GenZGC, G1, Parallel, Serial"), "{m}");
        assert!(
            parse(&["--java", "/opt/jdk"]).is_err(),
            "--java needs --jvm"
        );
    }

    #[test]
    fn heap_churn_subcommand_carries_its_options() {
        let cli = parse(&[
            "heap-churn",
            "--heap",
            "256M",
            "--mode",
            "stw",
            "--subgraph-nodes",
            "8",
            "--mutations",
            "3",
            "--garbage-bytes",
            "1024",
            "--ops-per-sec",
            "5000",
            "--live-mb",
            "100",
            "--duration",
            "2",
            "--min-cycles",
            "3",
        ])
        .unwrap();
        let cmd = cli.command.unwrap();
        let c = cmd.run_config().unwrap().unwrap();
        assert_eq!(c.workload, WorkloadKind::HeapChurn);
        assert_eq!(c.label(), "stw 256M");
        assert_eq!(c.live_set_bytes, 100 << 20);
        assert_eq!((c.duration_ms, c.min_cycles), (2000, 3));
        assert_eq!(param(&c, "subgraph_nodes"), json!(8));
        assert_eq!(param(&c, "mutations"), json!(3));
        assert_eq!(param(&c, "garbage_bytes"), json!(1024));
        assert_eq!(param(&c, "ops_per_sec"), json!(5000));
        assert_eq!(param(&c, "root_chunk_slots"), json!(16_384));
        // Default live set: half the heap.
        let c = workload_config(&["heap-churn"]).unwrap();
        assert_eq!(
            (c.heap_bytes, c.live_set_bytes, c.mode),
            (1 << 30, 512 << 20, Mode::Concurrent)
        );
        // A live set that does not fit.
        let err =
            workload_config(&["heap-churn", "--heap", "256M", "--live-mb", "300"]).unwrap_err();
        assert!(err.contains("does not fit a 256M heap"), "{err}");
    }

    #[test]
    fn other_subcommands_carry_their_options() {
        let cfg = |args: &[&str]| parse(args).unwrap().command.unwrap().run_config().unwrap();
        let c = cfg(&["binary-trees", "--depth", "18", "--threads", "2"]).unwrap();
        assert_eq!((c.workload, c.threads), (WorkloadKind::BinaryTrees, 2));
        assert_eq!(c.min_cycles, 0, "a workload run alone runs its --duration");
        assert_eq!(param(&c, "depth"), json!(18));
        assert_eq!(
            param(&cfg(&["binary-trees"]).unwrap(), "depth"),
            serde_json::Value::Null
        );
        assert!(parse(&["binary-trees", "--depth", "2"]).is_err());

        let c = cfg(&[
            "lru-cache",
            "--hit-rate",
            "0.75",
            "--max-value-bytes",
            "100",
            "--min-value-bytes",
            "10",
        ])
        .unwrap();
        assert_eq!(param(&c, "hit_rate"), json!(0.75));
        assert_eq!(param(&c, "max_value_bytes"), json!(100));
        let err = cfg(&["lru-cache", "--min-value-bytes", "5000"]).unwrap_err();
        assert!(err.contains("need 0 < min ≤ max"), "{err}");
        assert!(parse(&["lru-cache", "--hit-rate", "1.5"]).is_err());

        let c = cfg(&["message-engine", "--topics", "5", "--retention-mb", "64"]).unwrap();
        assert_eq!(param(&c, "topics"), json!(5));
        assert_eq!(param(&c, "queues"), json!(10));
        assert_eq!(c.live_set_bytes, 64 << 20);
        let err = cfg(&["message-engine", "--topics", "0", "--queues", "0"]).unwrap_err();
        assert!(err.contains("both 0"), "{err}");

        let cli = parse(&["report", "results/x/results.json"]).unwrap();
        let cmd = cli.command.unwrap();
        assert!(cmd.run_config().is_none());
        assert!(
            matches!(cmd, Command::Report(ReportArgs { ref results, .. })
            if results == &PathBuf::from("results/x/results.json"))
        );
    }

    #[test]
    fn buffers_multiply_the_runs_of_a_sweep() {
        let cli = parse(&[
            "--workload",
            "buffer-echo",
            "--buffers",
            "heap,direct,pooled",
            "--heaps",
            "256M",
            "--modes",
            "concurrent",
            "--memory-report",
        ])
        .unwrap();
        let configs = cli.sweep.configs().unwrap();
        let labels: Vec<String> = configs.iter().map(RunConfig::label).collect();
        assert_eq!(
            labels,
            [
                "concurrent 256M heap",
                "concurrent 256M direct",
                "concurrent 256M pooled"
            ]
        );
        assert!(configs.iter().all(|c| c.memory_report));
        assert_eq!(param(&configs[1], "buffers"), json!("direct"));
        assert_eq!(param(&configs[1], "connections"), json!(4));
        assert_eq!(
            param(&configs[1], "message_size"),
            json!({"min_bytes": 4096, "max_bytes": 4096})
        );
        // message-engine keeps heap bodies unless told otherwise, and its label.
        let c = parse(&["--workload", "message-engine"])
            .unwrap()
            .sweep
            .configs()
            .unwrap();
        assert_eq!(param(&c[0], "buffers"), json!("heap"));
        assert_eq!(c[0].label(), "concurrent 256M");
        let e = parse(&["--workload", "lru-cache", "--buffers", "pooled"])
            .unwrap()
            .sweep
            .configs()
            .unwrap_err();
        assert!(e.contains("lru-cache keeps no I/O buffers"), "{e}");
        assert!(parse(&["--buffers", "offheap"]).is_err());
    }

    #[test]
    fn memory_runs_pooled_buffer_echo_briefly_by_default() {
        let cfg = |args: &[&str]| {
            let mut a = vec!["memory"];
            a.extend_from_slice(args);
            parse(&a).unwrap().command.unwrap().run_config().unwrap()
        };
        let c = cfg(&[]).unwrap();
        assert_eq!(c.workload, WorkloadKind::BufferEcho);
        assert_eq!(c.label(), "concurrent 256M pooled");
        assert_eq!(c.duration_ms, 3000);
        assert!(c.memory_report);
        let c = cfg(&["--workload", "heap-churn", "--duration", "1"]).unwrap();
        assert_eq!((c.label(), c.duration_ms), ("concurrent 256M".into(), 1000));
        let e = cfg(&["--workload", "binary-trees", "--buffers", "direct"]).unwrap_err();
        assert!(e.contains("binary-trees keeps no I/O buffers"), "{e}");
        let c = cfg(&["--workload", "message-engine", "--buffers", "direct"]).unwrap();
        assert_eq!(param(&c, "buffers"), json!("direct"));
    }

    #[test]
    fn help_explains_options_and_outputs() {
        let help = Cli::command().render_long_help().to_string();
        for s in [
            "--heaps",
            "--modes",
            "--workload",
            "--duration",
            "--threads",
            "--seed",
            "--live-fraction",
            "--out",
            "--quiet",
            "--min-cycles",
            "4× --duration",
            "--pacing",
            "heap-churn",
            "binary-trees",
            "lru-cache",
            "message-engine",
            "pause-vs-heap.svg",
            "mmu-vs-heap.svg",
            "trace.json",
            "results.json",
            "table.md",
            "pause-timeline.svg",
            "[default: 256M,1G,4G]",
            "--buffers",
            "--memory-report",
            "buffer-echo",
            "pause-sweep memory",
            "memory-N-<run>.svg",
            "--jvm",
            "--java",
            "GenZGC",
            "gc-<run>.log",
            "time to safepoint",
        ] {
            assert!(help.contains(s), "long help lacks {s}:\n{help}");
        }
        let mut cmd = Cli::command();
        let sub = cmd
            .find_subcommand_mut("heap-churn")
            .unwrap()
            .render_long_help()
            .to_string();
        for s in [
            "--subgraph-nodes",
            "--mutations",
            "--garbage-bytes",
            "--ops-per-sec",
            "--live-mb",
            "--heap",
            "--mode",
            "[default: 16]",
            "[default: 512]",
        ] {
            assert!(sub.contains(s), "heap-churn help lacks {s}:\n{sub}");
        }
    }
}
