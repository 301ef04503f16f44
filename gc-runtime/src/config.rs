//! Runtime configuration: the heap geometry (`gc_core::MemoryConfig`) plus the collector's policy
//! knobs — mode, GC threads, verification, logging, director and pacing settings (HotSpot's
//! `-XX:` flags as one value).
//!
//! [`HeapConfig::new`] reads no environment: a heap is what its code says. Programs that want
//! the environment's overrides for experiments ([`ENV_VARS`]: the GC log, the GC threads, two
//! pacing settings, huge pages, the safepoint's barrier) ask for them with [`HeapConfig::from_env`], the one place that reads them;
//! a malformed value is an [`EnvError`] that names the variable and the values it accepts.

use gc_core::{Backing, ColorChoice, HeapError};
use std::time::Duration;

/// How the heap collects. The one mode type of the project: harness, reports and the Lox
/// interpreter use it too.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// The ZGC cycle: three short pauses, concurrent mark and relocation.
    Concurrent,
    /// Every phase inside one pause plus a full remap, started when the heap is nearly full
    /// (Serial/Parallel-style baseline: mutators allocate nothing while it runs).
    Stw,
    /// Allocate only, never collect (barrier-cost baseline).
    Epsilon,
    /// The concurrent cycle with the generational bookkeeping always on (page ages, the store
    /// barrier, the remembered set: [`HeapConfig::track_generations`] implied), and a
    /// director that starts minor (young-only) cycles when the young generation fills
    /// ([`GenerationalConfig::young_size`]) and majors (the full concurrent cycle) by the
    /// whole heap's rules.
    Generational,
}

impl Mode {
    /// Every mode, in report order.
    pub const ALL: [Mode; 4] = [
        Mode::Concurrent,
        Mode::Stw,
        Mode::Epsilon,
        Mode::Generational,
    ];

    /// The mode's name as used on command lines and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Concurrent => "concurrent",
            Mode::Stw => "stw",
            Mode::Epsilon => "epsilon",
            Mode::Generational => "generational",
        }
    }

    /// True if cycles run concurrently with the mutators (three short pauses): `concurrent`
    /// and `generational`. Such heaps pace their mutators, populate the good view after each
    /// flip and can be stepped.
    pub fn is_concurrent(self) -> bool {
        matches!(self, Mode::Concurrent | Mode::Generational)
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "concurrent" => Ok(Mode::Concurrent),
            "stw" => Ok(Mode::Stw),
            "epsilon" => Ok(Mode::Epsilon),
            "generational" => Ok(Mode::Generational),
            _ => Err(format!(
                "unknown GC mode {s:?}: use concurrent, generational, stw or epsilon"
            )),
        }
    }
}

/// What the `-Xlog:gc`-style log prints (to stderr).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    Off,
    /// One line per cycle and per allocation stall.
    Gc,
    /// Also one line per phase and pause.
    Phases,
    /// Also one line per pacing delay (there can be hundreds a second).
    Debug,
}

/// The environment variable that turns the GC log on in programs that create their heaps
/// with [`HeapConfig::from_env`]: `ZRS_GC_LOG=gc`, `ZRS_GC_LOG=phases` or `ZRS_GC_LOG=debug`.
pub const LOG_ENV: &str = "ZRS_GC_LOG";

/// The values [`LogLevel`]'s `FromStr` (and so [`LOG_ENV`]) accepts.
const LOG_LEVELS: &str = "off, gc, phases or debug (or 0, 1, 2, 3; info for gc, pacing for debug)";

impl std::str::FromStr for LogLevel {
    type Err = String;
    /// A level by name or number, in any case (see [`LOG_ENV`]).
    fn from_str(s: &str) -> Result<LogLevel, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "off" | "0" => Ok(LogLevel::Off),
            "gc" | "info" | "1" => Ok(LogLevel::Gc),
            "phases" | "2" => Ok(LogLevel::Phases),
            "debug" | "pacing" | "3" => Ok(LogLevel::Debug),
            _ => Err(format!("unknown log level {s:?}: use {LOG_LEVELS}")),
        }
    }
}

/// Director settings (when to start a cycle).
#[derive(Clone, Debug)]
pub struct DirectorConfig {
    /// How often the rules are checked (default 10 ms, between 100 µs and 10 s,
    /// [`DirectorConfig::INTERVAL_RANGE`]).
    pub interval: Duration,
    /// Start a cycle at least this often (ZGC's `ZCollectionInterval`); `None` = never. At
    /// least 1 ms and at least `interval` (for cycles back to back, use `continuous`).
    pub timer: Option<Duration>,
    /// Run cycles back to back (for stress tests). In the `stw` mode, whose cycle is one
    /// pause, the next cycle waits until the mutators had as long as the last one took (an
    /// allocation stall still starts one at once): otherwise a mutator the machine is slow
    /// to reschedule would not run between two pauses at all.
    pub continuous: bool,
    /// Allow proactive cycles.
    pub proactive: bool,
    /// Keep the heap near what the program needs: start a cycle once usage reaches this
    /// multiple of what the last cycle left (Go's `GOGC` rule); `None` (the default) sizes
    /// cycles by the maximum heap only.
    pub heap_target: Option<HeapTarget>,
}

/// The director's heap target: a cycle starts when the bytes in pages in use reach
/// `max(min_bytes, left × (100 + growth_percent) / 100)`, where `left` is what the last cycle
/// left in use. A large maximum heap (a limit, as the JVM's default of a quarter of the
/// machine) then costs nothing: a small program cycles at a small heap and commits little.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeapTarget {
    /// The target never goes below this (any value: one above the maximum heap leaves the
    /// other rules to start cycles).
    pub min_bytes: u64,
    /// How much the heap may grow past what the last cycle left, in percent (100: double).
    /// Any value: the target is computed without overflow, and one past the maximum heap
    /// leaves the other rules to start cycles.
    pub growth_percent: u32,
}

impl Default for DirectorConfig {
    fn default() -> Self {
        DirectorConfig {
            interval: Duration::from_millis(10),
            timer: None,
            continuous: false,
            proactive: true,
            heap_target: None,
        }
    }
}

