//! What a run counted: the comparisons made with the model ([`Checked`]), each thread's
//! counters, and the run's [`Report`], which sums the threads' counters, takes the
//! collector's figures from the heap's statistics, adds up across runs and prints as a short
//! summary.

use super::direct::DirectCounts;
use gc_runtime::CycleRecord;
use std::time::Duration;

/// What a set of comparisons with the model covered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Checked {
    /// Objects compared (an object counts once per comparison).
    pub objects: u64,
    /// Reference slots compared (null, or the id of the object the slot leads to).
    pub slots: u64,
    /// Raw bytes compared (the 8 id bytes for a header check).
    pub bytes: u64,
}

impl Checked {
    pub(super) fn add(&mut self, o: &Checked) {
        self.objects += o.objects;
        self.slots += o.slots;
        self.bytes += o.bytes;
    }
}

/// One thread's counters, added to the run's [`Report`] when the thread is done.
#[derive(Default)]
pub(super) struct ThreadStats {
    pub(super) ops: u64,
    pub(super) checkpoints: u64,
    pub(super) checked: Checked,
    pub(super) shared_checked: u64,
    pub(super) walked: Checked,
    pub(super) shared_ops: u64,
    pub(super) shared_lock_waits: u64,
    pub(super) objects_allocated: u64,
    pub(super) bytes_allocated: u64,
    pub(super) ooms: u64,
    pub(super) weak_cleared_seen: u64,
    pub(super) weak_deadlines: u64,
    pub(super) resurrections: u64,
    pub(super) max_checked: u64,
    pub(super) sheds: u64,
    /// Shed probes run, and those in which a pause completed (see `Config::shed_probe`).
    pub(super) shed_probes: u64,
    pub(super) shed_probes_paused: u64,
    pub(super) direct: DirectCounts,
}

