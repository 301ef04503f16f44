//! The director (ZGC's `ZDirector`): decides when a cycle starts. Checked every
//! `interval` (10 ms by default); the first rule that matches wins and names the cause:
//!
//! 1. **Allocation Stall** — a mutator is waiting for memory and asks for a cycle (also
//!    requested directly); a stall that began during a major asks only once that major's end
//!    did not let it allocate (`StallRequest`), and until it has retried nothing starts; a
//!    stall whose requested cycle completed counts again only once its retry failed;
//! 2. **Warmup** — before 3 cycles have run, at 10%, 20%, 30% heap usage, and a tenth of the
//!    heap above what the last cycle left (`warmup_due`);
//! 3. **Timer** — the configured interval has passed since the last cycle;
//! 4. **Heap Target** — (only with `DirectorConfig::heap_target`) usage reached a multiple of
//!    what the last cycle left, so a heap whose maximum is large stays near what the program
//!    needs (Go's `GOGC` rule; the JVM sizes its heap between `-Xms` and `-Xmx` to a similar
//!    end). The target is computed without overflow (a `growth_percent` near `u32::MAX` is a
//!    target no heap reaches), and the rule fires only if mutators allocated since the last
//!    cycle ended: a target at or below what that cycle left means "collect as soon as the
//!    program allocates again", never "collect an idle heap back to back";
//! 5. **Allocation Rate** — (only once a cycle has completed, `allocation_rate_due`) mutators
//!    allocated since the last cycle ended or in the last 100 ms, and at the recent allocation
//!    rate (+20%: the larger of the last-second and
//!    last-100-ms averages) the memory mutators may still take would run out before a cycle
//!    could finish: its expected duration is the larger of twice the recent mean and the mean
//!    plus 3.3 standard deviations (ZGC's
//!    "one in a thousand" margin), plus one check interval. Each recent duration is first
//!    scaled to the heap as it is now, because a cycle's work grows with the data it marks
//!    and moves: a cycle that left `u` bytes in use counts as `used / u` times as long (at
//!    least 1, at most `MAX_SCALE`) when `used` bytes are in use now, so the warmup cycles,
//!    which ran on a fraction of the live set, do not make the director start late once the
//!    program has built it. In the `stw` mode, whose cycle is one pause during which
//!    mutators allocate nothing, a cycle needs no free memory at all when it starts: the
//!    rule asks only that free memory last two checks (`major_needs`), so a `stw` heap is
//!    collected when it is nearly full, as a stop-the-world collector collects when an
//!    allocation fails, not with the room a concurrent cycle needs;
//! 6. **Direct Memory** — direct and pooled buffers hold 75% of `max_direct_memory` or more,
//!    and buffers of a quarter of it were allocated since the last cycle started: dead owners
//!    may hold memory only a cycle's cleaners can free, and a cycle now saves an allocation
//!    at the limit from waiting for one (JDK's direct buffers only collect at the limit);
//! 7. **High Usage** — 5% of the heap or less is left for mutators;
//! 8. **Proactive** — the heap grew by 10% (or 5 minutes passed) since the last cycle and a
//!    cycle now would cost under 1% of the time since the last one; in the `generational`
//!    mode, while minors pay, the growth counts only right after a minor, as the heap
//!    target's does (`proactive_due`).
//!
//! "Free" is what mutators may still take: the heap less the pages in use *and* less the
//! relocation reserve, which they can never use (on small heaps the reserve is up to an
//! eighth of the heap). When a mutator outruns a cycle that started in time, the pacer
//! (`pacer`) slows it.
//!
//! Each of these rules starts a **major** (full) cycle, and their history is the majors'
//! only: "the last cycle" of the warmup, timer, heap-target and proactive rules is the last
//! major, the durations the allocation-rate rule predicts from are majors', and "cycles
//! completed" counts majors. A minor requested by the embedder (`Heap::collect_minor`)
//! changes none of it.
//!
//! **The `generational` mode** replaces the allocation-rate rule (5) with lines of its own and
//! adds a young-occupancy rule, all checked after the other rules (so a major wins whenever
//! the heap as a whole needs one by them, but for High Usage between minors that pay, below;
//! `generational_choice`). Three lines of free memory
//! at the allocation rate: the *major line* (rule 5's test: free memory would not last
//! through a major, with its margin), the *old line* (not through the shortest recent major,
//! no margin) and the *lowest line* (not through a minor alone). Which apply depends on
//! whether **minors pay** (`minor_paid`): the last minor freed at least half of the young
//! generation it collected, *and* freed at least as many bytes per GC CPU nanosecond as the
//! recent majors (their yield, `major_yield`; the half alone before any major completed).
//! The second test is the mode's purpose: a program's GC CPU per allocated byte is about the
//! CPU of its cycles over the bytes they free, so a minor that frees less per CPU second
//! than a major makes the program pay more than majors alone would. A young generation that
//! is mostly live (message-engine keeps every message for the retention window, longer than
//! the young generation takes to fill) fails both: its minor marks about what a major marks
//! and frees nothing. Before the first minor, and again `RETRY_MINORS_AFTER` (8) majors after
//! a minor did not pay (and not before those majors took eight times its GC CPU:
//! `retry_minors_due`), minors are assumed to pay, and one is tried (without that, a program
//! whose minors would pay never got one where majors run back to back, as binary-trees at
//! 256M). A minor that pays after one that did not starts the minors' duration history
//! afresh: a minor of a mostly live young generation took a hundred times as long as the
//! binary-trees minors that followed, and its duration, in the margin, made every one of
//! them look too slow to run before a major.
//!
//! - While minors do not pay, the mode is the concurrent one: **Allocation Rate** (a major)
//!   below the major line, and no minor at all (a minor there only costs what it marks); the
//!   majors started then, but for the one before a retry, also stop the store barrier's
//!   remembering until the next major (`Director::keeps_remembered_set`, read by the driver
//!   at each major's Pause Mark Start), as no minor will read the set;
//! - while they pay, right after a minor whose leftovers grew (it left more in use than the
//!   minor before it, since the last major: `leftovers_grow`), a major (**Allocation Rate**)
//!   below the old line: free memory is at its highest right after a minor and shrinks from
//!   one minor to the next, so a major started later starts with less, and a major that
//!   starts at the lowest line stalls the mutators (binary-trees at 256M: about 20 MB free at
//!   1.2 GB/s for a 57 ms major). The major line asks too much here (its margin, twice the
//!   mean, wants more free memory than a major leaves: a major after every minor);
//! - while they pay, below the lowest line **Minor Allocation Rate**, or a major (**Allocation
//!   Rate**) right after a minor: that minor did not lift free memory above the line, so
//!   minors no longer keep up and the old generation's headroom is spent;
//! - while they pay, **High Usage** (rule 7) between two minors starts a minor (**Minor
//!   Allocation Rate**), and a major only right after a minor: it is the young generation
//!   that filled the heap, a minor frees it in a millisecond, and the old line decides after
//!   it; a major started with 5% of the heap free stalled the mutators (binary-trees at 256M,
//!   where every stall left after the old line came at such a major);
//! - **Minor Young Occupancy** — while minors pay, mutators allocated the young generation's
//!   size since the last cycle, minor or major, started: every byte allocated since then
//!   is on young pages no cycle has marked (`young_due`). The size is
//!   `HeapConfig::young_size_bytes` (a quarter of the heap and at most 64 MiB by default),
//!   or with a heap target the room the target leaves above what the last cycle left, if
//!   larger (`young_size_now`): a minor then starts no earlier than a major would;
//! - **Continuous** runs three minors (`MinorContinuous`) for every major;
//! - **Heap Target** (major), while minors pay, is checked only right after a minor: against
//!   the heap as minors leave it, the old generation and the survivors (a heap in use up to
//!   the target between two minors is mostly young garbage the next minor frees). Lox's
//!   heap runs with a heap target: its majors would otherwise come before every minor.
//!
//! While minors pay, free memory may sink below the major line: minors run down to the old
//! line while their leftovers grow, and to the lowest line while they do not; a major starts
//! when a minor leaves free memory below the line that applies, or by the other rules (high
//! usage among them); the pacer keeps mutators within the memory left while it runs. A minor's duration is predicted from the
//! recent minors with the majors' margin (`with_margin`), unscaled (its work is the young
//! live set, not the heap), and as a major's before any minor ran. An allocation stall always
//! asks for a major (rule 1, and the stalled mutator's own request, which replaces a pending
//! minor one), unless it began while a major ran: that major's end answers it if the
//! allocation can then proceed (`StallRequest` in `context/cycle_control.rs`), and while such
//! a stall has yet to retry, the director starts nothing.