/// The generational mode's settings ([`Mode::Generational`]; ignored by the other modes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GenerationalConfig {
    /// The young generation's size: the director starts a minor cycle once mutators have
    /// allocated this many bytes since the last cycle started (every byte since then is in
    /// young pages no cycle has marked yet). `None` (the default): a quarter of the maximum
    /// heap, at most [`GenerationalConfig::DEFAULT_MAX_YOUNG_SIZE`]
    /// ([`HeapConfig::young_size_bytes`]). Between one small page (2 MiB,
    /// [`GenerationalConfig::MIN_YOUNG_SIZE`]) and half the maximum heap.
    pub young_size: Option<u64>,
}

impl GenerationalConfig {
    /// The smallest young generation accepted: one small page. A smaller one would start a
    /// minor for every page a mutator takes.
    pub const MIN_YOUNG_SIZE: u64 = gc_core::GRANULE_SIZE;
    /// The default young generation's largest size, 64 MiB: the pages a minor frees are
    /// taken again soon, so a young generation near the size of the last-level cache (32 MiB
    /// on the machine this was written on) recycles memory that is still cached, and a heap
    /// of several GiB (Lox's default maximum is a quarter of the machine) still runs minors.
    pub const DEFAULT_MAX_YOUNG_SIZE: u64 = 64 << 20;
}

/// Pacing settings: how the collector slows mutators that would fill the heap before the
/// running cycle can free memory — short delays at page allocations, instead of an allocation
/// stall that lasts until the cycle ends (the rule is in the `pacer` module's documentation).
///
/// Only `concurrent` heaps pace. A `stw` cycle runs inside one pause with every mutator
/// stopped, and an `epsilon` heap never collects: neither has a running cycle to keep pace
/// with, so there the settings are accepted (pacing is on by default) and ignored.
#[derive(Clone, Debug, PartialEq)]
pub struct PacingConfig {
    /// Pace mutators (default on). Off, a mutator that outruns the collector runs at full
    /// speed until the heap is full, then stalls until a page is freed.
    pub enabled: bool,
    /// The longest single delay (default 1 ms, between 1 µs and 1 s): no pacing delay is
    /// longer. It bounds how far pacing alone can slow a mutator: to at most one `quantum`
    /// per `max_delay` plus the time the mutator takes to allocate it.
    pub max_delay: Duration,
    /// Bytes a mutator allocates between two pacing decisions (default 64 KiB, between
    /// 4 KiB and 64 MiB; an object larger than this is one decision of its own size). Small
    /// quanta make many short delays rather than a few long ones.
    pub quantum: u64,
    /// Safety factor (default 1.25, between 1 and 10): free memory is budgeted to last this
    /// much longer than recent cycles took (the time rule), and a cycle's allowance is the
    /// free memory at its start divided by it (the progress rule).
    pub duration_margin: f64,
    /// The floor of the mutator's share of every `window` (default 0.5, at least 0 and below
    /// 1): the pacer holds one mutator no more than `(1 − min_mutator_share) × window` of any
    /// `window` of time (the minimum mutator utilization it aims for, counting the delays it
    /// imposes). 0 leaves only `max_delay` as the bound. The floor is soft: it yields when
    /// free memory, at the rate the mutators have allocated in the running cycle, would run
    /// out before the cycle is expected to end, since holding it would only fill the heap
    /// and stall the mutator until the cycle frees memory; each delay then still stops at
    /// `max_delay`, and its part beyond the floor is recorded
    /// (`PacingRecord::beyond_floor_ns`). The stall stays the last resort.
    pub min_mutator_share: f64,
    /// The window of the floor (default 10 ms, between 1 ms and 1 s).
    pub window: Duration,
}

impl Default for PacingConfig {
    fn default() -> Self {
        PacingConfig {
            enabled: true,
            max_delay: Duration::from_millis(1),
            quantum: 64 << 10,
            duration_margin: 1.25,
            min_mutator_share: 0.5,
            window: Duration::from_millis(10),
        }
    }
}

/// Environment overrides of the pacing defaults, for experiments (as [`GC_THREADS_ENV`] is
/// for the GC threads), read by [`HeapConfig::from_env`]: `ZRS_PACING_QUANTUM` in bytes (the
/// workspace's size grammar, `gc_core::parse_size`), `ZRS_PACING_MAX_DELAY_US` in
/// microseconds, `ZRS_PACING_MIN_MUTATOR_SHARE` (a fraction, e.g. 0.5) and
/// `ZRS_PACING_WINDOW_US` in microseconds (the floor, [`PacingConfig::min_mutator_share`]).
/// A value that does not parse is an [`EnvError`]; one out of range is refused when the heap
/// is created, like the same setting made in code.
pub const PACING_ENV: [&str; 4] = [
    "ZRS_PACING_QUANTUM",
    "ZRS_PACING_MAX_DELAY_US",
    "ZRS_PACING_MIN_MUTATOR_SHARE",
    "ZRS_PACING_WINDOW_US",
];

/// The environment variable that overrides the default number of GC worker threads, read by
/// [`HeapConfig::from_env`]: a whole number, 1 or more.
pub const GC_THREADS_ENV: &str = "ZRS_GC_THREADS";

/// The environment variable that chooses the heap's pages, read by [`HeapConfig::from_env`]:
/// `off`, `transparent` or `hugetlb` ([`gc_core::HugePages`]).
pub const HUGE_PAGES_ENV: &str = "ZRS_HUGE_PAGES";

/// The environment variable that turns the safepoint's process-wide barrier on, read by
/// [`HeapConfig::from_env`]: `off` (the default) or `on` (used where the system offers it;
/// see [`HeapConfig::membarrier`]).
pub const MEMBARRIER_ENV: &str = "ZRS_MEMBARRIER";

/// The values [`MEMBARRIER_ENV`] accepts.
const MEMBARRIER_VALUES: &str = "use off (the default: a SeqCst fence on both sides of the \
     safepoint handshake) or on (membarrier where the system offers it)";

/// Every environment variable [`HeapConfig::from_env`] reads.
pub const ENV_VARS: [&str; 8] = [
    LOG_ENV,
    GC_THREADS_ENV,
    PACING_ENV[0],
    PACING_ENV[1],
    PACING_ENV[2],
    PACING_ENV[3],
    HUGE_PAGES_ENV,
    MEMBARRIER_ENV,
];

