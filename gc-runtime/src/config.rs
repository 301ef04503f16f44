//! Runtime configuration: the heap geometry (`gc_core::MemoryConfig`) plus the collector's policy
//! knobs — mode, GC threads, verification, logging, director and pacing settings.

use gc_core::{Backing, HeapError};
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
    /// Every phase inside one pause plus a full remap (Serial/Parallel-style baseline).
    Stw,
    /// Allocate only, never collect (barrier-cost baseline).
    Epsilon,
}

impl Mode {
    /// Every mode, in report order.
    pub const ALL: [Mode; 3] = [Mode::Concurrent, Mode::Stw, Mode::Epsilon];

    /// The mode's name as used on command lines and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Concurrent => "concurrent",
            Mode::Stw => "stw",
            Mode::Epsilon => "epsilon",
        }
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
            _ => Err(format!(
                "unknown GC mode {s:?}: use concurrent, stw or epsilon"
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

/// The environment variable that turns the GC log on for any program using the runtime:
/// `ZRS_GC_LOG=gc`, `ZRS_GC_LOG=phases` or `ZRS_GC_LOG=debug`.
pub const LOG_ENV: &str = "ZRS_GC_LOG";

impl LogLevel {
    /// The level the environment asks for, if any.
    pub fn from_env() -> Option<LogLevel> {
        match std::env::var(LOG_ENV).ok()?.to_ascii_lowercase().as_str() {
            "off" | "0" | "" => Some(LogLevel::Off),
            "gc" | "info" | "1" => Some(LogLevel::Gc),
            "debug" | "pacing" | "3" => Some(LogLevel::Debug),
            _ => Some(LogLevel::Phases),
        }
    }
}

/// Director settings (when to start a cycle).
#[derive(Clone, Debug)]
pub struct DirectorConfig {
    /// How often the rules are checked.
    pub interval: Duration,
    /// Start a cycle at least this often (ZGC's `ZCollectionInterval`); `None` = never.
    pub timer: Option<Duration>,
    /// Run cycles back to back (for stress tests).
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
    /// The target never goes below this.
    pub min_bytes: u64,
    /// How much the heap may grow past what the last cycle left, in percent (100: double).
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
    /// Bytes a mutator allocates between two pacing decisions (default 256 KiB, between
    /// 4 KiB and 64 MiB; an object larger than this is one decision of its own size). Small
    /// quanta make many short delays rather than a few long ones.
    pub quantum: u64,
    /// Safety factor on the expected cycle duration (default 1.25, between 1 and 10): free
    /// memory is budgeted to last this much longer than recent cycles took.
    pub duration_margin: f64,
}

impl Default for PacingConfig {
    fn default() -> Self {
        PacingConfig {
            enabled: true,
            max_delay: Duration::from_millis(1),
            quantum: 64 << 10,
            duration_margin: 1.25,
        }
    }
}

/// Environment overrides of the pacing defaults, for experiments (as `ZRS_GC_THREADS` is for
/// the GC threads): `ZRS_PACING_QUANTUM` in bytes (suffixes K/M/G allowed) and
/// `ZRS_PACING_MAX_DELAY_US` in microseconds. A value that does not parse is ignored; one out
/// of range is refused when the heap is created, like the same setting made in code.
pub const PACING_ENV: [&str; 2] = ["ZRS_PACING_QUANTUM", "ZRS_PACING_MAX_DELAY_US"];

impl PacingConfig {
    /// The settings with [`PACING_ENV`] applied.
    pub fn with_env_overrides(mut self) -> Self {
        if let Some(q) = std::env::var(PACING_ENV[0])
            .ok()
            .and_then(|v| gc_core::parse_size(&v).ok())
        {
            self.quantum = q;
        }
        if let Some(us) = std::env::var(PACING_ENV[1])
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
        {
            self.max_delay = Duration::from_micros(us);
        }
        self
    }

    /// The shortest and longest `max_delay` accepted.
    pub const MAX_DELAY_RANGE: (Duration, Duration) =
        (Duration::from_micros(1), Duration::from_secs(1));
    /// The smallest and largest `quantum` accepted.
    pub const QUANTUM_RANGE: (u64, u64) = (4 << 10, 64 << 20);

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
        Ok(())
    }
}

/// Everything needed to create a [`crate::Heap`].
#[derive(Clone, Debug)]
pub struct HeapConfig {
    /// Memory geometry: max/initial heap, backing, huge pages.
    pub memory: gc_core::MemoryConfig,
    pub mode: Mode,
    /// GC worker threads for concurrent phases (default: half the available cores, at least 1).
    pub gc_threads: usize,
    /// Run the verifier in every pause and poison freed pages.
    pub verify: bool,
    pub log: LogLevel,
    pub director: DirectorConfig,
    /// Mutator pacing (on by default; used by `concurrent` heaps only).
    pub pacing: PacingConfig,
    /// Capacity of each mutator's local-handle stack.
    pub handle_capacity: usize,
    /// Uncommit memory the heap has not needed for this long (ZGC's `ZUncommitDelay`, also
    /// 5 minutes by default); `None` keeps everything committed once it was.
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
}

impl HeapConfig {
    /// A concurrent heap of `max_heap` bytes with default settings; the log level comes from
    /// `ZRS_GC_LOG` if set.
    pub fn new(max_heap: u64) -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        HeapConfig {
            memory: gc_core::MemoryConfig::new(max_heap),
            mode: Mode::Concurrent,
            // `ZRS_GC_THREADS` overrides the default, for experiments.
            gc_threads: std::env::var("ZRS_GC_THREADS")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or((cores / 2).max(1)),
            verify: false,
            log: LogLevel::from_env().unwrap_or(LogLevel::Off),
            director: DirectorConfig::default(),
            pacing: PacingConfig::default().with_env_overrides(),
            handle_capacity: 1 << 20,
            uncommit_delay: Some(Duration::from_secs(300)),
            max_direct_memory: None,
            relocation_reserve: None,
        }
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

    /// True if this heap paces its mutators: pacing on, in `concurrent` mode.
    pub fn paces(&self) -> bool {
        self.pacing.enabled && self.mode == Mode::Concurrent
    }

    /// Check the memory and policy settings (both are checked when the heap is created, too).
    pub fn validate(&self) -> Result<(), HeapError> {
        self.pacing.validate()?;
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
                    "is {} of a {} heap: keep at most half the heap from mutators, or leave \
                     it unset for the default",
                    gc_core::format_size(r),
                    gc_core::format_size(self.memory.max_heap)
                ),
            });
        }
        self.memory.validate().map(|_| ())
    }
}