use crate::config::HeapTarget;
use crate::heap::HeapInner;
use crate::observe::GcCause;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// Majors after a minor that did not pay before minors are assumed to pay again (the
/// program may have moved on to garbage that dies young): one minor is then tried where free
/// memory reaches the lowest line, and a major follows at once if it does not pay either.
/// A tried minor of a mostly live young generation costs a quarter to a third of a major
/// (message-engine), so a few percent more GC CPU than majors alone. A program that builds
/// its live set before its garbage dies young (binary-trees) finds its minors paying at most
/// this many majors late. Four, in one A/B, doubled heap-churn's tries at 256M for nothing;
/// doubling the wait after each failed try cost binary-trees at 1G most of its gain.
const RETRY_MINORS_AFTER: u64 = 8;

/// Whether minors are tried again after one that did not pay: [`RETRY_MINORS_AFTER`] majors
/// completed since (`majors_since`), and their GC CPU (`major_cpu_since`, ns) reached
/// [`RETRY_MINORS_AFTER`] times the unpaid minor's (`unpaid_minor_cpu`), so that tried minors
/// cost at most about an eighth of the GC CPU of the majors between them. Lox's `queue.lox`
/// (64m heap): its popped nodes are old after each major and keep the young nodes behind
/// them alive, so its minors mark a young generation that is all live, for 6–9 ms of GC CPU
/// against 0.3–0.6 ms per major; tried after every eighth major, they made the
/// `generational` run cost 1.7–2.5 times the `concurrent` one. A tried minor of a mostly live
/// young generation that costs less than a major (message-engine's, a quarter to a third)
/// waits [`RETRY_MINORS_AFTER`] majors as before.
fn retry_minors_due(majors_since: u64, major_cpu_since: u64, unpaid_minor_cpu: u64) -> bool {
    majors_since >= RETRY_MINORS_AFTER
        && major_cpu_since >= unpaid_minor_cpu.saturating_mul(RETRY_MINORS_AFTER)
}

/// Recent majors whose shortest duration is the old line's (see [`leftovers_grow`]).
const OLD_LINE_MAJORS: usize = 3;

/// Recent majors whose freed bytes and GC CPU time make the yield a minor must reach.
const YIELD_MAJORS: usize = 10;

/// What a completed cycle did, as the director weighs it: whether it was a minor, the bytes
/// it freed (in use at its start plus allocated while it ran, less in use at its end) and
/// the GC CPU time it took (all GC threads).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct CycleYield {
    pub minor: bool,
    pub freed: u64,
    pub gc_cpu_ns: u64,
}

/// The most a recent cycle's duration is scaled up by the heap's growth since it ended (a
/// cycle of a nearly empty heap is mostly fixed costs, which do not grow with the heap).
const MAX_SCALE: f64 = 8.0;

pub(super) struct Director {
    /// (time, bytes allocated so far), newest last, covering about one second.
    samples: VecDeque<(Instant, u64)>,
    /// The young generation's size (`generational` mode only): the minor rule's threshold.
    young_size: Option<u64>,
    /// Bytes mutators had allocated when the last cycle (minor or major) started.
    allocated_at_last_start: u64,
    /// Majors completed (the warmup and allocation-rate rules count these).
    majors: u64,
    /// Recent minors' durations in seconds, newest last (the generational rate rule).
    minor_durations: VecDeque<f64>,
    /// The last cycle completed was a minor, and `decide` has not run since.
    minor_just_ended: bool,
    /// Bytes in use after each of the last two minors since the last major, newest last:
    /// whether the minors' leftovers grow (`leftovers_grow`).
    minor_leftovers: VecDeque<u64>,
    /// Bytes allocated between the start of the cycle before the running one and its start:
    /// the young generation the running cycle collects.
    young_at_start: u64,
    /// The last minor paid (`minor_paid`), or no minor has run since the heap was created
    /// or since [`RETRY_MINORS_AFTER`] majors.
    minors_pay: bool,
    /// Majors completed since a minor did not pay (see [`RETRY_MINORS_AFTER`]).
    majors_since_unpaid: u64,
    /// The GC CPU ns of the last minor that did not pay, and the majors' since it
    /// (`retry_minors_due`).
    unpaid_minor_cpu: u64,
    major_cpu_since_unpaid: u64,
    /// The last minor completed paid (`true` before any).
    last_minor_paid: bool,
    /// The embedder asked for a minor (`Heap::collect_minor`) at least once: the remembered
    /// set is then kept for its minors whatever the director's own minors do.
    minors_requested: bool,
    /// Recent majors' (bytes freed, GC CPU ns), newest last, at most [`YIELD_MAJORS`].
    major_yields: VecDeque<(u64, u64)>,
    last_cycle_end: Instant,
    used_after_last: u64,
    /// Bytes in use when the last cycle, minor or major, ended (the young generation's room,
    /// `young_size_now`).
    used_after_cycle: u64,
    /// Recent cycles: duration in seconds, and the bytes in use when each ended.
    durations: VecDeque<(f64, u64)>,
    /// Bytes of direct buffers allocated before the last cycle started.
    direct_at_last_start: u64,
    /// Whether cycles run concurrently (else in one pause): recent durations are scaled to
    /// the heap in use, and the allocation-rate rule leaves room for the mutators to
    /// allocate while a cycle runs (`major_needs`).
    concurrent: bool,
    /// Bytes mutators had allocated when the last cycle ended (`None`: a cycle just ended,
    /// and the next `decide` reads it; the driver calls `decide` right after a cycle).
    allocated_at_last: Option<u64>,
}

/// The heap target (see the module documentation): `max(min_bytes, left × (100 +
/// growth_percent) / 100)`, in bytes, for a last cycle that left `left` bytes in use; at most
/// `u64::MAX` (no setting wraps it to a smaller target).
fn heap_target(left: u64, t: HeapTarget) -> u64 {
    let grown = u128::from(left) * (100 + u128::from(t.growth_percent)) / 100;
    u64::try_from(grown).unwrap_or(u64::MAX).max(t.min_bytes)
}

/// The warmup rule: before 3 cycles have completed, usage reached the next threshold (10%,
/// 20%, 30% of `capacity` after 0, 1, 2 cycles) and grew by a tenth of `capacity` since the
/// last cycle ended. The thresholds are a tenth apart so that each warmup cycle measures a
/// heap a tenth larger than the last; a cycle that ended near or above the next threshold
/// (the program allocated while it ran) has already measured a heap that size, and a cycle
/// started right after it would mark the same live set again to learn nothing new.
fn warmup_due(completed: u64, used: u64, capacity: u64, used_after_last: u64) -> bool {
    if completed >= 3 {
        return false;
    }
    let step = capacity as f64 * 0.1;
    let threshold = (step * (completed + 1) as f64).max(used_after_last as f64 + step);
    used as f64 >= threshold
}

/// The allocation-rate rule: after `completed` cycles, with `free` bytes left to mutators,
/// allocation rates `(long, recent)` in bytes per second (last second, last 100 ms), and
/// whether mutators allocated since the last cycle ended: true if at the larger rate +20%
/// the free memory runs out within `needed` seconds (the next cycle's duration with margin,
/// plus one check interval).
///
/// Not before the first cycle has completed: until then the duration is a guess (0.2 s) and
/// the rate is a program's start-up burst — `json_tokenizer` (workloads/lox/bench) got an
/// allocation-rate cycle about 20 ms in, before any cycle had completed, on a heap far below
/// the warmup rule's first threshold. ZGC's rule waits the same way (`ZStatCycle::is_time_trustable`:
/// one warmup cycle completed). The warmup rule starts the first cycle at 10% usage, and a
/// program that fills the heap faster than that cycle runs is paced or stalls, as after it.
///
/// Not for a program that stopped allocating (nothing since the last cycle ended, nothing
/// in the last 100 ms): the long rate covers the last second, and such a program (it built
/// its live set) would otherwise get a cycle for a rate it no longer has, up to a second
/// later. A program that allocates in bursts keeps the rule between its bursts.
fn allocation_rate_due(
    completed: u64,
    free: f64,
    (long, recent): (f64, f64),
    allocated_since: bool,
    needed: f64,
) -> bool {
    if completed == 0 || !(recent > 0.0 || allocated_since) {
        return false;
    }
    let rate = long.max(recent) * 1.2;
    free / rate <= needed
}