/// A malformed value of one of the environment variables [`HeapConfig::from_env`] reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("environment variable {variable}={value:?} is not valid: {accepted}")]
pub struct EnvError {
    /// The variable, e.g. `ZRS_GC_LOG`.
    pub variable: &'static str,
    /// Its value (lossily decoded if it was not UTF-8).
    pub value: String,
    /// What the variable accepts instead.
    pub accepted: String,
}

impl DirectorConfig {
    /// The shortest and longest `interval` accepted: a zero interval would spin the
    /// director's thread, one of more than seconds would let the heap fill unnoticed.
    pub const INTERVAL_RANGE: (Duration, Duration) =
        (Duration::from_micros(100), Duration::from_secs(10));
    /// The shortest `timer` accepted (and it must not be shorter than `interval`).
    pub const MIN_TIMER: Duration = Duration::from_millis(1);

    /// Check the settings; the error says which one and what to give instead.
    pub fn validate(&self) -> Result<(), HeapError> {
        let (lo, hi) = Self::INTERVAL_RANGE;
        if !(lo..=hi).contains(&self.interval) {
            return Err(HeapError::InvalidSetting {
                setting: "director_interval",
                problem: format!(
                    "is {:?}: give an interval between 100 µs and 10 s (e.g. 10 ms, the default)",
                    self.interval
                ),
            });
        }
        if let Some(t) = self.timer {
            if t < Self::MIN_TIMER || t < self.interval {
                return Err(HeapError::InvalidSetting {
                    setting: "timer",
                    problem: format!(
                        "is {t:?}: give at least 1 ms and at least the director interval \
                         ({:?}), or use continuous for cycles back to back",
                        self.interval
                    ),
                });
            }
        }
        Ok(())
    }
}

impl PacingConfig {
    /// The shortest and longest `max_delay` accepted.
    pub const MAX_DELAY_RANGE: (Duration, Duration) =
        (Duration::from_micros(1), Duration::from_secs(1));
    /// The smallest and largest `quantum` accepted.
    pub const QUANTUM_RANGE: (u64, u64) = (4 << 10, 64 << 20);
    /// The shortest and longest floor `window` accepted.
    pub const WINDOW_RANGE: (Duration, Duration) =
        (Duration::from_millis(1), Duration::from_secs(1));

    /// Check the settings; the error says which one and what to give instead.
    pub fn validate(&self) -> Result<(), HeapError> {
        let (lo, hi) = Self::MAX_DELAY_RANGE;
        if self.max_delay < lo || self.max_delay > hi {
            return Err(HeapError::InvalidSetting {
                setting: "pacing_max_delay",
                problem: format!(
                    "is {:?}: give a delay between 1 µs and 1 s (e.g. 1 ms), or turn pacing \
                     off",
                    self.max_delay
                ),
            });
        }
        let (qlo, qhi) = Self::QUANTUM_RANGE;
        if !(qlo..=qhi).contains(&self.quantum) {
            return Err(HeapError::InvalidSetting {
                setting: "pacing_quantum",
                problem: format!(
                    "is {} bytes: give between 4 KiB and 64 MiB (e.g. 256 KiB)",
                    self.quantum
                ),
            });
        }
        let m = self.duration_margin;
        if !(1.0..=10.0).contains(&m) {
            return Err(HeapError::InvalidSetting {
                setting: "pacing_duration_margin",
                problem: format!("is {m}: give a factor between 1 and 10 (e.g. 1.25)"),
            });
        }
        let share = self.min_mutator_share;
        if !(0.0..1.0).contains(&share) {
            return Err(HeapError::InvalidSetting {
                setting: "pacing_min_mutator_share",
                problem: format!(
                    "is {share}: give a share of at least 0 and below 1 (e.g. 0.5, the \
                     default; 0 for no floor), or turn pacing off"
                ),
            });
        }
        let (wlo, whi) = Self::WINDOW_RANGE;
        if !(wlo..=whi).contains(&self.window) {
            return Err(HeapError::InvalidSetting {
                setting: "pacing_window",
                problem: format!(
                    "is {:?}: give a window between 1 ms and 1 s (e.g. 10 ms, the default)",
                    self.window
                ),
            });
        }
        Ok(())
    }
}