/// What a run did.
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub runs: u64,
    pub duration: Duration,
    pub ops: u64,
    pub checkpoints: u64,
    /// Compared in full at checkpoints: every object reached from the roots (the shared pool
    /// included), with its header, every slot and every raw byte.
    pub checked: Checked,
    /// Of `checked.objects`, the objects of the shared pool.
    pub shared_objects_checked: u64,
    /// Compared between checkpoints: headers, ids and the slots followed on walks, whole
    /// objects on reads and resurrections.
    pub walked: Checked,
    /// Operations on the shared pool, and how many of them found its lock taken.
    pub shared_ops: u64,
    pub shared_lock_waits: u64,
    pub objects_allocated: u64,
    pub bytes_allocated: u64,
    pub cycles: u64,
    pub pauses: u64,
    pub bytes_relocated: u64,
    pub pages_relocated: u64,
    /// Sums of the `CycleRecord` counters of the same names.
    pub pages_compacted_in_place: u64,
    pub objects_compacted_in_place: u64,
    pub objects_self_forwarded: u64,
    pub relocation_waits: u64,
    pub worker_copies_lost: u64,
    /// With `Config::track_generations`: old-to-young slots the store barrier remembered,
    /// young slots relocation remembered at moved objects' new addresses, and young-pointing
    /// slots of old objects the verifier found remembered (`Heap::remembered_set_stats`).
    pub remembered_by_barrier: u64,
    pub remembered_by_relocation: u64,
    pub young_slots_verified: u64,
    /// Full cycles that stopped the store barrier's remembering until the next one (the
    /// `generational` director, while its minors did not pay).
    pub majors_unremembered: u64,
    /// Minors asked for (`GcCause::MinorRequested`) that ran as full cycles because the
    /// store barrier was not remembering.
    pub minor_requests_run_as_majors: u64,
    /// Minor cycles (`Config::minor_cycles`): how many ran, the minors that marked with a
    /// color an earlier minor used since the last major (reused colors), majors right after a
    /// major, majors that relocated pages followed by at least ten minors in a row, and the
    /// remembered slots minors scanned; the young pages minors aged and promoted in place,
    /// and the promoted objects' slots they remembered.
    pub minors: u64,
    pub minor_color_reuses: u64,
    pub back_to_back_majors: u64,
    pub relocating_majors_then_10_minors: u64,
    pub remembered_scanned: u64,
    pub pages_aged_by_minors: u64,
    pub pages_promoted_by_minors: u64,
    pub promoted_slots_remembered: u64,
    /// Sparse young pages minors evacuated, and the objects they copied out of them
    /// (`CycleRecord::pages_relocated`, `objects_evacuated_by_minor`).
    pub pages_evacuated_by_minors: u64,
    pub objects_evacuated_by_minors: u64,
    /// Of those, the objects copied to survivor target pages (aged by copy, staying young:
    /// `CycleRecord::objects_aged_by_copy`); the others were promoted by copy.
    pub objects_aged_by_copy: u64,
    /// The highest tenuring threshold a minor used (`CycleRecord::tenuring_threshold`).
    pub max_tenuring_threshold: u8,
    /// Young pages minors compacted in place because no target memory was left for their
    /// survivors (`CycleRecord::pages_compacted_in_place` of the minors).
    pub pages_compacted_by_minors: u64,
    /// Stale slots GC workers remapped while tracing (`CycleRecord::stale_slots_remapped`).
    pub stale_slots_remapped: u64,
    /// Slots of GC workers' copies healed right after their page's evacuation
    /// (`CycleRecord::copy_slots_remapped`).
    pub copy_slots_remapped: u64,
    /// Cycles that marked with Marked2 (`CycleRecord::mark_color`; `Config::mark_colors`
    /// `Rotate` makes every third cycle one), and stale slots the markers remapped and healed
    /// from a Marked2 pointer (`stale_slots_remapped` of the cycles whose stale color was
    /// Marked2), and weak handles remapped from one.
    pub cycles_marked2: u64,
    pub stale_marked2_remapped: u64,
    pub weak_marked2_remapped: u64,
    /// Consecutive cycle records that break the mark-color rule: a cycle whose stale color is
    /// not the mark color of the last major before it (the cycle whose relocation set the
    /// forwarding index holds: the previous cycle with majors only), or whose mark color is
    /// its stale color or the previous cycle's; or whose other stale color, the minor
    /// table's (`CycleRecord::stale_minor_color`), is not the previous cycle's mark color
    /// after a minor and none after a major.
    pub color_rule_breaks: u64,
    /// Roots Concurrent Mark Roots marked, and weak handles it remapped.
    pub roots_marked_concurrently: u64,
    pub weak_handles_remapped: u64,
    /// Pause Mark End tries that found work left (a mutator's buffer or the queue).
    pub mark_end_retries: u64,
    /// Concurrent phases run on an idle-class GC worker while mutators were paced.
    pub phases_on_idle_workers: u64,
    /// GC workers that joined a running parallel phase, and that left one (parked).
    pub workers_joined: u64,
    pub workers_left: u64,
    /// Cycles that compacted at least one page in place.
    pub cycles_with_in_place: u64,
    /// Largest live share of the heap a cycle's marking found, per mille.
    pub max_live_permille: u64,
    /// Sum over the cycles of the live share marking found, per mille (the mean is this
    /// divided by `cycles`).
    pub live_permille_sum: u64,
    pub stalls: u64,
    pub failed_stalls: u64,
    /// Pacing delays (`GcStats::pacing`), their total and the longest, in nanoseconds.
    pub pacing_delays: u64,
    pub pacing_total_ns: u64,
    pub max_pacing_ns: u64,
    /// The most pacing delay (imposed, less any part beyond the floor where it yielded to
    /// free memory running out) one thread had in any window of the pacer's floor
    /// (`PacingConfig::window`, the default 10 ms), and how many delays that window overlaps:
    /// the floor allows `(1 − min_mutator_share) × window` (1 ns of rounding per delay).
    pub worst_pacing_window_ns: u64,
    pub worst_pacing_window_delays: u64,
    /// The imposed delay the floor allows in one window: `(1 − min_mutator_share) × window`
    /// of the run's `PacingConfig` (of the runs added, that of the run whose worst window
    /// used the largest share of it).
    pub pacing_floor_budget_ns: u64,
    pub ooms: u64,
    pub weak_cleared_seen: u64,
    pub weak_clear_deadlines_checked: u64,
    pub resurrections: u64,
    pub max_pause_ns: u64,
    /// The longest pause less the heap verifier's walk inside it (the torture runs verify at
    /// every pause, and the walk's length grows with the heap): the collector's own pause.
    pub max_pause_unverified_ns: u64,
    /// The control meter's longest overshoot of a 1 ms sleep on a thread outside the heap:
    /// the machine's own noise in the run, beside its longest pause and time to safepoint.
    pub control_max_ns: u64,
    /// The longest pause's kind and its time to safepoint (ms), to tell a pause that waited
    /// for a thread from one that worked.
    pub max_pause_kind: String,
    pub max_pause_ttsp_ns: u64,
    /// Pauses that passed the safepoint timeout, and the mutators the longest pause still
    /// waited for at its timeout (the GC log's words; empty if it did not time out).
    pub safepoint_timeouts: u64,
    pub max_pause_stragglers: String,
    /// The longest time to safepoint of any pause, and the mutators that pause still waited
    /// for at its timeout.
    pub max_ttsp_ns: u64,
    pub max_ttsp_stragglers: String,
    /// Largest number of objects one checkpoint compared.
    pub max_objects_per_checkpoint: u64,
    /// Times a thread dropped roots to stay under its live-set budget.
    pub sheds: u64,
    /// Shed probes run (`Config::shed_probe`), and those in which a GC pause completed while
    /// the shed's model traversal was in progress.
    pub shed_probes: u64,
    pub shed_probes_paused: u64,
    /// Direct buffers the programs allocated (garbage ones included), of them from the
    /// shared native pool, and their bytes.
    pub buffers_allocated: u64,
    pub buffers_pooled: u64,
    pub buffer_bytes_allocated: u64,
    /// Releases that freed a buffer (count to zero), retains, and releases that did not free.
    pub buffers_released: u64,
    pub buffer_retains: u64,
    pub buffer_partial_releases: u64,
    /// Operations on buffers reached through the graph.
    pub buffer_ops: u64,
    /// Byte ranges and whole buffers compared with the model, and their bytes.
    pub buffer_contents_checks: u64,
    pub buffer_bytes_checked: u64,
    /// Of those, whole buffers compared at checkpoints.
    pub buffers_checked_at_checkpoints: u64,
    /// Accesses after the last release refused (`NativeError::Released`), and accesses out
    /// of bounds refused.
    pub buffer_released_refused: u64,
    pub buffer_oob_refused: u64,
    /// From the heap's `DirectStats`: buffers their owner's cleaner freed, dead owners
    /// found, cycles run at the direct-memory limit and allocations refused there.
    pub buffers_cleaned: u64,
    pub buffer_owners_dead: u64,
    pub direct_limit_cycles: u64,
    pub direct_limit_failures: u64,
    /// Runs whose end-of-run accounting of direct buffers was checked (and held).
    pub direct_end_checks: u64,
}