/// The proactive rule: the heap grew by a tenth of `capacity` since the last major left
/// `used_after_last` bytes in use (`used` now), or 5 minutes passed (`since_last`), and a
/// major now would cost under 1% of the time since the last one (`avg_duration`, seconds).
///
/// The growth counts only where the heap in use is the old generation's (`whole_heap_now`,
/// the heap target's condition): always outside the `generational` mode, and there while
/// minors pay only right after a minor. Between two minors the heap is mostly young garbage
/// the next minor frees, and a minor leaves more in use than a major (the survivor pages,
/// the page in use), so the growth since the last major, counted then, made every
/// generational run of Lox's `closures.lox` start a Proactive major every fifth cycle for
/// a heap that minors kept flat (64m heap: majors left 2M, minors 4M, and 8M of young
/// garbage between two minors passed the 6.4M tenth).
fn proactive_due(
    (used, used_after_last, capacity): (u64, u64, u64),
    whole_heap_now: bool,
    avg_duration: f64,
    since_last: Duration,
) -> bool {
    let grown =
        whole_heap_now && used.saturating_sub(used_after_last) as f64 >= capacity as f64 * 0.1;
    let long = since_last >= Duration::from_secs(300);
    (grown || long) && avg_duration * 100.0 <= since_last.as_secs_f64()
}

/// The young generation's size in effect (`generational` mode): the configured size
/// (`configured`, `HeapConfig::young_size_bytes`), or with a heap target (`target`) the
/// room the target leaves above what the last cycle, minor or major, left in use (`left`,
/// `None` before the first major completed: then the configured size) if that is larger.
/// A minor then starts no earlier than the heap target would start a major in the
/// `concurrent` mode, whose cycle every minor replaces: on a program whose live
/// set is small (Lox's scripts, a few hundred KB live against a 16m target) a minor costs
/// about what a major does, the fixed costs of a cycle, and minors every 8m ran half as many
/// cycles again as majors every 12m or more. Without a heap target the heap has no such
/// line, and the configured size stands. Nor before the first major: nothing has measured
/// what the program keeps, the target's room is its floor, and the first minor tries a young
/// generation of unknown survival; `trees.lox` (256m) builds a 100 MiB tree young, and its
/// first minor, at a 16m young generation instead of 8m, marked twice as much, all live, for
/// a third more GC CPU in the run.
fn young_size_now(configured: u64, target: Option<HeapTarget>, left: Option<u64>) -> u64 {
    match (target, left) {
        (Some(t), Some(left)) => configured.max(heap_target(left, t).saturating_sub(left)),
        _ => configured,
    }
}

/// The generational rule: a minor is due once mutators allocated `young_size` bytes since
/// the last cycle started.
fn young_due(young_allocated: u64, young_size: u64) -> bool {
    young_allocated >= young_size
}

/// The allocation-rate rule's lines in the `generational` mode (see the module
/// documentation): free memory would run out within a major's predicted duration (`major`,
/// with its margin), within the shortest recent major's (`old_line`, no margin: the old
/// generation's line), or within a minor's alone (`minor_only`, the lowest line).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct RateDue {
    major: bool,
    old_line: bool,
    minor_only: bool,
}

/// The minors' leftovers grow: the last minor left more in use than the one before it
/// (`leftovers`, bytes in use after the minors since the last major, newest last). What a
/// minor leaves is the old generation and the young survivors; when it grows from one minor
/// to the next, survivors are promoted faster than anything frees old memory, and only a
/// major will.
///
/// The old line's duration is the shortest of the last [`OLD_LINE_MAJORS`] majors', unscaled. binary-trees at 256M
/// (about 80 MB live, 1.1 GB/s) on a shared machine, majors of 50–200 ms wall time: with
/// their mean the line exceeded what free memory a major leaves, so a major followed every
/// second minor whose leftovers grew (GC CPU per allocated KiB half as high again); scaled to
/// the heap in use as the major line is (`max_duration`: a major's `used_after` is its live
/// data, and a generational heap in use is mostly garbage), worse. The shortest is what a
/// major takes when the machine lets it run; of the last ten, a short major of the heap
/// still being built stayed in the window for most of a run and put the line too low.
fn leftovers_grow(leftovers: &VecDeque<u64>) -> bool {
    let n = leftovers.len();
    n >= 2 && leftovers[n - 1] > leftovers[n - 2]
}

/// What the `generational` director starts (see the module documentation), after the
/// whole heap's other rules (`major`, which wins, but for High Usage between two minors that
/// pay: a minor):
///
/// - while minors do not pay (`minors_pay`, see `minor_paid`), the concurrent mode's rule: a
///   major below the major line, never a minor;
/// - while they pay, right after a minor (`minor_just_ended`) whose leftovers grew
///   (`leftovers_grow`), a major below the old generation's line (`old_line`): free memory
///   is at its highest right after a minor and only shrinks from one minor to the next, so a
///   major that this free memory does not carry through at the allocation rate now would
///   start later with less, and stall the mutators;
/// - while they pay, below the lowest line (`minor_only`) a minor, or a major if a minor has
///   just ended (minors no longer keep up); then a minor once the young generation is full
///   (`young_allocated` of `young_size`).
fn generational_choice(
    major: Option<GcCause>,
    rate: RateDue,
    minors_pay: bool,
    (minor_just_ended, leftovers_grow): (bool, bool),
    young_allocated: u64,
    young_size: u64,
) -> Option<GcCause> {
    if major == Some(GcCause::HighUsage) && minors_pay && !minor_just_ended {
        // The young generation is what fills the heap between two minors: a minor frees it
        // in a millisecond, and the old line then decides whether a major must follow. A
        // major started here has 5% of the heap to run in, and stalls the mutators.
        return Some(GcCause::MinorAllocationRate);
    }
    if major.is_some() {
        return major;
    }
    if !minors_pay {
        return rate.major.then_some(GcCause::AllocationRate);
    }
    if minor_just_ended && leftovers_grow && rate.old_line {
        return Some(GcCause::AllocationRate);
    }
    if rate.minor_only {
        return Some(if minor_just_ended {
            GcCause::AllocationRate
        } else {
            GcCause::MinorAllocationRate
        });
    }
    young_due(young_allocated, young_size).then_some(GcCause::MinorYoungOccupancy)
}

/// Whether a minor paid (see the module documentation): it freed at least half of the young
/// generation it collected (`young` bytes allocated between the previous cycle's start and
/// its own), and at least as many bytes per GC CPU nanosecond as the recent majors
/// (`major_yield`, `None` before any major completed).
fn minor_paid(young: u64, minor: CycleYield, major_yield: Option<f64>) -> bool {
    let half = young > 0 && minor.freed >= young / 2;
    half && major_yield.is_none_or(|major| yield_of(minor.freed, minor.gc_cpu_ns) >= major)
}

/// Bytes freed per GC CPU nanosecond (a cycle that took no measurable CPU counts as 1 ns).
fn yield_of(freed: u64, gc_cpu_ns: u64) -> f64 {
    freed as f64 / gc_cpu_ns.max(1) as f64
}

/// The recent majors' yield: all the bytes they freed over all their GC CPU time (`None`
/// without any).
fn major_yield(majors: &VecDeque<(u64, u64)>) -> Option<f64> {
    if majors.is_empty() {
        return None;
    }
    let (freed, cpu) = majors.iter().fold((0u64, 0u64), |(f, c), &(fr, cp)| {
        (f.saturating_add(fr), c.saturating_add(cp))
    });
    Some(yield_of(freed, cpu))
}