/// Everything needed to create a [`crate::Heap`].
#[derive(Clone, Debug)]
pub struct HeapConfig {
    /// Memory geometry: max/initial heap, backing, huge pages.
    pub memory: gc_core::MemoryConfig,
    pub mode: Mode,
    /// GC worker threads for concurrent phases (default: half the available cores, at least 1;
    /// between 1 and 1024, [`HeapConfig::GC_THREADS_RANGE`]).
    pub gc_threads: usize,
    /// Run the verifier in every pause and poison freed pages.
    pub verify: bool,
    pub log: LogLevel,
    pub director: DirectorConfig,
    /// Mutator pacing (on by default; used by `concurrent` and `generational` heaps only).
    pub pacing: PacingConfig,
    /// The generational mode's young-generation size (used by `generational` heaps only).
    pub generational: GenerationalConfig,
    /// Capacity of each mutator's local-handle stack, in handles (default 2^20; between 1
    /// and 2^28, [`HeapConfig::HANDLE_CAPACITY_RANGE`]: 8 bytes of address space each,
    /// memory only for those used).
    pub handle_capacity: usize,
    /// Uncommit memory the heap has not needed for this long (ZGC's `ZUncommitDelay`, also
    /// 5 minutes by default; at most [`HeapConfig::MAX_UNCOMMIT_DELAY`]); `None` keeps
    /// everything committed once it was.
    pub uncommit_delay: Option<Duration>,
    /// The most native memory the heap's direct and pooled buffers may hold at once, in
    /// requested bytes (JDK's `MaxDirectMemorySize`); `None` (the default) means as much as
    /// the maximum heap, the JDK's default too. An allocation that would pass it runs a GC
    /// cycle (cause "Direct Memory") so that dead owners' cleaners free their memory, and
    /// fails only if that is not enough.
    pub max_direct_memory: Option<u64>,
    /// Bytes of the heap mutators may not take, kept for relocation's target pages. `None`
    /// (the default): one small page per GC worker and one for mutators' barriers, plus a
    /// medium page, at most an eighth of the heap and at least one small page. With less,
    /// a nearly full heap compacts pages in place more often (`Some(0)` lets mutators fill
    /// every page); at most half the heap. Ignored by `epsilon` heaps, which never relocate.
    pub relocation_reserve: Option<u64>,
    /// Spare mutators the fence of the safepoint handshake where the system offers a
    /// process-wide barrier (Linux's `membarrier`; HotSpot's `UseSystemMemoryBarrier`): the
    /// collector then issues that barrier once per pause request, and a mutator's outermost
    /// scope and blocking regions enter and leave without a fence. Off by default (a `SeqCst`
    /// fence on both sides, also the fallback where the barrier is missing): the barrier is a
    /// system call inside every pause's time to safepoint, and on the 2-core VM this was
    /// measured on it took heap-churn's concurrent pauses from 0.5–0.7 µs to 3–15 µs at the
    /// median and from 11–14 µs to 74–120 µs at p99, while the fence it saves costs a mutator
    /// about 15 ns per outermost scope. The heap's GC log says which one it uses.
    pub membarrier: bool,
    /// Keep the generational mode's bookkeeping while only full cycles run: every page's age
    /// (eden when handed to a mutator, old from the next Pause Mark Start on and as a
    /// relocation target), the store barrier on every reference store into a heap object,
    /// and a remembered set of the old slots that point young, kept complete (with `verify`,
    /// the verifier checks it in every pause). Off by default, so a `concurrent` heap pays
    /// no store barrier; [`Mode::Generational`] turns it on whatever this says
    /// ([`HeapConfig::tracks_generations`]). On in `concurrent` mode, it allows minors on
    /// request only (`Heap::collect_minor`); on in `stw` mode, it only keeps the bookkeeping
    /// (the tests' way to check it against full cycles).
    pub track_generations: bool,
    /// The age at which a minor cycle promotes a young page's survivors instead of keeping
    /// them young: eden counts 0, survivor `n` counts `n`; a page below it is aged (in place,
    /// or by copy to a survivor target page of the next age if it is evacuated), a page at it
    /// is promoted (in place, or by copy to an old target page). So `Some(0)` promotes every
    /// survivor at its first minor, `Some(1)` at its second (ZGC's `ZTenuringThreshold`, here
    /// per page). At most 14, the oldest survivor age. `None`, the default, computes it after
    /// every minor from the survival measured per age (ZGC's `compute_tenuring_threshold`,
    /// `relocate::tenuring`): the youngest age from 1 on whose bytes mostly survive the next
    /// minor, rising one age at a time while every age kept young still mostly dies. Why
    /// adaptive: a minor's survivors include the objects allocated just before its Pause Mark
    /// Start, the ones most likely to die soon, and how many minors they need to die is the
    /// program's: promoted too early, their garbage stays until the next major (binary-trees
    /// at 256M, `docs/src/engineering-notes.md`); kept too long, live data is marked and
    /// copied again at every minor. Only minor cycles (`Heap::collect_minor`) read it.
    pub tenuring_threshold: Option<u8>,
    /// A minor cycle evacuates a young page with survivors (copies them to survivor or old
    /// target pages by [`HeapConfig::tenuring_threshold`], and frees the page) when its live
    /// bytes are under this percentage of the page; denser pages are aged or promoted in
    /// place. 0 turns the minors' evacuation off; at most 100. Why 25, the default: it was
    /// chosen when a minor's copies all went to *old* target pages, where a page at most a
    /// quarter live was freed for at most a quarter of a page promoted early. Copies now stay
    /// young below the threshold (aging by copy), so a higher limit costs copying, not early
    /// promotion. ZGC's `ZYoungCompactionLimit` (25) is a *garbage* share: it evacuates young
    /// pages under 75% live. 25, 50 and 75 were measured on binary-trees and message-engine
    /// (the book's engineering notes, issue 27): none measured better on both, since their
    /// young pages are nearly empty or nearly all live, so 25 is kept.
    pub young_evacuation_live_percent: u8,
    /// Which mark color a cycle takes when the mark-color rule leaves two (gc-core's
    /// `MarkColorRule`: never the previous cycle's nor the last major's, so with full cycles
    /// only, two are eligible). [`ColorChoice::Alternate`] (the default) alternates Marked0 and
    /// Marked1 and never touches the Marked2 view: no page-table entry, fault or resident
    /// memory through it. [`ColorChoice::Rotate`] takes the least recently used eligible color,
    /// so cycles rotate Marked1, Marked0, Marked2: the tests' way to run the barriers, the
    /// verifier, the forwarding of stale pointers and the view populating on the third color
    /// today, before a generational mode needs it.
    pub mark_colors: ColorChoice,
}

/// The smallest heap a collecting mode (`concurrent`, `stw`) runs in with the default
/// relocation reserve: three small pages of 2 MiB. The reserve is at least one small page, and
/// mutators need two more: the page a cycle leaves the survivors on, and one to allocate in
/// once that cycle retired the page they were using. With one page left to them, a program
/// runs only as long as no cycle starts before it is done, so it failed at random. `Heap::new`
/// refuses a smaller collected heap (an `epsilon` heap keeps no reserve and runs in one page).
pub const MIN_COLLECTED_HEAP: u64 = 3 * gc_core::GRANULE_SIZE;

impl HeapConfig {
    /// The fewest and most GC worker threads accepted.
    pub const GC_THREADS_RANGE: (usize, usize) = (1, 1024);
    /// The smallest and largest `handle_capacity` accepted (the largest maps 2 GiB of
    /// address space per mutator).
    pub const HANDLE_CAPACITY_RANGE: (usize, usize) = (1, 1 << 28);
    /// The longest `uncommit_delay` accepted (a year; longer, leave it `None`).
    pub const MAX_UNCOMMIT_DELAY: Duration = Duration::from_secs(365 * 24 * 3600);
    /// Pages of the small size mutators of a collected heap need besides the relocation
    /// reserve (see [`MIN_COLLECTED_HEAP`]).
    pub const MIN_MUTATOR_SMALL_PAGES: u64 = 2;