impl Report {
    /// Count what the minor cycles among `cycles` (in order) reached (see [`Report::minors`]).
    pub fn add_minors(&mut self, cycles: &[gc_runtime::CycleRecord]) {
        let mut since_major = Vec::new();
        let mut last_major: Option<(u64, bool)> = None; // (index, relocated pages)
        let mut run_of_minors = 0;
        let mut previous_minor = None;
        for (i, c) in cycles.iter().enumerate() {
            if !c.minor && c.cause == gc_runtime::GcCause::MinorRequested {
                self.minor_requests_run_as_majors += 1;
            }
            if c.minor {
                self.minors += 1;
                self.remembered_scanned += c.remembered_slots_scanned;
                self.pages_aged_by_minors += c.pages_aged;
                self.pages_promoted_by_minors += c.pages_promoted;
                self.promoted_slots_remembered += c.promoted_slots_remembered;
                self.pages_evacuated_by_minors += c.pages_relocated;
                self.objects_evacuated_by_minors += c.objects_evacuated_by_minor;
                self.objects_aged_by_copy += c.objects_aged_by_copy;
                self.max_tenuring_threshold = self
                    .max_tenuring_threshold
                    .max(c.tenuring_threshold.unwrap_or(0));
                self.pages_compacted_by_minors += c.pages_compacted_in_place;
                if since_major.contains(&c.mark_color) {
                    self.minor_color_reuses += 1;
                }
                since_major.push(c.mark_color);
                run_of_minors += 1;
                if run_of_minors == 10 && last_major.is_some_and(|(_, relocated)| relocated) {
                    self.relocating_majors_then_10_minors += 1;
                }
            } else {
                if previous_minor == Some(false) {
                    self.back_to_back_majors += 1;
                }
                since_major.clear();
                run_of_minors = 0;
                last_major = Some((i as u64, c.pages_relocated > 0));
            }
            previous_minor = Some(c.minor);
        }
    }