/// The predicted duration with margin of a cycle that took `durations` seconds recently: the
/// larger of twice the mean and the mean plus 3.3 standard deviations (`None` without any).
fn with_margin(durations: impl Iterator<Item = f64> + Clone) -> Option<f64> {
    let n = durations.clone().count() as f64;
    if n == 0.0 {
        return None;
    }
    let avg = durations.clone().sum::<f64>() / n;
    let sd = if n < 2.0 {
        0.0
    } else {
        (durations.map(|d| (d - avg).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
    };
    Some((avg * 2.0).max(avg + 3.3 * sd))
}

/// The continuous rule's cycle after `completed` cycles: a major, or in the generational
/// mode (`generational`) three minors for every major.
fn continuous_cause(generational: bool, completed: u64) -> GcCause {
    if generational && completed % 4 != 3 {
        GcCause::MinorContinuous
    } else {
        GcCause::Continuous
    }
}

impl Director {
    /// A director for cycles that run concurrently (`concurrent`, whose predicted durations
    /// are scaled to the heap in use) or in one pause (`!concurrent`), with minors when the
    /// young generation reaches `young_size` bytes (`Some`: the `generational` mode).
    pub(super) fn new(concurrent: bool, young_size: Option<u64>) -> Self {
        Director {
            young_size,
            allocated_at_last_start: 0,
            majors: 0,
            minor_durations: VecDeque::new(),
            minor_just_ended: false,
            minor_leftovers: VecDeque::new(),
            young_at_start: 0,
            // Optimistic: until a minor has shown otherwise, minors are assumed to pay.
            minors_pay: true,
            majors_since_unpaid: 0,
            unpaid_minor_cpu: 0,
            major_cpu_since_unpaid: 0,
            last_minor_paid: true,
            minors_requested: false,
            major_yields: VecDeque::new(),
            concurrent,
            samples: VecDeque::new(),
            last_cycle_end: Instant::now(),
            used_after_last: 0,
            used_after_cycle: 0,
            durations: VecDeque::new(),
            direct_at_last_start: 0,
            // The heap was created with nothing allocated.
            allocated_at_last: Some(0),
        }
    }

    /// A cycle starts (whatever asked for it): `direct_allocated` is what
    /// `DirectBuffers::allocated_bytes` says now, `allocated` the bytes mutators allocated so
    /// far.
    pub(super) fn cycle_started(&mut self, direct_allocated: u64, allocated: u64) {
        self.direct_at_last_start = direct_allocated;
        self.young_at_start = allocated.saturating_sub(self.allocated_at_last_start);
        self.allocated_at_last_start = allocated;
    }

    /// The embedder asked for a minor (`GcCause::MinorRequested`): keep the remembered set
    /// from now on (see [`Self::keeps_remembered_set`]).
    pub(super) fn minor_requested(&mut self) {
        self.minors_requested = true;
    }

    /// Whether the full cycle about to start should leave the store barrier remembering
    /// until the next one (`Generations::remembering`): yes if a minor may come before
    /// that — minors pay, or their retry is due once this cycle completes
    /// ([`RETRY_MINORS_AFTER`] majors after one that did not pay; the retry's CPU test may
    /// put it off by more majors, which then keep remembering too), or the embedder asks
    /// for minors, or cycles run back to back (`continuous`: every fourth a major, the others
    /// minors). No: while minors do not pay, the director starts majors only, and a store
    /// barrier that remembers costs the mutator a cache miss per old slot it stores a young
    /// value into, for a set no minor reads (heap-churn's mutator took a quarter longer per
    /// operation in `generational` than in `concurrent`, nearly all of it there).
    pub(super) fn keeps_remembered_set(&self, continuous: bool) -> bool {
        self.young_size.is_none()
            || continuous
            || self.minors_requested
            || self.minors_pay
            || self.majors_since_unpaid + 1 >= RETRY_MINORS_AFTER
    }

    /// A cycle completed, which did what `done` says. A minor changes nothing of the
    /// majors' history (see the module documentation).
    pub(super) fn cycle_done(&mut self, duration: Duration, used_after: u64, done: CycleYield) {
        self.used_after_cycle = used_after;
        if done.minor {
            let paid = minor_paid(self.young_at_start, done, major_yield(&self.major_yields));
            if paid && !self.last_minor_paid {
                // The minors before it marked a young generation that was mostly live:
                // their durations predict nothing about minors that pay.
                self.minor_durations.clear();
            }
            self.last_minor_paid = paid;
            self.minors_pay = paid;
            self.majors_since_unpaid = 0;
            if !paid {
                self.unpaid_minor_cpu = done.gc_cpu_ns;
                self.major_cpu_since_unpaid = 0;
            }
            self.minor_just_ended = true;
            self.minor_leftovers.push_back(used_after);
            if self.minor_leftovers.len() > 2 {
                self.minor_leftovers.pop_front();
            }
            self.minor_durations.push_back(duration.as_secs_f64());
            if self.minor_durations.len() > 10 {
                self.minor_durations.pop_front();
            }
            return;
        }
        self.majors += 1;
        self.minor_just_ended = false;
        self.minor_leftovers.clear();
        self.major_yields.push_back((done.freed, done.gc_cpu_ns));
        if self.major_yields.len() > YIELD_MAJORS {
            self.major_yields.pop_front();
        }
        if !self.minors_pay {
            self.majors_since_unpaid += 1;
            self.major_cpu_since_unpaid =
                self.major_cpu_since_unpaid.saturating_add(done.gc_cpu_ns);
            if retry_minors_due(
                self.majors_since_unpaid,
                self.major_cpu_since_unpaid,
                self.unpaid_minor_cpu,
            ) {
                self.minors_pay = true;
            }
        }
        self.last_cycle_end = Instant::now();
        self.used_after_last = used_after;
        self.allocated_at_last = None;
        self.durations
            .push_back((duration.as_secs_f64(), used_after));
        if self.durations.len() > 10 {
            self.durations.pop_front();
        }
    }

    fn sample(&mut self, allocated: u64) {
        let now = Instant::now();
        self.samples.push_back((now, allocated));
        while self.samples.len() > 2
            && now.duration_since(self.samples[0].0) > Duration::from_secs(1)
        {
            self.samples.pop_front();
        }
    }

    /// Bytes per second over the last second and over the last 100 ms (the latter is the
    /// former while the samples span less than 100 ms).
    fn alloc_rates(&self) -> (f64, f64) {
        let rate = |from: &(Instant, u64), to: &(Instant, u64)| {
            let dt = to.0.duration_since(from.0).as_secs_f64();
            if dt <= 0.0 {
                0.0
            } else {
                (to.1 - from.1) as f64 / dt
            }
        };
        let (Some(first), Some(last)) = (self.samples.front(), self.samples.back()) else {
            return (0.0, 0.0);
        };
        let long = rate(first, last);
        let recent = self
            .samples
            .iter()
            .rev()
            .find(|s| last.0.duration_since(s.0) >= Duration::from_millis(100))
            .map_or(long, |s| rate(s, last));
        (long, recent)
    }

    fn avg_duration(&self) -> f64 {
        if self.durations.is_empty() {
            0.1
        } else {
            self.durations.iter().map(|d| d.0).sum::<f64>() / self.durations.len() as f64
        }
    }

    /// The recent durations, each scaled to `used` bytes in use now (see the module
    /// documentation; concurrent cycles only).
    fn scaled_durations(&self, used: u64) -> impl Iterator<Item = f64> + Clone + '_ {
        let scale = self.concurrent;
        self.durations.iter().map(move |&(d, after)| {
            if scale {
                d * (used as f64 / after.max(1) as f64).clamp(1.0, MAX_SCALE)
            } else {
                d
            }
        })
    }

    /// How long the next cycle may take with `used` bytes in use now, with margin: the larger
    /// of twice the mean and the mean plus 3.3 standard deviations of the recent durations,
    /// each scaled to `used` (see the module documentation).
    fn max_duration(&self, used: u64) -> f64 {
        with_margin(self.scaled_durations(used)).unwrap_or(2.0 * self.avg_duration())
    }

    /// How long the free memory must last, at the allocation rate, when a major starts with
    /// `used` bytes in use (the allocation-rate rule; `interval` is the director's check
    /// interval): through the cycle with its margin and one check, if the cycle runs
    /// concurrently; through two checks if it runs in one pause, during which mutators
    /// allocate nothing: such a cycle need only start before the mutators fill the heap (the
    /// second check is the margin for a check that runs late on a busy machine), as a
    /// stop-the-world collector collects when an allocation fails.
    fn major_needs(&self, used: u64, interval: f64) -> f64 {
        if self.concurrent {
            self.max_duration(used) + interval
        } else {
            2.0 * interval
        }
    }

    /// The shortest of the last [`OLD_LINE_MAJORS`] durations, unscaled (the guess
    /// `avg_duration` gives without any): what a major takes when the machine lets it run
    /// (see [`leftovers_grow`] for why not the mean, nor scaled).
    fn shortest_duration(&self) -> f64 {
        self.durations
            .iter()
            .rev()
            .take(OLD_LINE_MAJORS)
            .map(|d| d.0)
            .reduce(f64::min)
            .unwrap_or_else(|| self.avg_duration())
    }

    /// How long the next minor may take, with margin (see [`with_margin`]); a major's
    /// prediction (`major`) before any minor completed.
    fn max_minor_duration(&self, major: f64) -> f64 {
        with_margin(self.minor_durations.iter().copied()).unwrap_or(major)
    }

    /// Whether a cycle should start now in `heap`, and why: read from the bytes its mutators
    /// allocated, its pages, its cycle counters and its direct buffers.
    pub(super) fn decide(&mut self, heap: &HeapInner) -> Option<GcCause> {
        let cfg = &heap.config().director;
        let allocated = heap.allocator().allocated();
        self.sample(allocated);
        let control = heap.control();
        if control.stalls_unanswered() > 0 {
            return Some(GcCause::AllocationStall);
        }
        if control.has_stalled_mutators() {
            // Stalled during the major that just ended, or answered by the cycle that just
            // ended, they have not retried since: their retry, within milliseconds, either
            // proceeds or asks for a major (rule 1). A cycle started meanwhile would only make
            // them wait through it (in `stw`, a pause that stops them before they retry).
            return None;
        }
        if cfg.continuous {
            return Some(continuous_cause(
                self.young_size.is_some(),
                control.completed(),
            ));
        }
        let minor_just_ended = std::mem::take(&mut self.minor_just_ended);
        // While minors pay, the heap target is the old generation's: the heap as the last
        // minor left it (see the module documentation).
        let target_now = self.young_size.is_none() || !self.minors_pay || minor_just_ended;
        let (major, rate) = self.decide_major(heap, allocated, target_now);
        let Some(young_size) = self.young_size else {
            return major;
        };
        let young_allocated = allocated.saturating_sub(self.allocated_at_last_start);
        let left = (self.majors > 0).then_some(self.used_after_cycle);
        let young_size = young_size_now(young_size, cfg.heap_target, left);
        generational_choice(
            major,
            rate,
            self.minors_pay,
            (minor_just_ended, leftovers_grow(&self.minor_leftovers)),
            young_allocated,
            young_size,
        )
    }

    /// Rules 2-8 (see the module documentation): whether the whole heap needs a major now,
    /// and why; `allocated` is what the mutators allocated so far; the heap-target rule only
    /// if `heap_target_now`. In the `generational` mode the allocation-rate rule is left to
    /// `generational_choice`: its three lines are returned beside.
    fn decide_major(
        &mut self,
        heap: &HeapInner,
        allocated: u64,
        heap_target_now: bool,
    ) -> (Option<GcCause>, RateDue) {
        let (cfg, pages, direct) = (&heap.config().director, heap.pages(), heap.direct());
        let completed = self.majors;
        let cap = pages.capacity() as f64;
        let used_bytes = pages.used();
        let used = used_bytes as f64;
        let free = pages.mutator_free() as f64;
        if warmup_due(
            completed,
            used_bytes,
            pages.capacity(),
            self.used_after_last,
        ) {
            return (Some(GcCause::Warmup), RateDue::default());
        }
        let since_last = self.last_cycle_end.elapsed();
        if let Some(t) = cfg.timer {
            if since_last >= t {
                return (Some(GcCause::Timer), RateDue::default());
            }
        }
        // Whether the mutators allocated since the last cycle ended.
        let allocated_since = allocated > *self.allocated_at_last.get_or_insert(allocated);
        if let Some(t) = cfg.heap_target.filter(|_| heap_target_now) {
            if allocated_since && used_bytes >= heap_target(self.used_after_last, t) {
                return (Some(GcCause::HeapTarget), RateDue::default());
            }
        }
        let interval = cfg.interval.as_secs_f64();
        let major = self.max_duration(used as u64);
        let rates = self.alloc_rates();
        let due = |needed| allocation_rate_due(completed, free, rates, allocated_since, needed);
        let mut rate = RateDue::default();
        if self.young_size.is_none() {
            if due(self.major_needs(used as u64, interval)) {
                return (Some(GcCause::AllocationRate), rate);
            }
        } else {
            let minor = self.max_minor_duration(major);
            rate.major = due(major + interval);
            rate.old_line = due(self.shortest_duration() + interval);
            rate.minor_only = due(minor + interval);
        }
        let limit = direct.limit() as f64;
        let turnover = direct
            .allocated_bytes()
            .saturating_sub(self.direct_at_last_start) as f64;
        if direct.reserved() as f64 >= limit * 0.75 && turnover >= limit * 0.25 {
            return (Some(GcCause::DirectMemory), rate);
        }
        if free <= cap * 0.05 {
            return (Some(GcCause::HighUsage), rate);
        }
        if cfg.proactive
            && proactive_due(
                (used_bytes, self.used_after_last, pages.capacity()),
                heap_target_now,
                self.avg_duration(),
                since_last,
            )
        {
            return (Some(GcCause::Proactive), rate);
        }
        (None, rate)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MB: u64 = 1 << 20;

    /// A major that freed 100 MB for 100 ms of GC CPU (1 byte per ns).
    fn major() -> CycleYield {
        CycleYield {
            minor: false,
            freed: 100 * MB,
            gc_cpu_ns: 100 * MB,
        }
    }

    /// A minor that freed `freed` bytes for as many ns of GC CPU as bytes (1 byte per ns).
    fn minor(freed: u64) -> CycleYield {
        CycleYield {
            minor: true,
            freed,
            gc_cpu_ns: freed.max(1),
        }
    }

    /// The target grows with `growth_percent` up to its largest value without wrapping, and
    /// never goes below `min_bytes`.
    #[test]
    fn heap_target_never_wraps_below_the_heap() {
        let t = |min_bytes, growth_percent| HeapTarget {
            min_bytes,
            growth_percent,
        };
        assert_eq!(heap_target(100 * MB, t(16 * MB, 100)), 200 * MB);
        assert_eq!(heap_target(4 * MB, t(16 * MB, 100)), 16 * MB);
        assert_eq!(heap_target(100 * MB, t(0, 0)), 100 * MB);
        assert_eq!(heap_target(0, t(0, 0)), 0);
        // `100 + u32::MAX` wrapped to 99: a target below what the last cycle left.
        let huge = heap_target(100 * MB, t(0, u32::MAX));
        assert_eq!(huge, 100 * MB * (100 + u64::from(u32::MAX)) / 100);
        assert_eq!(heap_target(u64::MAX / 2, t(0, u32::MAX)), u64::MAX);
        assert_eq!(heap_target(u64::MAX, t(u64::MAX, 100)), u64::MAX);
    }

    /// Minors are tried again after [`RETRY_MINORS_AFTER`] majors, and not before those
    /// majors took eight times the GC CPU of the minor that did not pay.
    #[test]
    fn minors_are_retried_once_the_majors_cost_eight_times_the_unpaid_minor() {
        let ms = 1_000_000;
        // message-engine: the tried minor cost a third of a major.
        assert!(!retry_minors_due(7, 7 * 3 * ms, ms));
        assert!(retry_minors_due(8, 8 * 3 * ms, ms));
        // queue.lox: the tried minor cost 8 ms, majors 0.4 ms each.
        assert!(!retry_minors_due(8, 8 * 4 * ms / 10, 8 * ms));
        assert!(!retry_minors_due(100, 100 * 4 * ms / 10, 8 * ms));
        assert!(retry_minors_due(160, 160 * 4 * ms / 10, 8 * ms));
        // No overflow for an absurd minor.
        assert!(!retry_minors_due(u64::MAX, u64::MAX - 1, u64::MAX));
    }

    /// A dear unpaid minor keeps minors off through the director's own bookkeeping, until
    /// the majors' GC CPU since reaches eight times its own.
    #[test]
    fn a_dear_unpaid_minor_waits_for_the_majors_cpu() {
        let mut d = Director::new(true, Some(16 * MB));
        d.cycle_started(0, 10 * MB);
        d.cycle_done(Duration::from_millis(400), 40 * MB, major());
        d.cycle_started(0, 74 * MB);
        // Freed nothing, for twice a major's GC CPU.
        let dear = CycleYield {
            minor: true,
            freed: 0,
            gc_cpu_ns: 200 * MB,
        };
        d.cycle_done(Duration::from_millis(50), 90 * MB, dear);
        assert!(!d.minors_pay);
        for _ in 0..15 {
            d.cycle_done(Duration::from_millis(400), 40 * MB, major());
            assert!(!d.minors_pay, "{} majors", d.majors_since_unpaid);
        }
        d.cycle_done(Duration::from_millis(400), 40 * MB, major());
        assert!(d.minors_pay, "tried again after 16 majors");
    }

    /// The remembered set is kept for every interval a minor may follow: a full cycle that
    /// starts while minors pay, or whose completion may make the retry due, leaves the store
    /// barrier remembering; the majors between an unpaid minor and its retry do not (and a
    /// dear unpaid minor, whose retry waits for the majors' CPU, keeps it from the eighth
    /// major on). Continuous cycles, an embedder's minors and a director without a young
    /// generation keep it always.
    #[test]
    fn the_remembered_set_is_kept_while_a_minor_may_follow() {
        for dear in [false, true] {
            let mut d = Director::new(true, Some(16 * MB));
            assert!(d.keeps_remembered_set(false), "minors pay before any ran");
            d.cycle_done(Duration::from_millis(400), 40 * MB, major());
            let unpaid = CycleYield {
                minor: true,
                freed: 0,
                gc_cpu_ns: if dear { 200 * MB } else { 1 },
            };
            d.cycle_done(Duration::from_millis(50), 90 * MB, unpaid);
            assert!(!d.minors_pay);
            let mut kept = vec![];
            while !d.minors_pay {
                kept.push(d.keeps_remembered_set(false));
                d.cycle_done(Duration::from_millis(400), 40 * MB, major());
            }
            // The major after which minors pay again started remembering.
            assert_eq!(kept.last(), Some(&true), "dear {dear}: {kept:?}");
            let off = (RETRY_MINORS_AFTER - 1) as usize;
            assert!(kept[..off].iter().all(|k| !k), "dear {dear}: {kept:?}");
            assert!(kept[off..].iter().all(|k| *k), "dear {dear}: {kept:?}");
            assert_eq!(kept.len(), if dear { 16 } else { 8 }, "dear {dear}");
            assert!(d.keeps_remembered_set(false), "minors pay again");
        }
        let mut d = Director::new(true, Some(16 * MB));
        d.cycle_done(Duration::from_millis(50), 90 * MB, minor(0));
        assert!(!d.keeps_remembered_set(false));
        assert!(d.keeps_remembered_set(true), "continuous");
        d.minor_requested();
        assert!(
            d.keeps_remembered_set(false),
            "the embedder asks for minors"
        );
        let mut no_young = Director::new(true, None);
        no_young.cycle_done(Duration::from_millis(50), 90 * MB, minor(0));
        assert!(no_young.keeps_remembered_set(false));
    }

    /// With a heap target the young generation is the room the target leaves above what the
    /// last cycle left, where that is more than the configured size; without one it is the
    /// configured size.
    #[test]
    fn the_young_generation_is_the_heap_targets_room_where_larger() {
        let t = |min_bytes, growth_percent| {
            Some(HeapTarget {
                min_bytes,
                growth_percent,
            })
        };
        // Lox's target (16m, doubling), closures.lox: cycles leave 2-4M.
        assert_eq!(
            young_size_now(8 * MB, t(16 * MB, 100), Some(4 * MB)),
            12 * MB
        );
        assert_eq!(
            young_size_now(8 * MB, t(16 * MB, 100), Some(2 * MB)),
            14 * MB
        );
        // A larger live set: the target doubles it, the room is as large as it.
        assert_eq!(
            young_size_now(8 * MB, t(16 * MB, 100), Some(40 * MB)),
            40 * MB
        );
        // A room smaller than the configured size, or none (left above the target).
        assert_eq!(young_size_now(8 * MB, t(16 * MB, 0), Some(12 * MB)), 8 * MB);
        assert_eq!(young_size_now(8 * MB, t(0, 0), Some(100 * MB)), 8 * MB);
        // Before the first major: the configured size.
        assert_eq!(young_size_now(8 * MB, t(16 * MB, 100), None), 8 * MB);
        // No heap target: the configured size.
        assert_eq!(young_size_now(8 * MB, None, Some(2 * MB)), 8 * MB);
    }

    /// The proactive rule counts the heap's growth since the last major only where the heap
    /// in use is the old generation's: never between two minors that pay (closures.lox at
    /// 64m: a major left 2M, 14M were in use before each minor, mostly young garbage), and
    /// right after a minor, or in a mode without minors, as before. The time conditions hold
    /// in every case.
    #[test]
    fn proactive_counts_growth_only_where_the_heap_is_the_old_generations() {
        let cap = 64 * MB;
        let (avg, since) = (0.002, Duration::from_millis(300));
        assert!(!proactive_due((14 * MB, 2 * MB, cap), false, avg, since));
        assert!(proactive_due((14 * MB, 2 * MB, cap), true, avg, since));
        // Right after a minor that left 4M: grown by less than a tenth.
        assert!(!proactive_due((4 * MB, 2 * MB, cap), true, avg, since));
        // Promotion grew the old generation by a tenth: a major, right after that minor.
        assert!(proactive_due((9 * MB, 2 * MB, cap), true, avg, since));
        // Too soon after the last major for a major to cost under 1% of the time.
        let soon = Duration::from_millis(100);
        assert!(!proactive_due((14 * MB, 2 * MB, cap), true, avg, soon));
        // Five minutes without a major count between minors too.
        let long = Duration::from_secs(300);
        assert!(proactive_due((4 * MB, 2 * MB, cap), false, avg, long));
        // Less in use than the last major left: no growth, no wrap.
        assert!(!proactive_due((MB, 2 * MB, cap), true, avg, since));
    }

    /// Warmup fires at 10%, 20%, 30% after 0, 1, 2 cycles, never after 3, and only once
    /// usage grew by a tenth of the heap since the last cycle ended.
    #[test]
    fn warmup_waits_for_a_tenth_of_the_heap_beyond_the_last_cycle() {
        let cap = 100 * MB;
        assert!(!warmup_due(0, 9 * MB, cap, 0));
        assert!(warmup_due(0, 10 * MB, cap, 0));
        assert!(!warmup_due(1, 19 * MB, cap, 8 * MB));
        assert!(warmup_due(1, 20 * MB, cap, 8 * MB));
        assert!(warmup_due(2, 30 * MB, cap, 12 * MB));
        assert!(!warmup_due(3, 90 * MB, cap, 0));
        // The last cycle ended above the threshold: the program allocated while it ran.
        assert!(!warmup_due(1, 34 * MB, cap, 34 * MB));
        // Or just below it: the threshold moves to a tenth above what it left.
        assert!(!warmup_due(2, 35 * MB, cap, 27 * MB));
        assert!(warmup_due(2, 37 * MB, cap, 27 * MB));
    }

    /// The allocation-rate rule fires when the free memory runs out within the time needed
    /// at the larger rate +20%, only for a program still allocating, and never before the
    /// first cycle has completed, whatever the rate.
    #[test]
    fn allocation_rate_waits_for_the_first_completed_cycle() {
        let free = 100.0 * MB as f64;
        // 1 GB/s +20%: 100 MB last 0.083 s.
        let fast = (1e9, 1e9);
        assert!(!allocation_rate_due(0, free, fast, true, 0.2));
        assert!(!allocation_rate_due(0, free, (1e12, 1e12), true, 1e9));
        assert!(allocation_rate_due(1, free, fast, true, 0.2));
        assert!(
            allocation_rate_due(7, free, fast, false, 0.2),
            "recent rate alone"
        );
        assert!(
            !allocation_rate_due(1, free, fast, true, 0.05),
            "time enough"
        );
        // Stopped allocating: the last second's burst alone starts nothing.
        assert!(!allocation_rate_due(1, free, (1e9, 0.0), false, 0.2));
        assert!(allocation_rate_due(1, free, (1e9, 0.0), true, 0.2));
        // No rate at all: nothing (free / 0 is infinite, or NaN on a full heap).
        assert!(!allocation_rate_due(1, free, (0.0, 0.0), true, 0.2));
        assert!(!allocation_rate_due(1, 0.0, (0.0, 0.0), true, 0.2));
    }

    /// A program that stopped allocating has no recent rate, though the last second's
    /// average still holds its burst (the allocation-rate rule then starts no cycle); one
    /// that allocates steadily has both.
    #[test]
    fn a_rate_from_before_the_program_stopped_allocating_is_not_recent() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let mut d = Director::new(true, None);
        // 100 MB in the first 500 ms, then nothing for 300 ms.
        for ms in (0..=800).step_by(10) {
            d.samples.push_back((at(ms), ms.min(500) * 200_000));
        }
        let (long, recent) = d.alloc_rates();
        assert!(long > 100e6, "the last second's average: {long}");
        assert_eq!(recent, 0.0);
        let mut steady = Director::new(true, None);
        for ms in (0..=800).step_by(10) {
            steady.samples.push_back((at(ms), ms * 200_000));
        }
        let (long, recent) = steady.alloc_rates();
        assert!((long - 200e6).abs() < 1e3 && (recent - 200e6).abs() < 1e3);
    }

    /// Durations of cycles that ended with less in use count as longer when more is in use
    /// now (never shorter, at most `MAX_SCALE` times); a steady heap is predicted as before.
    #[test]
    fn predicted_duration_scales_with_the_heap_in_use() {
        let mut d = Director::new(true, None);
        for _ in 0..3 {
            d.cycle_done(Duration::from_millis(400), 400 * MB, major());
        }
        // As much in use as the cycles left: twice the mean (no spread).
        assert!((d.max_duration(400 * MB) - 0.8).abs() < 1e-9);
        // Less in use: never predicted shorter.
        assert!((d.max_duration(100 * MB) - 0.8).abs() < 1e-9);
        // Five times as much: five times as long.
        assert!((d.max_duration(2000 * MB) - 4.0).abs() < 1e-9);
        // A hundred times as much: capped.
        assert!((d.max_duration(40_000 * MB) - 0.8 * MAX_SCALE).abs() < 1e-9);
        // Mixed history: each cycle is scaled by its own end state, then the margin applies.
        let mut m = Director::new(true, None);
        m.cycle_done(Duration::from_millis(100), 100 * MB, major());
        m.cycle_done(Duration::from_millis(400), 400 * MB, major());
        let same = m.max_duration(400 * MB);
        assert!((same - 0.8).abs() < 1e-9, "both scale to 0.4 s: {same}");
        let unscaled = Director::new(true, None).max_duration(400 * MB);
        assert!((unscaled - 0.2).abs() < 1e-9, "no history: twice 0.1 s");
        // Stop-the-world cycles are not scaled.
        let mut stw = Director::new(false, None);
        for _ in 0..3 {
            stw.cycle_done(Duration::from_millis(400), 400 * MB, major());
        }
        assert!((stw.max_duration(2000 * MB) - 0.8).abs() < 1e-9);
    }

    /// The allocation-rate rule budgets a concurrent major its predicted duration and one
    /// check, a stop-the-world one two checks whatever its cycles took: its mutators allocate
    /// nothing while it runs, so it starts only once the heap is nearly full.
    #[test]
    fn a_stw_major_needs_free_memory_only_for_two_checks() {
        let interval = 0.01;
        let mut concurrent = Director::new(true, None);
        let mut stw = Director::new(false, None);
        for d in [&mut concurrent, &mut stw] {
            for _ in 0..3 {
                d.cycle_done(Duration::from_millis(400), 400 * MB, major());
            }
        }
        let c = concurrent.major_needs(400 * MB, interval);
        assert!((c - 0.81).abs() < 1e-9, "twice 0.4 s and a check: {c}");
        let s = stw.major_needs(400 * MB, interval);
        assert!((s - 0.02).abs() < 1e-9, "two checks: {s}");
        // At 100 MB/s (120 with the rule's margin), 50 MB free is too little for the
        // concurrent major and plenty for the stop-the-world one.
        let rates = (100.0 * MB as f64, 100.0 * MB as f64);
        let free = 50.0 * MB as f64;
        assert!(allocation_rate_due(3, free, rates, true, c));
        assert!(!allocation_rate_due(3, free, rates, true, s));
        assert!(allocation_rate_due(3, 2.0 * MB as f64, rates, true, s));
    }

    /// The generational choice: a major the whole heap's other rules ask for wins. While
    /// minors do not pay, the concurrent mode's rule: a major below the major line, never a
    /// minor; while they pay, below the lowest line a minor (a major right after a minor),
    /// else a minor once the young generation is full.
    #[test]
    fn minors_only_while_they_pay_majors_when_minors_do_not_keep_up() {
        let young = 64 * MB;
        let line = |major, minor_only| RateDue {
            major,
            old_line: major,
            minor_only,
        };
        let none = line(false, false);
        let major_line = line(true, false);
        let lowest = line(true, true);
        let choice = |major, rate, pay, just_ended, allocated| {
            generational_choice(major, rate, pay, (just_ended, false), allocated, young)
        };
        for pay in [false, true] {
            assert_eq!(choice(None, none, pay, false, 63 * MB), None);
            assert_eq!(choice(None, none, pay, true, 63 * MB), None);
            assert_eq!(
                choice(None, lowest, pay, false, 0),
                Some(if pay {
                    GcCause::MinorAllocationRate
                } else {
                    GcCause::AllocationRate
                })
            );
            // Below the line a minor would start at, right after a minor: a major.
            assert_eq!(
                choice(None, lowest, pay, true, 0),
                Some(GcCause::AllocationRate)
            );
            for major in [GcCause::HighUsage, GcCause::Warmup, GcCause::Timer] {
                if major == GcCause::HighUsage && pay {
                    continue; // a minor first (see the old line's test)
                }
                for (rate, allocated) in [(none, 0), (lowest, 200 * MB)] {
                    assert_eq!(
                        choice(Some(major.clone()), rate, pay, false, allocated),
                        Some(major.clone())
                    );
                }
            }
        }
        // Minors that do not pay: no minor, however full the young generation; a major at
        // the major line.
        assert_eq!(choice(None, none, false, false, 640 * MB), None);
        assert_eq!(
            choice(None, major_line, false, false, 64 * MB),
            Some(GcCause::AllocationRate)
        );
        assert_eq!(
            choice(None, major_line, false, true, 0),
            Some(GcCause::AllocationRate)
        );
        // Minors that pay: above the lowest line the young generation decides.
        assert_eq!(choice(None, major_line, true, true, 0), None);
        assert_eq!(
            choice(None, major_line, true, false, 64 * MB),
            Some(GcCause::MinorYoungOccupancy)
        );
        assert_eq!(
            choice(None, none, true, false, 64 * MB),
            Some(GcCause::MinorYoungOccupancy)
        );
        assert!(young_due(64 * MB, 64 * MB) && !young_due(0, 1));
    }

    /// The old generation's line: right after a minor whose leftovers grew, a major once free
    /// memory no longer covers a major's mean duration at the allocation rate (binary-trees at
    /// 256M: the major line with its margin is never met after a minor, and the lowest line
    /// is met with too little left for the major that follows); not while the leftovers stay
    /// put, not between minors, not while minors do not pay (the major line rules then).
    #[test]
    fn a_major_starts_after_a_minor_when_leftovers_grow_into_the_old_line() {
        let young = 64 * MB;
        let old_line = RateDue {
            major: true,
            old_line: true,
            minor_only: false,
        };
        let above = RateDue {
            major: true,
            ..RateDue::default()
        };
        let choice = |rate, pay, ended_grew, allocated| {
            generational_choice(None, rate, pay, ended_grew, allocated, young)
        };
        assert_eq!(
            choice(old_line, true, (true, true), 0),
            Some(GcCause::AllocationRate)
        );
        // Leftovers that stay put: minors keep up; the young generation decides.
        assert_eq!(choice(old_line, true, (true, false), 0), None);
        assert_eq!(
            choice(old_line, true, (true, false), young),
            Some(GcCause::MinorYoungOccupancy)
        );
        // Between minors: free memory only shrinks until the next one, which decides.
        assert_eq!(
            choice(old_line, true, (false, true), young),
            Some(GcCause::MinorYoungOccupancy)
        );
        // Above the old line (only the margined major line is met): minors go on.
        assert_eq!(choice(above, true, (true, true), 0), None);
        // Minors that do not pay: the major line, as before.
        assert_eq!(
            choice(above, false, (true, true), 0),
            Some(GcCause::AllocationRate)
        );
        // A major the heap's other rules ask for still wins, High Usage too right after a
        // minor or while minors do not pay; between minors that pay, High Usage is a minor
        // (the young generation is what filled the heap), and the old line decides after it.
        let with = |major: GcCause, pay, ended| {
            generational_choice(Some(major), old_line, pay, (ended, true), 0, young)
        };
        assert_eq!(with(GcCause::Warmup, true, false), Some(GcCause::Warmup));
        assert_eq!(
            with(GcCause::HighUsage, true, true),
            Some(GcCause::HighUsage)
        );
        assert_eq!(
            with(GcCause::HighUsage, false, false),
            Some(GcCause::HighUsage)
        );
        assert_eq!(
            with(GcCause::HighUsage, true, false),
            Some(GcCause::MinorAllocationRate)
        );
    }

    /// The minors' leftovers grow when the last minor since the last major left more in use
    /// than the one before it; a major starts them afresh.
    #[test]
    fn leftovers_grow_from_one_minor_to_the_next() {
        assert!(!leftovers_grow(&VecDeque::new()));
        assert!(!leftovers_grow(&[150 * MB].into()));
        assert!(leftovers_grow(&[150 * MB, 152 * MB].into()));
        assert!(!leftovers_grow(&[152 * MB, 152 * MB].into()));
        assert!(!leftovers_grow(&[152 * MB, 150 * MB].into()));
        let mut d = Director::new(true, Some(64 * MB));
        d.cycle_done(Duration::from_millis(50), 80 * MB, major());
        for used in [148, 150, 152, 154] {
            d.cycle_started(0, d.allocated_at_last_start + 64 * MB);
            d.cycle_done(Duration::from_millis(1), used * MB, minor(64 * MB));
        }
        assert!(leftovers_grow(&d.minor_leftovers));
        assert_eq!(d.minor_leftovers.len(), 2);
        d.cycle_done(Duration::from_millis(50), 80 * MB, major());
        assert!(!leftovers_grow(&d.minor_leftovers), "a major starts afresh");
        // The old line's duration is the shortest recent major's, not scaled to the heap.
        let mut m = Director::new(true, None);
        m.cycle_done(Duration::from_millis(60), 100 * MB, major());
        m.cycle_done(Duration::from_millis(40), 100 * MB, major());
        m.cycle_done(Duration::from_millis(130), 100 * MB, major());
        assert!((m.shortest_duration() - 0.04).abs() < 1e-9);
        assert!(m.shortest_duration() < m.max_duration(200 * MB));
        // Of the last OLD_LINE_MAJORS only: a short major of a small early heap drops out.
        for _ in 0..OLD_LINE_MAJORS {
            m.cycle_done(Duration::from_millis(100), 100 * MB, major());
        }
        assert!((m.shortest_duration() - 0.1).abs() < 1e-9);
        assert!((Director::new(true, None).shortest_duration() - 0.1).abs() < 1e-9);
    }

    /// A minor pays when it freed half of its young generation and, once a major has
    /// completed, at least the recent majors' bytes per GC CPU ns; a mostly live young
    /// generation (message-engine's) fails.
    #[test]
    fn a_minor_pays_by_what_it_frees_and_what_that_costs() {
        let at = |freed, gc_cpu_ns| CycleYield {
            minor: true,
            freed,
            gc_cpu_ns,
        };
        // Before any major: the half alone.
        assert!(minor_paid(64 * MB, at(32 * MB, u64::MAX), None));
        assert!(!minor_paid(64 * MB, at(32 * MB - 1, 1), None));
        assert!(
            !minor_paid(0, at(0, 1), None),
            "a minor of nothing did not pay"
        );
        // Majors freeing 2 bytes per ns: a minor must too.
        let majors: VecDeque<_> = [(100 * MB, 100 * MB), (300 * MB, 100 * MB)].into();
        let y = major_yield(&majors);
        assert_eq!(y, Some(2.0));
        assert!(minor_paid(64 * MB, at(64 * MB, 32 * MB), y));
        assert!(
            !minor_paid(64 * MB, at(64 * MB, 32 * MB + 1), y),
            "cheaper per byte"
        );
        assert!(!minor_paid(64 * MB, at(31 * MB, 1), y), "frees too little");
        // message-engine at 256M (one run): a minor freed about 4 MB of 20 MB young for
        // 15 ms, a major 80 MB for 70 ms.
        let me: VecDeque<_> = [(80 * MB, 70_000_000)].into();
        assert!(!minor_paid(
            20 * MB,
            at(4 * MB, 15_000_000),
            major_yield(&me)
        ));
        // A minor that took no measurable CPU is not a division by zero.
        assert!(minor_paid(64 * MB, at(64 * MB, 0), y));
        assert_eq!(major_yield(&VecDeque::new()), None);
    }

    /// A minor's outcome sets whether minors pay: the young generation is what was allocated
    /// between the previous cycle's start and its own; the majors' yield is their own.
    #[test]
    fn whether_minors_pay_follows_the_last_minor() {
        let mut d = Director::new(true, Some(16 * MB));
        d.cycle_started(0, 10 * MB);
        d.cycle_done(Duration::from_millis(400), 40 * MB, major());
        d.cycle_started(0, 74 * MB);
        assert_eq!(d.young_at_start, 64 * MB);
        d.cycle_done(Duration::from_millis(5), 40 * MB, minor(40 * MB));
        assert!(d.minors_pay);
        d.cycle_started(0, 138 * MB);
        // Half of its young generation, but at half the majors' bytes per ns.
        let dear = CycleYield {
            gc_cpu_ns: 80 * MB,
            ..minor(40 * MB)
        };
        d.cycle_done(Duration::from_millis(5), 90 * MB, dear);
        assert!(!d.minors_pay, "a minor dearer per byte than a major");
        // Majors leave the verdict as it was, until RETRY_MINORS_AFTER of them.
        for _ in 1..RETRY_MINORS_AFTER {
            d.cycle_done(Duration::from_millis(400), 40 * MB, major());
            assert!(!d.minors_pay);
        }
        d.cycle_done(Duration::from_millis(400), 40 * MB, major());
        assert!(d.minors_pay, "tried again");
        assert!(
            Director::new(true, Some(MB)).minors_pay,
            "optimistic at first"
        );
        // "A minor has just ended" means the last cycle: a major after it clears it.
        d.cycle_done(Duration::from_millis(5), 40 * MB, minor(0));
        assert!(d.minor_just_ended);
        d.cycle_done(Duration::from_millis(400), 40 * MB, major());
        assert!(!d.minor_just_ended);
    }

    /// A minor that pays after one that did not forgets the durations of the minors before
    /// it: the next minor is predicted from its own.
    #[test]
    fn a_paying_minor_starts_the_minor_durations_afresh() {
        let mut d = Director::new(true, Some(16 * MB));
        d.cycle_done(Duration::from_millis(100), 40 * MB, major());
        d.cycle_started(0, d.allocated_at_last_start + 16 * MB);
        d.cycle_done(Duration::from_millis(300), 40 * MB, minor(0));
        assert!(!d.minors_pay);
        assert!((d.max_minor_duration(1.0) - 0.6).abs() < 1e-9);
        d.cycle_started(0, d.allocated_at_last_start + 16 * MB);
        d.cycle_done(Duration::from_millis(1), 40 * MB, minor(16 * MB));
        assert!(d.minors_pay);
        assert!((d.max_minor_duration(1.0) - 0.002).abs() < 1e-9);
        // Paying minors keep their history.
        d.cycle_started(0, d.allocated_at_last_start + 16 * MB);
        d.cycle_done(Duration::from_millis(1), 40 * MB, minor(16 * MB));
        assert_eq!(d.minor_durations.len(), 2);
        assert!((d.max_minor_duration(1.0) - 0.002).abs() < 1e-9);
    }

    /// The margin over recent durations: twice the mean, or the mean plus 3.3 standard
    /// deviations when they spread; a minor is predicted as a major before any minor ran.
    #[test]
    fn minor_durations_are_predicted_with_the_majors_margin() {
        assert_eq!(with_margin(std::iter::empty()), None);
        assert!((with_margin([0.1, 0.1].into_iter()).unwrap() - 0.2).abs() < 1e-9);
        let spread = with_margin([0.0, 1.0].into_iter()).unwrap();
        assert!((spread - (0.5 + 3.3 * 0.5f64.sqrt())).abs() < 1e-9);
        let mut d = Director::new(true, Some(16 * MB));
        assert_eq!(d.max_minor_duration(0.7), 0.7);
        d.cycle_done(Duration::from_millis(10), 10 * MB, minor(0));
        assert!((d.max_minor_duration(0.7) - 0.02).abs() < 1e-9);
        assert!(d.minor_just_ended);
    }

    /// Continuous cycles: majors only, or in the generational mode three minors per major.
    #[test]
    fn continuous_cycles_are_three_minors_to_a_major_when_generational() {
        let gen: Vec<_> = (0..8).map(|n| continuous_cause(true, n)).collect();
        assert_eq!(gen.iter().filter(|c| c.is_minor()).count(), 6, "{gen:?}");
        assert_eq!(gen[3], GcCause::Continuous);
        assert!((0..8).all(|n| continuous_cause(false, n) == GcCause::Continuous));
    }

    /// A minor leaves the majors' history alone: their count (warmup, allocation rate), the
    /// durations a major is predicted from and what the last major left.
    #[test]
    fn minors_do_not_change_the_majors_history() {
        let mut d = Director::new(true, Some(16 * MB));
        d.cycle_done(Duration::from_millis(400), 400 * MB, major());
        let before = (d.majors, d.durations.clone(), d.used_after_last);
        for _ in 0..5 {
            d.cycle_started(0, 123 * MB);
            d.cycle_done(Duration::from_millis(5), 10 * MB, minor(0));
        }
        assert_eq!((d.majors, d.durations.clone(), d.used_after_last), before);
        assert!((d.max_duration(400 * MB) - 0.8).abs() < 1e-9);
        // The young generation counts from the last cycle's start, minor or not.
        assert_eq!(d.allocated_at_last_start, 123 * MB);
    }
}