    /// A concurrent heap of `max_heap` bytes with default settings. Reads no environment
    /// (see [`HeapConfig::from_env`]).
    pub fn new(max_heap: u64) -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        HeapConfig {
            memory: gc_core::MemoryConfig::new(max_heap),
            mode: Mode::Concurrent,
            gc_threads: (cores / 2).max(1),
            verify: false,
            log: LogLevel::Off,
            director: DirectorConfig::default(),
            pacing: PacingConfig::default(),
            generational: GenerationalConfig::default(),
            handle_capacity: 1 << 20,
            uncommit_delay: Some(Duration::from_secs(300)),
            max_direct_memory: None,
            relocation_reserve: None,
            membarrier: false,
            track_generations: false,
            tenuring_threshold: None,
            young_evacuation_live_percent: 25,
            mark_colors: ColorChoice::Alternate,
        }
    }
    /// [`HeapConfig::new`] with the environment's overrides, for programs that let a user
    /// experiment without a rebuild: [`LOG_ENV`] (the log level), [`GC_THREADS_ENV`] (GC
    /// worker threads), [`PACING_ENV`] (pacing quantum and longest delay),
    /// [`HUGE_PAGES_ENV`] (the heap's pages) and [`MEMBARRIER_ENV`] (the safepoint's
    /// process-wide barrier). An unset or
    /// empty variable keeps the default; settings made after this call override the
    /// environment's.
    ///
    /// # Errors
    /// [`EnvError`], naming the variable and what it accepts, if a value is malformed.
    pub fn from_env(max_heap: u64) -> Result<Self, EnvError> {
        Self::new(max_heap).with_env_from(|name| match std::env::var(name) {
            Ok(v) => Some(v),
            Err(std::env::VarError::NotPresent) => None,
            Err(std::env::VarError::NotUnicode(v)) => Some(v.to_string_lossy().into_owned()),
        })
    }

    /// Apply the overrides that `var` (an environment lookup) gives for [`ENV_VARS`].
    fn with_env_from(mut self, var: impl Fn(&str) -> Option<String>) -> Result<Self, EnvError> {
        let get = |name: &'static str| {
            var(name)
                .filter(|v| !v.trim().is_empty())
                .map(|v| (name, v))
        };
        let bad = |(variable, value): (&'static str, String), accepted: String| EnvError {
            variable,
            value,
            accepted,
        };
        if let Some(v) = get(LOG_ENV) {
            self.log =
                v.1.parse()
                    .map_err(|_| bad(v, format!("use {LOG_LEVELS}")))?;
        }
        if let Some(v) = get(GC_THREADS_ENV) {
            self.gc_threads = match v.1.trim().parse::<usize>() {
                Ok(n) if n >= 1 => n,
                _ => {
                    return Err(bad(
                        v,
                        "give a whole number of GC threads, 1 or more".into(),
                    ))
                }
            };
        }
        if let Some(v) = get(PACING_ENV[0]) {
            self.pacing.quantum = gc_core::parse_size(&v.1).map_err(|e| bad(v, e))?;
        }
        if let Some(v) = get(PACING_ENV[1]) {
            let us = v.1.trim().parse::<u64>().map_err(|_| {
                bad(
                    v,
                    "give a whole number of microseconds (e.g. 1000 for 1 ms)".into(),
                )
            })?;
            self.pacing.max_delay = Duration::from_micros(us);
        }
        if let Some(v) = get(PACING_ENV[2]) {
            self.pacing.min_mutator_share = v.1.trim().parse::<f64>().map_err(|_| {
                bad(
                    v,
                    "give the mutator's share of each window as a number (e.g. 0.5)".into(),
                )
            })?;
        }
        if let Some(v) = get(PACING_ENV[3]) {
            let us = v.1.trim().parse::<u64>().map_err(|_| {
                bad(
                    v,
                    "give a whole number of microseconds (e.g. 10000 for 10 ms)".into(),
                )
            })?;
            self.pacing.window = Duration::from_micros(us);
        }
        if let Some(v) = get(HUGE_PAGES_ENV) {
            self.memory.huge_pages = v.1.parse().map_err(|e| bad(v, e))?;
        }
        if let Some(v) = get(MEMBARRIER_ENV) {
            self.membarrier = match v.1.trim().to_ascii_lowercase().as_str() {
                "on" => true,
                "off" => false,
                _ => return Err(bad(v, MEMBARRIER_VALUES.into())),
            };
        }
        Ok(self)
    }
    pub fn mode(mut self, mode: Mode) -> Self {
        self.mode = mode;
        self
    }
    pub fn gc_threads(mut self, n: usize) -> Self {
        self.gc_threads = n.max(1);
        self
    }
    pub fn verify(mut self, on: bool) -> Self {
        self.verify = on;
        self
    }
    pub fn log(mut self, level: LogLevel) -> Self {
        self.log = level;
        self
    }
    pub fn initial_heap(mut self, bytes: u64) -> Self {
        self.memory.initial_heap = bytes;
        self
    }
    pub fn backing(mut self, backing: Backing) -> Self {
        self.memory.backing = backing;
        self
    }
    /// Back the heap with huge pages (see [`gc_core::HugePages`]); checked against the system
    /// by [`Self::validate`] and when the heap is created.
    pub fn huge_pages(mut self, huge: gc_core::HugePages) -> Self {
        self.memory.huge_pages = huge;
        self
    }
    pub fn timer(mut self, every: Option<Duration>) -> Self {
        self.director.timer = every;
        self
    }
    /// Cycle at a heap target (see [`HeapTarget`]) instead of by the maximum heap only.
    pub fn heap_target(mut self, target: Option<HeapTarget>) -> Self {
        self.director.heap_target = target;
        self
    }
    /// Uncommit memory unused for `delay` (`None`: never).
    pub fn uncommit_delay(mut self, delay: Option<Duration>) -> Self {
        self.uncommit_delay = delay;
        self
    }
    /// Limit the native memory of direct and pooled buffers (see
    /// [`HeapConfig::max_direct_memory`]).
    pub fn max_direct_memory(mut self, bytes: u64) -> Self {
        self.max_direct_memory = Some(bytes);
        self
    }
    /// The direct-memory limit in effect: [`HeapConfig::max_direct_memory`], or the maximum
    /// heap.
    pub fn direct_memory_limit(&self) -> u64 {
        self.max_direct_memory.unwrap_or(self.memory.max_heap)
    }
    /// Keep `bytes` of the heap for relocation targets (see
    /// [`HeapConfig::relocation_reserve`]).
    pub fn relocation_reserve(mut self, bytes: u64) -> Self {
        self.relocation_reserve = Some(bytes);
        self
    }
    pub fn continuous(mut self, on: bool) -> Self {
        self.director.continuous = on;
        self
    }
    /// Which mark color a cycle takes of the two the rule leaves (see
    /// [`HeapConfig::mark_colors`]).
    pub fn mark_colors(mut self, choice: ColorChoice) -> Self {
        self.mark_colors = choice;
        self
    }
    /// Use the process-wide barrier where the system offers it, or not (see
    /// [`HeapConfig::membarrier`]).
    pub fn membarrier(mut self, on: bool) -> Self {
        self.membarrier = on;
        self
    }

    /// Keep page ages and a complete remembered set, or not (see
    /// [`HeapConfig::track_generations`]).
    pub fn track_generations(mut self, on: bool) -> Self {
        self.track_generations = on;
        self
    }

    /// A fixed age at which minors promote a page's survivors (see
    /// [`HeapConfig::tenuring_threshold`]; checked by [`Self::validate`]).
    pub fn tenuring_threshold(mut self, age: u8) -> Self {
        self.tenuring_threshold = Some(age);
        self
    }

    /// Let minors compute the tenuring threshold from measured survival (the default; see
    /// [`HeapConfig::tenuring_threshold`]).
    pub fn adaptive_tenuring(mut self) -> Self {
        self.tenuring_threshold = None;
        self
    }

    /// The live share under which minors evacuate a young page (see
    /// [`HeapConfig::young_evacuation_live_percent`]; 0 turns it off; checked by
    /// [`Self::validate`]).
    pub fn young_evacuation_live_percent(mut self, percent: u8) -> Self {
        self.young_evacuation_live_percent = percent;
        self
    }

    /// True if the heap keeps page ages, the store barrier and the remembered set:
    /// [`HeapConfig::track_generations`] on, or the `generational` mode.
    pub fn tracks_generations(&self) -> bool {
        self.track_generations || self.mode == Mode::Generational
    }

    /// The young generation's size of a `generational` heap (see
    /// [`GenerationalConfig::young_size`]).
    pub fn young_size(mut self, bytes: u64) -> Self {
        self.generational.young_size = Some(bytes);
        self
    }

    /// The young-generation size in effect: [`GenerationalConfig::young_size`], or a quarter
    /// of the maximum heap, at most [`GenerationalConfig::DEFAULT_MAX_YOUNG_SIZE`] and at
    /// least [`GenerationalConfig::MIN_YOUNG_SIZE`].
    pub fn young_size_bytes(&self) -> u64 {
        self.generational.young_size.unwrap_or_else(|| {
            (self.memory.max_heap / 4).clamp(
                GenerationalConfig::MIN_YOUNG_SIZE,
                GenerationalConfig::DEFAULT_MAX_YOUNG_SIZE,
            )
        })
    }

    /// Turn mutator pacing on or off (see [`PacingConfig`]).
    pub fn pacing(mut self, on: bool) -> Self {
        self.pacing.enabled = on;
        self
    }
    /// The longest single pacing delay (checked by [`Self::validate`] and when the heap is
    /// created).
    pub fn pacing_max_delay(mut self, max: Duration) -> Self {
        self.pacing.max_delay = max;
        self
    }
    /// Bytes allocated between two pacing decisions (see [`PacingConfig::quantum`]).
    pub fn pacing_quantum(mut self, bytes: u64) -> Self {
        self.pacing.quantum = bytes;
        self
    }

    /// The pacer's floor: no mutator held more than `1 − share` of any `window` (see
    /// [`PacingConfig::min_mutator_share`]; checked by [`Self::validate`]).
    pub fn pacing_floor(mut self, share: f64, window: Duration) -> Self {
        self.pacing.min_mutator_share = share;
        self.pacing.window = window;
        self
    }
    /// True if this heap paces its mutators: pacing on, in `concurrent` or `generational`
    /// mode.
    pub fn paces(&self) -> bool {
        self.pacing.enabled && self.mode.is_concurrent()
    }

    /// Check the memory and policy settings (both are checked when the heap is created, too):
    /// each numeric setting against its documented range, the huge-page setting against what
    /// the system allows now, and a collected heap against
    /// [`MIN_COLLECTED_HEAP`] (its reserve must leave mutators two small pages). The error
    /// names the setting and what to give instead.
    pub fn validate(&self) -> Result<(), HeapError> {
        self.validate_settings()?;
        self.memory.validate()?;
        gc_core::HugePageSystem::read().check(
            self.memory.huge_pages,
            self.memory.max_heap,
            self.memory.backing.directory(),
        )?;
        self.validate_room_beyond_reserve(
            gc_core::GRANULE_SIZE,
            self.relocation_reserve_bytes(gc_core::GRANULE_SIZE, None, 1),
        )
    }

    /// The bytes kept from mutators for relocation targets (see
    /// [`HeapConfig::relocation_reserve`]), for small and medium pages of the given sizes and
    /// `cores` available: the configured reserve, or one small page per GC worker (at least
    /// one per core) and one for mutators, plus a medium page, but never more than an eighth
    /// of the heap (at least one small page). Zero for `epsilon` heaps, which never relocate.
    /// Saturating: no setting makes it wrap.
    pub(crate) fn relocation_reserve_bytes(
        &self,
        small: u64,
        medium: Option<u64>,
        cores: usize,
    ) -> u64 {
        if self.mode == Mode::Epsilon {
            return 0;
        }
        if let Some(bytes) = self.relocation_reserve {
            return bytes;
        }
        let small = small.max(1);
        let pages = (self.gc_threads.max(cores) as u64).saturating_add(1);
        let wanted = pages
            .saturating_mul(small)
            .saturating_add(medium.unwrap_or(0));
        let cap = (self.memory.max_heap / 8 / small)
            .max(1)
            .saturating_mul(small);
        wanted.min(cap)
    }

    /// Refuse a collected heap whose relocation reserve of `reserve` bytes leaves mutators
    /// fewer than [`Self::MIN_MUTATOR_SMALL_PAGES`] small pages of `small` bytes.
    pub(crate) fn validate_room_beyond_reserve(
        &self,
        small: u64,
        reserve: u64,
    ) -> Result<(), HeapError> {
        if self.mode == Mode::Epsilon {
            return Ok(());
        }
        let need = Self::MIN_MUTATOR_SMALL_PAGES.saturating_mul(small);
        let max = self.memory.max_heap;
        if max.saturating_sub(reserve) >= need {
            return Ok(());
        }
        let problem = if self.relocation_reserve.is_some() {
            format!(
                "is {} with a relocation_reserve of {}: a {} heap needs {} beyond the reserve \
                 (the page a cycle leaves survivors on and one to allocate in): give at least \
                 {}, or a smaller reserve",
                gc_core::format_size(max),
                gc_core::format_size(reserve),
                self.mode,
                gc_core::format_size(need),
                gc_core::format_size(
                    reserve
                        .saturating_add(need)
                        .div_ceil(small)
                        .saturating_mul(small)
                ),
            )
        } else {
            format!(
                "is {}: a {} heap needs at least {} (a relocation reserve of one page, the \
                 page a cycle leaves survivors on and one to allocate in): give at least {}, \
                 or use the epsilon mode, which never collects",
                gc_core::format_size(max),
                self.mode,
                gc_core::format_size(MIN_COLLECTED_HEAP),
                gc_core::format_size(MIN_COLLECTED_HEAP),
            )
        };
        Err(HeapError::InvalidSetting {
            setting: "max_heap",
            problem,
        })
    }

    /// The policy settings' ranges (everything but the heap geometry).
    fn validate_settings(&self) -> Result<(), HeapError> {
        let (tlo, thi) = Self::GC_THREADS_RANGE;
        if !(tlo..=thi).contains(&self.gc_threads) {
            return Err(HeapError::InvalidSetting {
                setting: "gc_threads",
                problem: format!(
                    "is {}: give between {tlo} and {thi} GC worker threads (e.g. half the cores, \
                     the default)",
                    self.gc_threads
                ),
            });
        }
        let (hlo, hhi) = Self::HANDLE_CAPACITY_RANGE;
        if !(hlo..=hhi).contains(&self.handle_capacity) {
            return Err(HeapError::InvalidSetting {
                setting: "handle_capacity",
                problem: format!(
                    "is {}: give between {hlo} and {hhi} (2^28) handles per mutator (e.g. 2^20, \
                     the default)",
                    self.handle_capacity
                ),
            });
        }
        if let Some(d) = self
            .uncommit_delay
            .filter(|&d| d > Self::MAX_UNCOMMIT_DELAY)
        {
            return Err(HeapError::InvalidSetting {
                setting: "uncommit_delay",
                problem: format!(
                    "is {d:?}: give at most a year (e.g. 5 minutes, the default), or none to \
                     keep memory committed"
                ),
            });
        }
        if let Some(t) = self
            .tenuring_threshold
            .filter(|&t| t > gc_core::MAX_SURVIVOR_AGE)
        {
            return Err(HeapError::InvalidSetting {
                setting: "tenuring_threshold",
                problem: format!(
                    "is {t}: give an age between 0 (promote every survivor at its first minor \
                     cycle) and {} (the oldest survivor age), e.g. 1, or none (the default) to \
                     compute it from measured survival",
                    gc_core::MAX_SURVIVOR_AGE
                ),
            });
        }
        if self.young_evacuation_live_percent > 100 {
            return Err(HeapError::InvalidSetting {
                setting: "young_evacuation_live_percent",
                problem: format!(
                    "is {}: give a percentage of a page between 0 (minors evacuate nothing) \
                     and 100, e.g. 25, the default",
                    self.young_evacuation_live_percent
                ),
            });
        }
        self.director.validate()?;
        self.pacing.validate()?;
        self.validate_young_size()?;
        if self.max_direct_memory == Some(0) {
            return Err(HeapError::InvalidSetting {
                setting: "max_direct_memory",
                problem: "is 0: give a limit of at least one byte (e.g. 64m), or leave it \
                          unset for a limit equal to the maximum heap"
                    .into(),
            });
        }
        if let Some(r) = self
            .relocation_reserve
            .filter(|&r| r > self.memory.max_heap / 2)
        {
            return Err(HeapError::InvalidSetting {
                setting: "relocation_reserve",
                problem: format!(
                    "is {} of a {} heap: keep at most half the heap from mutators (give a \
                     smaller reserve), or leave it unset for the default",
                    gc_core::format_size(r),
                    gc_core::format_size(self.memory.max_heap)
                ),
            });
        }
        Ok(())
    }
}