    pub fn add(&mut self, o: &Report) {
        self.runs += o.runs;
        self.duration += o.duration;
        self.ops += o.ops;
        self.checkpoints += o.checkpoints;
        self.checked.add(&o.checked);
        self.shared_objects_checked += o.shared_objects_checked;
        self.walked.add(&o.walked);
        self.shared_ops += o.shared_ops;
        self.shared_lock_waits += o.shared_lock_waits;
        self.objects_allocated += o.objects_allocated;
        self.bytes_allocated += o.bytes_allocated;
        self.cycles += o.cycles;
        self.pauses += o.pauses;
        self.bytes_relocated += o.bytes_relocated;
        self.pages_relocated += o.pages_relocated;
        self.pages_compacted_in_place += o.pages_compacted_in_place;
        self.objects_compacted_in_place += o.objects_compacted_in_place;
        self.objects_self_forwarded += o.objects_self_forwarded;
        self.relocation_waits += o.relocation_waits;
        self.worker_copies_lost += o.worker_copies_lost;
        self.remembered_by_barrier += o.remembered_by_barrier;
        self.majors_unremembered += o.majors_unremembered;
        self.minor_requests_run_as_majors += o.minor_requests_run_as_majors;
        self.remembered_by_relocation += o.remembered_by_relocation;
        self.young_slots_verified += o.young_slots_verified;
        self.minors += o.minors;
        self.minor_color_reuses += o.minor_color_reuses;
        self.back_to_back_majors += o.back_to_back_majors;
        self.relocating_majors_then_10_minors += o.relocating_majors_then_10_minors;
        self.remembered_scanned += o.remembered_scanned;
        self.pages_aged_by_minors += o.pages_aged_by_minors;
        self.pages_promoted_by_minors += o.pages_promoted_by_minors;
        self.promoted_slots_remembered += o.promoted_slots_remembered;
        self.pages_evacuated_by_minors += o.pages_evacuated_by_minors;
        self.objects_evacuated_by_minors += o.objects_evacuated_by_minors;
        self.objects_aged_by_copy += o.objects_aged_by_copy;
        self.max_tenuring_threshold = self.max_tenuring_threshold.max(o.max_tenuring_threshold);
        self.pages_compacted_by_minors += o.pages_compacted_by_minors;
        self.stale_slots_remapped += o.stale_slots_remapped;
        self.copy_slots_remapped += o.copy_slots_remapped;
        self.cycles_marked2 += o.cycles_marked2;
        self.stale_marked2_remapped += o.stale_marked2_remapped;
        self.weak_marked2_remapped += o.weak_marked2_remapped;
        self.color_rule_breaks += o.color_rule_breaks;
        self.roots_marked_concurrently += o.roots_marked_concurrently;
        self.weak_handles_remapped += o.weak_handles_remapped;
        self.mark_end_retries += o.mark_end_retries;
        self.phases_on_idle_workers += o.phases_on_idle_workers;
        self.workers_joined += o.workers_joined;
        self.workers_left += o.workers_left;
        self.cycles_with_in_place += o.cycles_with_in_place;
        self.max_live_permille = self.max_live_permille.max(o.max_live_permille);
        self.live_permille_sum += o.live_permille_sum;
        self.stalls += o.stalls;
        self.failed_stalls += o.failed_stalls;
        self.pacing_delays += o.pacing_delays;
        self.pacing_total_ns += o.pacing_total_ns;
        self.max_pacing_ns = self.max_pacing_ns.max(o.max_pacing_ns);
        // The worst window is the one that used the largest share of its own run's floor
        // budget, kept with that budget: runs with different floors are summed here (the
        // soak's total), and the largest window beside the smallest budget of another run
        // would read as a floor broken where none was.
        let share = |window: u64, budget: u64| window as f64 / budget.max(1) as f64;
        if self.pacing_floor_budget_ns == 0
            || share(o.worst_pacing_window_ns, o.pacing_floor_budget_ns)
                > share(self.worst_pacing_window_ns, self.pacing_floor_budget_ns)
        {
            self.worst_pacing_window_ns = o.worst_pacing_window_ns;
            self.worst_pacing_window_delays = o.worst_pacing_window_delays;
            self.pacing_floor_budget_ns = o.pacing_floor_budget_ns;
        }
        self.ooms += o.ooms;
        self.shed_probes += o.shed_probes;
        self.shed_probes_paused += o.shed_probes_paused;
        self.weak_cleared_seen += o.weak_cleared_seen;
        self.weak_clear_deadlines_checked += o.weak_clear_deadlines_checked;
        self.resurrections += o.resurrections;
        if o.max_pause_ns > self.max_pause_ns {
            self.max_pause_kind = o.max_pause_kind.clone();
            self.max_pause_ttsp_ns = o.max_pause_ttsp_ns;
            self.max_pause_stragglers = o.max_pause_stragglers.clone();
        }
        self.safepoint_timeouts += o.safepoint_timeouts;
        if o.max_ttsp_ns > self.max_ttsp_ns {
            self.max_ttsp_ns = o.max_ttsp_ns;
            self.max_ttsp_stragglers = o.max_ttsp_stragglers.clone();
        }
        self.max_pause_ns = self.max_pause_ns.max(o.max_pause_ns);
        self.max_pause_unverified_ns = self.max_pause_unverified_ns.max(o.max_pause_unverified_ns);
        self.control_max_ns = self.control_max_ns.max(o.control_max_ns);
        self.max_objects_per_checkpoint = self
            .max_objects_per_checkpoint
            .max(o.max_objects_per_checkpoint);
        self.sheds += o.sheds;
        self.buffers_allocated += o.buffers_allocated;
        self.buffers_pooled += o.buffers_pooled;
        self.buffer_bytes_allocated += o.buffer_bytes_allocated;
        self.buffers_released += o.buffers_released;
        self.buffer_retains += o.buffer_retains;
        self.buffer_partial_releases += o.buffer_partial_releases;
        self.buffer_ops += o.buffer_ops;
        self.buffer_contents_checks += o.buffer_contents_checks;
        self.buffer_bytes_checked += o.buffer_bytes_checked;
        self.buffers_checked_at_checkpoints += o.buffers_checked_at_checkpoints;
        self.buffer_released_refused += o.buffer_released_refused;
        self.buffer_oob_refused += o.buffer_oob_refused;
        self.buffers_cleaned += o.buffers_cleaned;
        self.buffer_owners_dead += o.buffer_owners_dead;
        self.direct_limit_cycles += o.direct_limit_cycles;
        self.direct_limit_failures += o.direct_limit_failures;
        self.direct_end_checks += o.direct_end_checks;
    }