impl HeapConfig {
    /// Refuse a young-generation size outside one small page .. half the maximum heap.
    fn validate_young_size(&self) -> Result<(), HeapError> {
        let Some(young) = self.generational.young_size else {
            return Ok(());
        };
        let (lo, hi) = (GenerationalConfig::MIN_YOUNG_SIZE, self.memory.max_heap / 2);
        if (lo..=hi).contains(&young) {
            return Ok(());
        }
        Err(HeapError::InvalidSetting {
            setting: "young_size",
            problem: format!(
                "is {}: give between {} (one small page) and half the maximum heap ({}), or \
                 leave it unset for the default ({}: a quarter of the maximum heap, at most \
                 64M)",
                gc_core::format_size(young),
                gc_core::format_size(lo),
                gc_core::format_size(hi),
                gc_core::format_size(
                    HeapConfig {
                        generational: GenerationalConfig::default(),
                        ..self.clone()
                    }
                    .young_size_bytes()
                ),
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The generational mode implies the bookkeeping; its name round-trips; a young size
    /// out of range is refused naming the setting and the range.
    #[test]
    fn the_generational_mode_and_its_young_size() {
        let g = HeapConfig::new(64 << 20).mode(Mode::Generational);
        assert!(g.tracks_generations() && g.mode.is_concurrent() && g.paces());
        assert!(!HeapConfig::new(64 << 20).tracks_generations());
        assert!(!Mode::Stw.is_concurrent() && !Mode::Epsilon.is_concurrent());
        assert_eq!("Generational".parse::<Mode>(), Ok(Mode::Generational));
        assert_eq!(Mode::Generational.to_string(), "generational");
        assert!(Mode::ALL.contains(&Mode::Generational));
        assert!("gen".parse::<Mode>().unwrap_err().contains("generational"));
        assert_eq!(g.young_size_bytes(), 16 << 20);
        let big = HeapConfig::new(4 << 30).mode(Mode::Generational);
        assert_eq!(big.young_size_bytes(), 64 << 20);
        let small = HeapConfig::new(6 << 20).mode(Mode::Generational);
        assert_eq!(small.young_size_bytes(), 2 << 20);
        g.validate_settings().unwrap();
        g.clone().young_size(32 << 20).validate_settings().unwrap();
        for bad in [(2 << 20) - 1, (32 << 20) + 1] {
            match g.clone().young_size(bad).validate_settings() {
                Err(HeapError::InvalidSetting { setting, problem }) => {
                    assert_eq!(setting, "young_size");
                    assert!(problem.contains("half the maximum heap (32M)"), "{problem}");
                }
                other => panic!("{bad}: {other:?}"),
            }
        }
    }

    /// [`HeapConfig::with_env_from`] over a fixed environment of `vars`.
    fn with_vars(vars: &[(&str, &str)]) -> Result<HeapConfig, EnvError> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        HeapConfig::new(64 << 20)
            .with_env_from(|name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()))
    }

    #[test]
    fn each_variable_overrides_its_setting() {
        let c = with_vars(&[
            (LOG_ENV, "Phases"),
            (GC_THREADS_ENV, "3"),
            (PACING_ENV[0], "128K"),
            (PACING_ENV[1], "250"),
            (PACING_ENV[2], "0.25"),
            (PACING_ENV[3], "20000"),
            (HUGE_PAGES_ENV, "Hugetlb"),
            (MEMBARRIER_ENV, " OFF"),
        ])
        .unwrap();
        assert!(!c.membarrier);
        assert!(with_vars(&[(MEMBARRIER_ENV, " On")]).unwrap().membarrier);
        assert_eq!(c.pacing.min_mutator_share, 0.25);
        assert_eq!(c.pacing.window, Duration::from_millis(20));
        assert_eq!(c.memory.huge_pages, gc_core::HugePages::Hugetlb);
        assert_eq!(c.log, LogLevel::Phases);
        assert_eq!(c.gc_threads, 3);
        assert_eq!(c.pacing.quantum, 128 << 10);
        assert_eq!(c.pacing.max_delay, Duration::from_micros(250));
        for (value, level) in [
            ("off", LogLevel::Off),
            ("gc", LogLevel::Gc),
            ("1", LogLevel::Gc),
            ("debug", LogLevel::Debug),
        ] {
            assert_eq!(
                with_vars(&[(LOG_ENV, value)]).unwrap().log,
                level,
                "{value}"
            );
        }
    }

    #[test]
    fn unset_or_empty_variables_keep_the_defaults() {
        let defaults = HeapConfig::new(64 << 20);
        for c in [
            with_vars(&[]).unwrap(),
            with_vars(&[(LOG_ENV, ""), (GC_THREADS_ENV, " "), (PACING_ENV[0], "")]).unwrap(),
        ] {
            assert_eq!(c.log, LogLevel::Off);
            assert_eq!(c.gc_threads, defaults.gc_threads);
            assert_eq!(c.pacing, defaults.pacing);
            assert_eq!(c.memory.huge_pages, gc_core::HugePages::Off);
            assert!(!c.membarrier);
        }
    }

    #[test]
    fn a_malformed_value_is_an_error_naming_the_variable_and_what_it_accepts() {
        for (variable, value, accepted) in [
            (LOG_ENV, "phase", "off, gc, phases or debug"),
            (
                GC_THREADS_ENV,
                "two",
                "a whole number of GC threads, 1 or more",
            ),
            (
                GC_THREADS_ENV,
                "0",
                "a whole number of GC threads, 1 or more",
            ),
            (PACING_ENV[0], "16 bytes", "is not a size"),
            (PACING_ENV[1], "1ms", "a whole number of microseconds"),
            (PACING_ENV[2], "half", "share of each window as a number"),
            (PACING_ENV[3], "10ms", "a whole number of microseconds"),
            (HUGE_PAGES_ENV, "thp", "off, transparent or hugetlb"),
            (MEMBARRIER_ENV, "yes", "use off (the default"),
            (MEMBARRIER_ENV, "auto", "or on (membarrier"),
        ] {
            let e = with_vars(&[(variable, value)]).unwrap_err();
            assert_eq!((e.variable, e.value.as_str()), (variable, value));
            let msg = e.to_string();
            assert!(
                msg.contains(variable) && msg.contains(value) && msg.contains(accepted),
                "{msg}"
            );
        }
    }

    /// A variable that parses but is out of range is refused when the config is checked (and
    /// so by `Heap::new`), naming the setting it overrides.
    #[test]
    fn an_out_of_range_variable_is_refused_by_validate_naming_the_setting() {
        for (variable, value, setting) in [
            (GC_THREADS_ENV, "18446744073709551615", "gc_threads"),
            (GC_THREADS_ENV, "1025", "gc_threads"),
            (PACING_ENV[0], "1T", "pacing_quantum"),
            (PACING_ENV[1], "18446744073709551615", "pacing_max_delay"),
            (PACING_ENV[2], "1", "pacing_min_mutator_share"),
            (PACING_ENV[2], "-0.1", "pacing_min_mutator_share"),
            (PACING_ENV[2], "NaN", "pacing_min_mutator_share"),
            (PACING_ENV[3], "999", "pacing_window"),
            (PACING_ENV[3], "1000001", "pacing_window"),
        ] {
            let c = with_vars(&[(variable, value)]).unwrap();
            match c.validate() {
                Err(HeapError::InvalidSetting { setting: s, .. }) => {
                    assert_eq!(s, setting, "{variable}={value}")
                }
                other => panic!("{variable}={value}: {other:?}"),
            }
        }
        with_vars(&[(GC_THREADS_ENV, "1024")])
            .unwrap()
            .validate()
            .unwrap();
    }
}