    pub(super) fn add_thread(&mut self, t: &ThreadStats) {
        self.ops += t.ops;
        self.checkpoints += t.checkpoints;
        self.checked.add(&t.checked);
        self.shared_objects_checked += t.shared_checked;
        self.walked.add(&t.walked);
        self.shared_ops += t.shared_ops;
        self.shared_lock_waits += t.shared_lock_waits;
        self.objects_allocated += t.objects_allocated;
        self.bytes_allocated += t.bytes_allocated;
        self.ooms += t.ooms;
        self.shed_probes += t.shed_probes;
        self.shed_probes_paused += t.shed_probes_paused;
        self.weak_cleared_seen += t.weak_cleared_seen;
        self.weak_clear_deadlines_checked += t.weak_deadlines;
        self.resurrections += t.resurrections;
        self.max_objects_per_checkpoint = self.max_objects_per_checkpoint.max(t.max_checked);
        self.sheds += t.sheds;
        let d = &t.direct;
        self.buffers_allocated += d.allocated;
        self.buffers_pooled += d.pooled;
        self.buffer_bytes_allocated += d.bytes;
        self.buffers_released += d.released;
        self.buffer_retains += d.retains;
        self.buffer_partial_releases += d.partial_releases;
        self.buffer_ops += d.ops;
        self.buffer_contents_checks += d.contents_checks;
        self.buffer_bytes_checked += d.bytes_checked;
        self.buffers_checked_at_checkpoints += d.checkpoint_buffers;
        self.buffer_released_refused += d.released_refused;
        self.buffer_oob_refused += d.oob_refused;
    }

    /// Take the collector's figures from the heap's statistics.
    pub(super) fn add_gc(
        &mut self,
        stats: &gc_runtime::GcStats,
        max_heap: u64,
        pacing: &gc_runtime::PacingConfig,
    ) {
        let sum = |f: fn(&CycleRecord) -> u64| stats.cycles.iter().map(f).sum::<u64>();
        self.cycles = stats.cycles.len() as u64;
        self.pauses = stats.pauses.len() as u64;
        self.max_pause_ns = stats.pauses.iter().map(|p| p.total_ns).max().unwrap_or(0);
        if let Some(p) = stats.pauses.iter().max_by_key(|p| p.total_ns) {
            self.max_pause_kind = p.kind.name().to_string();
            self.max_pause_ttsp_ns = p.time_to_safepoint_ns;
            self.max_pause_stragglers = stats
                .safepoint_timeouts
                .iter()
                .find(|t| t.start_at_ns == p.start_at_ns)
                .map(|t| t.describe_stragglers())
                .unwrap_or_default();
        }
        self.safepoint_timeouts = stats.totals.safepoint_timeouts;
        if let Some(p) = stats.pauses.iter().max_by_key(|p| p.time_to_safepoint_ns) {
            self.max_ttsp_ns = p.time_to_safepoint_ns;
            self.max_ttsp_stragglers = stats
                .safepoint_timeouts
                .iter()
                .find(|t| t.start_at_ns == p.start_at_ns)
                .map(|t| t.describe_stragglers())
                .unwrap_or_default();
        }
        self.max_pause_unverified_ns = stats
            .pauses
            .iter()
            .map(|p| p.total_ns.saturating_sub(p.verify_ns))
            .max()
            .unwrap_or(0);
        self.bytes_relocated = sum(|c| c.bytes_relocated);
        self.pages_relocated = sum(|c| c.pages_relocated);
        self.pages_compacted_in_place = sum(|c| c.pages_compacted_in_place);
        self.objects_compacted_in_place = sum(|c| c.objects_compacted_in_place);
        self.objects_self_forwarded = sum(|c| c.objects_self_forwarded);
        self.relocation_waits = sum(|c| c.relocation_waits);
        self.worker_copies_lost = sum(|c| c.worker_copies_lost);
        self.stale_slots_remapped = sum(|c| c.stale_slots_remapped);
        self.copy_slots_remapped = sum(|c| c.copy_slots_remapped);
        let m2 = Some(gc_runtime::inspect::GoodColor::Marked2);
        self.cycles_marked2 = stats.cycles.iter().filter(|c| c.mark_color == m2).count() as u64;
        let stale_m2 = stats.cycles.iter().filter(|c| c.stale_color == m2);
        self.stale_marked2_remapped = stale_m2.clone().map(|c| c.stale_slots_remapped).sum();
        self.weak_marked2_remapped = stale_m2.map(|c| c.weak_handles_remapped).sum();
        self.color_rule_breaks = 0;
        let mut last_major = None;
        for w in stats.cycles.windows(2) {
            if !w[0].minor {
                last_major = Some(w[0].mark_color);
            }
            if w[1].cycle != w[0].cycle + 1 {
                last_major = None;
                continue;
            }
            let Some(major) = last_major else { continue };
            let minor_table = if w[0].minor { w[0].mark_color } else { None };
            if w[1].stale_color != major
                || w[1].mark_color == w[1].stale_color
                || w[1].mark_color == w[0].mark_color
                || w[1].stale_minor_color != minor_table
            {
                self.color_rule_breaks += 1;
            }
        }
        self.roots_marked_concurrently = sum(|c| c.roots_marked_concurrently);
        self.weak_handles_remapped = sum(|c| c.weak_handles_remapped);
        self.mark_end_retries = sum(|c| c.mark_end_retries);
        self.phases_on_idle_workers = sum(|c| c.phases_on_idle_workers);
        self.workers_joined = sum(|c| c.workers_joined);
        self.workers_left = sum(|c| c.workers_left);
        self.cycles_with_in_place = stats
            .cycles
            .iter()
            .filter(|c| c.pages_compacted_in_place > 0)
            .count() as u64;
        let live = |c: &CycleRecord| c.live_bytes * 1000 / max_heap.max(1);
        self.max_live_permille = stats.cycles.iter().map(live).max().unwrap_or(0);
        self.live_permille_sum = stats.cycles.iter().map(live).sum();
        self.stalls = stats.stalls.len() as u64;
        self.failed_stalls = stats.stalls.iter().filter(|s| s.failed).count() as u64;
        self.buffers_cleaned = stats.direct.cleaned;
        self.buffer_owners_dead = stats.direct.owners_dead;
        self.direct_limit_cycles = stats.direct.limit_cycles;
        self.direct_limit_failures = stats.direct.limit_failures;
        self.pacing_delays = stats.pacing.len() as u64;
        self.pacing_total_ns = stats.pacing.iter().map(|p| p.duration_ns).sum();
        self.max_pacing_ns = stats
            .pacing
            .iter()
            .map(|p| p.duration_ns)
            .max()
            .unwrap_or(0);
        let window = pacing.window.as_nanos() as u64;
        (self.worst_pacing_window_ns, self.worst_pacing_window_delays) =
            worst_pacing_window(&stats.pacing, window);
        self.pacing_floor_budget_ns = (window as f64 * (1.0 - pacing.min_mutator_share)) as u64;
    }
}

/// The most imposed delay within the floor one thread's records hold in any window of
/// `window` ns, and how many records that window overlaps (the worst window ends where a
/// delay ends). A delay's part beyond the floor (`beyond_floor_ns`: the floor yielded
/// because free memory was about to run out) is left out: the floor bounds the rest.
fn worst_pacing_window(records: &[gc_runtime::PacingRecord], window: u64) -> (u64, u64) {
    let span = |p: &gc_runtime::PacingRecord| {
        let within = p.imposed_ns.saturating_sub(p.beyond_floor_ns);
        (p.start_at_ns, p.start_at_ns + within)
    };
    let mut worst = (0, 0);
    for p in records {
        let end = span(p).1;
        let from = end.saturating_sub(window);
        let (mut held, mut n) = (0, 0);
        for q in records.iter().filter(|q| q.thread == p.thread) {
            let (a, b) = span(q);
            let overlap = b.min(end).saturating_sub(a.max(from));
            if overlap > 0 {
                held += overlap;
                n += 1;
            }
        }
        worst = worst.max((held, n));
    }
    worst
}

/// `n` bytes in the largest binary unit that keeps the figure at least 1.
fn bytes_human(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "runs {}, {:.1}s, {} ops, {} checkpoints",
            self.runs,
            self.duration.as_secs_f64(),
            self.ops,
            self.checkpoints,
        )?;
        writeln!(
            f,
            "compared with the model at checkpoints: {} objects (max {} at one; {} of the \
             shared pool), {} slots, {} raw bytes; between checkpoints: {} objects, {} slots, \
             {} raw bytes",
            self.checked.objects,
            self.max_objects_per_checkpoint,
            self.shared_objects_checked,
            self.checked.slots,
            bytes_human(self.checked.bytes),
            self.walked.objects,
            self.walked.slots,
            bytes_human(self.walked.bytes),
        )?;
        writeln!(
            f,
            "shared pool: {} ops, {} found the lock taken",
            self.shared_ops, self.shared_lock_waits
        )?;
        writeln!(
            f,
            "allocated {} objects ({}); {} GC cycles, {} pauses (max {:.3} ms, {} with {:.3} ms \
             to safepoint{}; {:.3} ms without the verifier's walk; longest time to safepoint \
             {:.3} ms{}; {} passed the safepoint timeout; control meter's longest overshoot \
             {:.3} ms), {} relocated ({} pages freed); live at marking {:.1}% of the \
             heap on average, {:.1}% at most",
            self.objects_allocated,
            bytes_human(self.bytes_allocated),
            self.cycles,
            self.pauses,
            self.max_pause_ns as f64 / 1e6,
            self.max_pause_kind,
            self.max_pause_ttsp_ns as f64 / 1e6,
            if self.max_pause_stragglers.is_empty() {
                String::new()
            } else {
                format!(
                    ", still running at the timeout: {}",
                    self.max_pause_stragglers
                )
            },
            self.max_pause_unverified_ns as f64 / 1e6,
            self.max_ttsp_ns as f64 / 1e6,
            if self.max_ttsp_stragglers.is_empty() {
                String::new()
            } else {
                format!(" ({})", self.max_ttsp_stragglers)
            },
            self.safepoint_timeouts,
            self.control_max_ns as f64 / 1e6,
            bytes_human(self.bytes_relocated),
            self.pages_relocated,
            self.live_permille_sum as f64 / self.cycles.max(1) as f64 / 10.0,
            self.max_live_permille as f64 / 10.0,
        )?;
        writeln!(
            f,
            "in-place relocation: {} pages compacted in place (in {} cycles), {} objects placed \
             by it, {} of them left at their address (self-forwarded); {} relocation waits; {} \
             GC worker copies lost to a mutator's",
            self.pages_compacted_in_place,
            self.cycles_with_in_place,
            self.objects_compacted_in_place,
            self.objects_self_forwarded,
            self.relocation_waits,
            self.worker_copies_lost,
        )?;
        if self.remembered_by_barrier + self.young_slots_verified > 0 {
            writeln!(
                f,
                "remembered set: {} slots remembered by the store barrier, {} by relocation; {} \
                 young-pointing slots of old objects verified; {} full cycles stopped the \
                 remembering until the next, {} minors asked for ran as full cycles meanwhile",
                self.remembered_by_barrier,
                self.remembered_by_relocation,
                self.young_slots_verified,
                self.majors_unremembered,
                self.minor_requests_run_as_majors,
            )?;
        }
        if self.minors > 0 {
            writeln!(
                f,
                "minor cycles: {} ({} remembered slots scanned); {} minor colors reused between \
                 majors, {} back-to-back majors, {} relocating majors followed by 10+ minors; \
                 {} young pages aged, {} promoted in place ({} promoted objects' slots \
                 remembered), {} evacuated ({} objects copied out, {} of them aged by copy), \
                 {} compacted in place; tenuring threshold up to {}",
                self.minors,
                self.remembered_scanned,
                self.minor_color_reuses,
                self.back_to_back_majors,
                self.relocating_majors_then_10_minors,
                self.pages_aged_by_minors,
                self.pages_promoted_by_minors,
                self.promoted_slots_remembered,
                self.pages_evacuated_by_minors,
                self.objects_evacuated_by_minors,
                self.objects_aged_by_copy,
                self.pages_compacted_by_minors,
                self.max_tenuring_threshold,
            )?;
        }
        writeln!(
            f,
            "concurrent root processing: {} roots marked by Concurrent Mark Roots, {} stale weak \
             handles remapped; {} stale slots remapped by the markers, {} slots of copies by the \
             relocating workers; {} cycles marked with \
             Marked2, {} stale slots and {} weak handles remapped from Marked2, {} breaks of the \
             mark-color rule; {} Pause Mark End tries \
             found work left; {} concurrent phases ran on idle-class workers while mutators were \
             paced; {} GC workers joined running phases, {} left them",
            self.roots_marked_concurrently,
            self.weak_handles_remapped,
            self.stale_slots_remapped,
            self.copy_slots_remapped,
            self.cycles_marked2,
            self.stale_marked2_remapped,
            self.weak_marked2_remapped,
            self.color_rule_breaks,
            self.mark_end_retries,
            self.phases_on_idle_workers,
            self.workers_joined,
            self.workers_left,
        )?;
        writeln!(
            f,
            "direct buffers: {} allocated ({} from the shared pool, {}), {} freed by release \
             ({} releases left them held, {} retains), {} freed by their owner's cleaner ({} dead \
             owners found); {} buffer ops, contents compared {} times ({}; {} whole buffers at \
             checkpoints), {} accesses after release and {} out of bounds refused; {} cycles at \
             the direct-memory limit, {} allocations refused there; end-of-run accounting held \
             in {} runs",
            self.buffers_allocated,
            self.buffers_pooled,
            bytes_human(self.buffer_bytes_allocated),
            self.buffers_released,
            self.buffer_partial_releases,
            self.buffer_retains,
            self.buffers_cleaned,
            self.buffer_owners_dead,
            self.buffer_ops,
            self.buffer_contents_checks,
            bytes_human(self.buffer_bytes_checked),
            self.buffers_checked_at_checkpoints,
            self.buffer_released_refused,
            self.buffer_oob_refused,
            self.direct_limit_cycles,
            self.direct_limit_failures,
            self.direct_end_checks,
        )?;
        write!(
            f,
            "{} live-set sheds{}, {} allocation stalls ({} failed), {} pacing delays ({:.1} ms, \
             longest {:.3} ms, worst floor window {:.3} of {:.3} ms imposed), {} out-of-memory errors; weak handles: {} seen cleared, {} \
             clear deadlines met, {} resurrections",
            self.sheds,
            if self.shed_probes > 0 {
                format!(
                    " ({} probed, a pause completed during {} of their model traversals)",
                    self.shed_probes, self.shed_probes_paused
                )
            } else {
                String::new()
            },
            self.stalls,
            self.failed_stalls,
            self.pacing_delays,
            self.pacing_total_ns as f64 / 1e6,
            self.max_pacing_ns as f64 / 1e6,
            self.worst_pacing_window_ns as f64 / 1e6,
            self.pacing_floor_budget_ns as f64 / 1e6,
            self.ooms,
            self.weak_cleared_seen,
            self.weak_clear_deadlines_checked,
            self.resurrections,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::Report;

    fn paced(window_ns: u64, budget_ns: u64) -> Report {
        Report {
            worst_pacing_window_ns: window_ns,
            worst_pacing_window_delays: 1,
            pacing_floor_budget_ns: budget_ns,
            ..Report::default()
        }
    }

    /// Runs with different floors summed: the worst window is the one nearest its own
    /// floor, shown with that floor, not the largest window beside the smallest floor (the
    /// soak's total once read "1.465 of 1.000 ms", two runs' figures, all floors held).
    #[test]
    fn the_worst_window_is_kept_with_its_own_floor() {
        let mut total = Report::default();
        total.add(&paced(1_465_000, 5_000_000));
        total.add(&paced(1_000_000, 1_000_000));
        total.add(&paced(3_000_000, 5_000_000));
        assert_eq!(
            (total.worst_pacing_window_ns, total.pacing_floor_budget_ns),
            (1_000_000, 1_000_000)
        );
        total.add(&paced(4_900_000, 5_000_000));
        assert_eq!(
            total.pacing_floor_budget_ns, 1_000_000,
            "0.98 of its floor < 1.0"
        );
        total.add(&paced(1_200_000, 1_000_000));
        assert_eq!(
            (total.worst_pacing_window_ns, total.pacing_floor_budget_ns),
            (1_200_000, 1_000_000),
            "a window over its floor is the one shown"
        );
    }
}
