//! Torture tests with a shadow model (see `integration_tests::torture`): two mutator threads
//! run a seeded random program against the public API while cycles run back to back with the
//! verifier on, in all four modes, with heaps small enough to stall often, and with nearly
//! full heaps where relocation runs out of target memory and compacts pages in place while
//! both threads work on a shared pool of objects. The programs use direct buffers too; every
//! test checks that buffers were released and, where cycles run, freed by their owners'
//! cleaners, and the plain `concurrent` and `stw` ones that a small direct-memory limit ran
//! its cycles.
//!
//! A test that must reach a timing-dependent path (stalls, in-place compaction) runs again
//! with the next seed, up to three runs, while the runs so far have not reached it: a loaded
//! machine can make one run miss it.
//!
//! - replay a seed: `ZRS_TORTURE_SEED=0x... cargo test -p integration-tests --release --test
//!   torture -- --exact <test>`;
//! - soak: `ZRS_SOAK_SECS=3600 cargo test -p integration-tests --release --test torture --
//!   --ignored soak --nocapture` (optionally `ZRS_SOAK_REPORT=<file>` to write the summary, and
//!   `ZRS_SOAK_MODE=concurrent` to rotate through one mode's configurations only).
use gc_runtime::{ColorChoice, Mode};
use integration_tests::torture::{
    base_seed, clear_abort_note, run, set_abort_note, try_run, Config, Report,
};
use std::time::{Duration, Instant};

const MIB: u64 = 1 << 20;

/// Runs of a reach-checked test at most: one more run (with the next seed) while the path it
/// covers was not reached (five: at load average 13, three runs of `concurrent_nearly_full`
/// once compacted no page in place).
const MAX_RUNS_TO_REACH: u64 = 5;

/// Run `c`, and again with the next seeds while `reached` does not hold for the runs so far
/// (at most [`MAX_RUNS_TO_REACH`] runs); returns their totals. Whether a run stalls or
/// compacts a page in place depends on the machine's speed and load: a run on a loaded
/// machine can miss the path that the same run reaches on a quiet one. A test still fails
/// when its path was not reached in all the runs.
fn run_until(c: &Config, reached: impl Fn(&Report) -> bool) -> Report {
    let mut total = run(c);
    let mut runs = 1;
    while !reached(&total) && runs < MAX_RUNS_TO_REACH {
        let mut next = c.clone();
        next.seed = c.seed.wrapping_add(runs);
        eprintln!(
            "{}: the path was not reached in {runs} run(s); running again with seed {:#x}",
            c.name, next.seed
        );
        total.add(&run(&next));
        runs += 1;
    }
    total
}

fn cfg(test: &str, mode: Mode, heap_mib: u64, secs: u64, seed: u64) -> Config {
    let mut c = Config::new(test, mode, heap_mib * MIB, Duration::from_secs(secs), seed);
    c.test_name = test.to_string();
    c
}

/// A heap small enough that allocation stalls happen all the time. The live set stays at half
/// the heap, so an out-of-memory error means a stalled thread lost what a cycle freed to the
/// other thread several cycles in a row (there is no queue that serves stalled allocations
/// first, as ZGC has): tolerated as an error that must leave the heap consistent — the model
/// is checked after it — but it must stay rare.
fn small(test: &str, mode: Mode, secs: u64, seed: u64) -> Config {
    // A stw cycle frees everything inside one pause: its heap must be smaller to stall often.
    let mib = if mode == Mode::Stw { 20 } else { 32 };
    let mut c = cfg(test, mode, mib, secs, seed);
    // The stall path is what these heaps are for, and pacing (with the GC workers it adds
    // while mutators are paced) makes stalls rare even here: these run without it. The
    // nearly full heaps run with it and must be paced.
    c.pacing = false;
    // Back-to-back stw cycles leave the threads too little time between two pauses to fill
    // the heap: on a loaded machine, three runs in a row did not stall once. Started by the
    // director, cycles let garbage gather.
    c.continuous = mode != Mode::Stw;
    c.live_fraction = 0.5;
    c.garbage_burst = 64;
    c.oom_ok = true;
    c
}

/// A 128 MiB heap with a small direct-memory limit: bursts of garbage buffers reach it
/// between cycles, so allocations run "Direct Memory" cycles (and may, rarely, be refused
/// there: counted, never a mismatch). (Not the small heaps: the extra cycles would keep
/// them from stalling.)
fn direct_limited(test: &str, mode: Mode, secs: u64, seed: u64) -> Config {
    let mut c = cfg(test, mode, 128, secs, seed);
    c.max_direct = Some(MIB);
    c
}

/// The direct-buffer paths were reached and checked: contents compared (at checkpoints
/// too), `release` freed buffers and refused later accesses, and every run's end-of-run
/// accounting held (each buffer freed exactly once, no native byte left in use). In a mode
/// that collects, cleaners freed the buffers of dead owners; in `epsilon` mode none ran.
fn assert_direct_paths(r: &Report, mode: Mode) {
    assert!(
        r.buffers_allocated > 0 && r.buffers_pooled > 0 && r.buffers_pooled < r.buffers_allocated,
        "no pooled and unpooled direct buffers allocated: {r}"
    );
    assert!(
        r.buffer_contents_checks > 0 && r.buffers_checked_at_checkpoints > 0,
        "no buffer contents compared with the model: {r}"
    );
    assert!(
        r.buffers_released > 0 && r.buffer_released_refused > 0,
        "no buffer released, or no access after release refused: {r}"
    );
    assert_eq!(
        r.direct_end_checks, r.runs,
        "end-of-run accounting of direct buffers not checked in every run: {r}"
    );
    if mode == Mode::Epsilon {
        assert_eq!(r.buffers_cleaned, 0, "an epsilon heap ran cleaners: {r}");
    } else {
        assert!(
            r.buffers_cleaned > 0,
            "no dead owner's buffer freed by its cleaner: {r}"
        );
    }
}

/// The direct-memory limit (of the `direct_limited` configurations) was reached:
/// allocations ran "Direct Memory" cycles, and some that held buffers until the limit were
/// refused there (with the error checked).
fn assert_direct_limit_reached(r: &Report) {
    // (A debug build allocates too slowly to outrun the collector.)
    if cfg!(not(debug_assertions)) {
        assert!(
            r.direct_limit_cycles > 0,
            "no cycle at the direct-memory limit: {r}"
        );
        assert!(
            r.direct_limit_failures > 0,
            "no allocation refused at the direct-memory limit: {r}"
        );
    }
}

fn assert_stalls_often_and_ooms_rarely(r: &Report) {
    // (A debug build allocates too slowly to outrun the collector.)
    if cfg!(not(debug_assertions)) {
        assert!(r.stalls > 0, "no allocation stall in a small heap: {r}");
    }
    assert_ooms_rare(r);
}

/// No thread was held by imposed pacing delays more than the pacer's floor allows in any
/// window (the default: half of any 10 ms), whenever pacing ran, leaving out what each delay
/// took beyond the floor where it yielded to free memory about to run out.
fn assert_pacing_floor_held(r: &Report) {
    let budget = r.pacing_floor_budget_ns;
    assert!(
        r.worst_pacing_window_ns <= budget + r.worst_pacing_window_delays,
        "a thread was held {} ns of pacing delays in one window, over the floor's {budget} ns: \
         {r}",
        r.worst_pacing_window_ns
    );
}

/// Pacing (on by default) was reached: a concurrent nearly full heap, where the threads
/// outrun the collector, had its mutators delayed, within the floor, and the collector then
/// ran concurrent phases on idle-class workers. (The model check covers what the threads did
/// around the delays: a paced allocation is an allocation like any other.)
fn assert_paced(r: &Report) {
    assert_pacing_floor_held(r);
    // (A debug build allocates too slowly to outrun the collector.)
    if cfg!(not(debug_assertions)) {
        assert!(
            r.pacing_delays > 0,
            "no pacing delay in a nearly full concurrent heap: {r}"
        );
        assert!(
            r.phases_on_idle_workers > 0,
            "no concurrent phase on an idle-class worker in a paced heap: {r}"
        );
    }
}

/// A nearly full heap: a live-set budget of 75% of the heap in `concurrent` mode, 78% in
/// `stw` mode (a fifth of the heap in a pool both threads read, check and mutate), kept
/// filled (`Config::fill`), with objects of mixed sizes, medium ones included. There is no
/// relocation reserve, so relocation runs out of target memory and compacts pages in place
/// (concurrently with the threads' loads in `concurrent` mode). A stw cycle relocates inside its pause, with nothing allocating meanwhile, so its
/// heap must be fuller to run out. 128 MiB is the smallest heap with medium pages.
/// Out-of-memory errors have the same tolerance as in `small`.
fn nearly_full(test: &str, mode: Mode, secs: u64, seed: u64) -> Config {
    let mut c = cfg(test, mode, 128, secs, seed);
    c.live_fraction = if mode == Mode::Stw { 0.78 } else { 0.75 };
    // A stw cycle frees and compacts everything inside its pause: back to back, each finds
    // too little to relocate to run out of target memory (on a slow day, no run of 14 s
    // compacted a page in place). Started by the director, they find more.
    c.continuous = mode != Mode::Stw;
    // The default relocation reserve is enough for a cycle's targets since relocation fills
    // one shared target page before it takes more (no stw run of 14 s, and some concurrent
    // ones, compacted a page in place). Without a reserve, mutators fill every page, and a
    // full heap must compact.
    c.relocation_reserve = Some(0);
    // The pacer, from the start of each cycle and with half of every 10 ms to hold, keeps
    // the heap from filling (three runs of 12 s on a loaded machine never compacted a page in
    // place): a floor of 90% leaves it a millisecond of each 10 ms, so the threads still
    // outrun the collector and fill the heap, and are paced at the floor on the way.
    c.pacing_floor = Some(0.9);
    c.shared_fraction = 0.2;
    c.fill = true;
    c.max_objects = 40_000;
    c.garbage_burst = 64;
    c.oom_ok = true;
    c
}

fn assert_ooms_rare(r: &Report) {
    assert!(
        r.ooms * 10_000 <= r.objects_allocated,
        "out-of-memory errors are not rare: {r}"
    );
}

/// The in-place relocation path was reached and the model was compared with the heap,
/// the shared pool included.
fn assert_reaches_in_place(r: &Report) {
    assert!(
        r.pages_compacted_in_place > 0,
        "no page was compacted in place: {r}"
    );
    assert!(
        r.checked.objects > 0 && r.checked.slots > 0 && r.checked.bytes > 0,
        "nothing compared at checkpoints: {r}"
    );
    assert!(
        r.shared_objects_checked > 0 && r.walked.objects > 0,
        "no shared object compared: {r}"
    );
    assert_ooms_rare(r);
}

#[test]
fn concurrent() {
    let r = run(&direct_limited(
        "concurrent",
        Mode::Concurrent,
        16,
        base_seed(),
    ));
    assert!(r.cycles >= 5, "{r}");
    assert!(r.bytes_relocated > 0, "{r}");
    // The roots are marked while the mutators run, and weak handles the last relocation left
    // behind are remapped then: both paths must be reached.
    assert!(r.roots_marked_concurrently > 0, "{r}");
    assert!(r.weak_handles_remapped > 0, "{r}");
    // Marking meets pointers the last relocation left stale and remaps them through the
    // mark ring's stale stage (deferred until the forwarding entry is prefetched): reached.
    assert!(r.stale_slots_remapped > 0, "{r}");
    // A relocating worker heals its copies' slots that point into the page it just
    // evacuated (the rest stay stale for the markers above): reached.
    assert!(r.copy_slots_remapped > 0, "{r}");
    // The default mark colors alternate Marked0 and Marked1: the Marked2 view stays unused.
    assert_eq!(r.cycles_marked2, 0, "{r}");
    assert_eq!(r.color_rule_breaks, 0, "{r}");
    // A GC worker copies without looking the entry up first: objects the threads' barriers
    // relocated before it make its CAS lose, and its copy is given back (compared with the
    // model like every other object).
    assert!(
        r.worker_copies_lost > 0,
        "no GC worker copy lost to a barrier's: {r}"
    );
    assert_direct_paths(&r, Mode::Concurrent);
    assert_direct_limit_reached(&r);
    // Pacing is on here too (the default floor): its delays were reached, within the floor.
    // (A debug build allocates too slowly to outrun the collector.)
    if cfg!(not(debug_assertions)) {
        assert!(r.pacing_delays > 0, "no pacing delay: {r}");
    }
    assert_pacing_floor_held(&r);
}

/// The GC workers' target swings at every safe point (`Heap::swing_gc_workers_for_tests`):
/// workers join and leave running marking and relocation phases all the time, handing back
/// the work they hold when they leave, while the model checks every object. Both paths must
/// be reached (on two cores or more: on one, a phase has no worker to gain).
#[test]
fn concurrent_crews_swing() {
    let mut c = direct_limited("concurrent_crews_swing", Mode::Concurrent, 12, base_seed());
    c.swing_gc_workers = 1;
    let r = run(&c);
    assert!(r.cycles >= 5, "{r}");
    assert!(r.bytes_relocated > 0, "{r}");
    if std::thread::available_parallelism().map_or(1, |n| n.get()) >= 2 {
        assert!(
            r.workers_joined > 0,
            "no GC worker joined a running phase: {r}"
        );
        assert!(r.workers_left > 0, "no GC worker left a running phase: {r}");
    }
    assert_direct_paths(&r, Mode::Concurrent);
}

#[test]
fn stw() {
    let r = run(&direct_limited("stw", Mode::Stw, 8, base_seed()));
    assert!(r.cycles >= 5, "{r}");
    assert!(r.bytes_relocated > 0, "{r}");
    assert_eq!(
        r.roots_marked_concurrently, 0,
        "the stw pause marks its roots itself: {r}"
    );
    assert_direct_paths(&r, Mode::Stw);
    assert_direct_limit_reached(&r);
}

#[test]
fn epsilon_until_out_of_memory() {
    let r = run(&cfg(
        "epsilon_until_out_of_memory",
        Mode::Epsilon,
        256,
        30,
        base_seed(),
    ));
    assert_eq!(r.cycles, 0, "{r}");
    assert!(r.ooms > 0, "the epsilon heap never ran out of memory: {r}");
    assert_direct_paths(&r, Mode::Epsilon);
}

#[test]
fn concurrent_small_heap_stalls() {
    let r = run_until(
        &small(
            "concurrent_small_heap_stalls",
            Mode::Concurrent,
            10,
            base_seed(),
        ),
        |r| r.stalls > 0,
    );
    assert_stalls_often_and_ooms_rarely(&r);
    assert_eq!(r.pacing_delays, 0, "pacing is off here: {r}");
    assert_direct_paths(&r, Mode::Concurrent);
}

#[test]
fn stw_small_heap_stalls() {
    let r = run_until(
        &small("stw_small_heap_stalls", Mode::Stw, 6, base_seed()),
        |r| r.stalls > 0,
    );
    assert_stalls_often_and_ooms_rarely(&r);
    // A stw cycle runs inside its pause: nothing to keep pace with.
    assert_eq!(r.pacing_delays, 0, "a stw heap paced its mutators: {r}");
    assert_direct_paths(&r, Mode::Stw);
}

#[test]
fn concurrent_nearly_full() {
    let r = run_until(
        &nearly_full("concurrent_nearly_full", Mode::Concurrent, 12, base_seed()),
        |r| r.pages_compacted_in_place > 0 && r.pacing_delays > 0 && r.phases_on_idle_workers > 0,
    );
    assert_reaches_in_place(&r);
    assert_paced(&r);
    assert_direct_paths(&r, Mode::Concurrent);
}

/// A fill-mode shed traverses the model once per root it drops (seconds of CPU on a loaded
/// machine): it reads no heap memory and runs as a blocked thread, so a pause does not wait
/// for it. The probe waits inside the traversal for a pause to complete (cycles run back to
/// back); run inside the scope instead, the pause would wait for the probing thread, and the
/// probe gives up after `SHED_PROBE_LIMIT`.
#[test]
fn a_pause_completes_during_a_sheds_model_traversal() {
    let mut c = nearly_full(
        "a_pause_completes_during_a_sheds_model_traversal",
        Mode::Concurrent,
        10,
        base_seed(),
    );
    c.shed_probe = true;
    let r = run_until(&c, |r| r.shed_probes > 0);
    assert!(
        r.shed_probes > 0,
        "no fill-mode shed ran, nothing was probed: {r}"
    );
    assert_eq!(
        r.shed_probes_paused, r.shed_probes,
        "a pause could not complete while a shed traversed its model: {r}"
    );
}

#[test]
fn stw_nearly_full() {
    let r = run_until(
        &nearly_full("stw_nearly_full", Mode::Stw, 14, base_seed()),
        |r| r.pages_compacted_in_place > 0,
    );
    assert_reaches_in_place(&r);
    assert_direct_paths(&r, Mode::Stw);
}

/// With `mark_colors` rotating, `c` marks with all three colors; returns the totals of its
/// runs (again with the next seed while `reached` does not hold).
fn run_rotating(mut c: Config, reached: impl Fn(&Report) -> bool) -> Report {
    c.mark_colors = ColorChoice::Rotate;
    run_until(&c, |r| r.cycles_marked2 > 0 && reached(r))
}

/// Cycles marked with Marked2 (the verifier, on at every pause, accepted Marked2 only where
/// the rule makes it legal), and the cycles' records follow the rule.
fn assert_marked2_used(r: &Report) {
    assert!(r.cycles_marked2 > 0, "no cycle marked with Marked2: {r}");
    assert_eq!(r.color_rule_breaks, 0, "cycle records break the rule: {r}");
}

/// [`assert_marked2_used`], and the cycles after a Marked2 one met slots still holding
/// Marked2 pointers into the pages it relocated: the markers remapped and healed them.
/// (Not the `stw` mode: its pause remaps every slot before it ends, nothing is stale.)
fn assert_marked2_healed(r: &Report) {
    assert_marked2_used(r);
    assert!(
        r.stale_marked2_remapped > 0,
        "no stale Marked2 slot was remapped and healed: {r}"
    );
}

/// `concurrent` with the mark colors rotating (`HeapConfig::mark_colors`): every third cycle
/// marks with Marked2, through its view, its masks and its stale pointers' forwarding.
#[test]
fn concurrent_rotating_mark_colors() {
    let c = direct_limited(
        "concurrent_rotating_mark_colors",
        Mode::Concurrent,
        12,
        base_seed(),
    );
    let r = run_rotating(c, |r| {
        r.stale_marked2_remapped > 0 && r.weak_marked2_remapped > 0
    });
    assert!(r.cycles >= 5, "{r}");
    assert_marked2_healed(&r);
    assert!(
        r.weak_marked2_remapped > 0,
        "no weak handle was remapped from Marked2: {r}"
    );
    assert!(r.roots_marked_concurrently > 0, "{r}");
    assert_direct_paths(&r, Mode::Concurrent);
}

#[test]
fn stw_rotating_mark_colors() {
    let c = direct_limited("stw_rotating_mark_colors", Mode::Stw, 8, base_seed());
    let r = run_rotating(c, |_| true);
    assert!(r.cycles >= 5, "{r}");
    assert_marked2_used(&r);
    assert_direct_paths(&r, Mode::Stw);
}

/// A nearly full heap with the colors rotating: pages compacted in place while stale
/// pointers may carry Marked2.
#[test]
fn concurrent_nearly_full_rotating_mark_colors() {
    let c = nearly_full(
        "concurrent_nearly_full_rotating_mark_colors",
        Mode::Concurrent,
        12,
        base_seed(),
    );
    let r = run_rotating(c, |r| {
        r.pages_compacted_in_place > 0 && r.stale_marked2_remapped > 0
    });
    assert_reaches_in_place(&r);
    assert_marked2_healed(&r);
}

/// The soak's configurations for runs of `secs` seconds. The nearly full ones come early, so
/// a short soak reaches them too.
fn soak_configs(secs: u64, seed: u64) -> Vec<Config> {
    vec![
        direct_limited("soak-concurrent", Mode::Concurrent, secs, seed),
        nearly_full("soak-concurrent-full", Mode::Concurrent, secs, seed),
        direct_limited("soak-stw", Mode::Stw, secs, seed),
        nearly_full("soak-stw-full", Mode::Stw, secs, seed),
        small("soak-concurrent-small", Mode::Concurrent, secs, seed),
        direct_limited(GENERATIONAL_CONFIG, Mode::Generational, secs, seed),
        small("soak-stw-small", Mode::Stw, secs, seed),
        cfg("soak-epsilon", Mode::Epsilon, 256, secs.min(30), seed),
        Config {
            mark_colors: ColorChoice::Rotate,
            ..nearly_full("soak-concurrent-full-rotate", Mode::Concurrent, secs, seed)
        },
        Config {
            mark_colors: ColorChoice::Rotate,
            ..direct_limited("soak-stw-rotate", Mode::Stw, secs, seed)
        },
        Config {
            stop_remembering: true,
            ..minors(direct_limited(
                MINOR_CONFIGS[0],
                Mode::Concurrent,
                secs,
                seed,
            ))
        },
        Config {
            tenuring_threshold: Some(0),
            mark_colors: ColorChoice::Rotate,
            ..minors(nearly_full(MINOR_CONFIGS[1], Mode::Concurrent, secs, seed))
        },
    ]
}

/// `c` with the generational bookkeeping on and a thread requesting twelve minor cycles,
/// then two majors, in turn (as [`concurrent_minors`]).
fn minors(c: Config) -> Config {
    Config {
        track_generations: true,
        continuous: false,
        minor_cycles: Some((12, 2)),
        ..c
    }
}

/// The soak configurations with minor cycles (the second nearly full, every survivor
/// promoted at its first minor, the colors rotating): each must age or promote pages in
/// place, remember promoted objects' slots, scan remembered slots and reuse a color between
/// majors three times; the first must also follow a relocating major with ten minors and
/// (its rounds' last majors stopping the remembering) run a minor asked for as a full cycle,
/// the second compact pages in place, young ones in minors among them (a minor finding no target
/// page; 24 in one run of 20 s) (checked over the whole soak, for those that ran).
const MINOR_CONFIGS: [&str; 2] = ["soak-concurrent-minors", "soak-concurrent-minors-full"];

/// The soak configuration of the `generational` mode: its director's minors must run,
/// scan remembered slots and promote pages in place (checked over the whole soak, if it ran).
const GENERATIONAL_CONFIG: &str = "soak-generational";

/// The soak configurations that must compact pages in place and forward objects to
/// themselves (checked over the whole soak, for those that ran).
const IN_PLACE_CONFIGS: [&str; 2] = ["soak-concurrent-full", "soak-stw-full"];

/// The soak configuration that must reach pacing (checked over the whole soak, if it ran):
/// a nearly full concurrent heap (the small ones run with pacing off, to reach stalls).
const PACED_CONFIG: &str = "soak-concurrent-full";

/// The soak configurations with a small direct-memory limit, which must run cycles at it
/// (checked over the whole soak, for those that ran).
const DIRECT_LIMIT_CONFIGS: [&str; 2] = ["soak-concurrent", "soak-stw"];

/// The soak configurations with the mark colors rotating (the `concurrent` one first: it must
/// remap stale Marked2 slots too).
const ROTATING_CONFIGS: [&str; 2] = ["soak-concurrent-full-rotate", "soak-stw-rotate"];

/// The soak configuration whose heap never collects: its buffers are freed by `release`
/// alone, and no cleaner may run.
const EPSILON_CONFIG: &str = "soak-epsilon";

fn write_soak_report(text: &str) {
    if let Ok(path) = std::env::var("ZRS_SOAK_REPORT") {
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("writing {path}: {e}"));
    }
}

fn totals(all: &Report, by_config: &[(String, Report)]) -> String {
    let mut out = format!("{all}\n");
    for (k, r) in by_config {
        out.push_str(&format!("\n[{k}]\n{r}\n"));
    }
    out
}

/// The same runs, rotating through the configurations for `ZRS_SOAK_SECS` seconds (default
/// 600), with a new seed per run; prints the totals. Stops at the first failure, printing the
/// failed run's configuration, seed and replay command and the totals so far (also written
/// to `ZRS_SOAK_REPORT`, marked FAILED). Fails at the end if a nearly full configuration ran
/// but never compacted a page in place or forwarded an object to itself, if a configuration
/// never released a direct buffer (or, in a mode that collects, never had one freed by its
/// cleaner), or if a limited one never ran a cycle at the direct-memory limit or never had an
/// allocation refused there.
#[test]
#[ignore = "soak: run explicitly with ZRS_SOAK_SECS"]
fn soak() {
    let total = Duration::from_secs(
        std::env::var("ZRS_SOAK_SECS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(600),
    );
    // Rounds of up to 5 minutes per configuration, so each heap lives through thousands of
    // cycles and the rotation still visits every mode several times.
    let round = (total / 12).clamp(Duration::from_secs(15), Duration::from_secs(300));
    let base = base_seed();
    // Replaying one soak run: `ZRS_SOAK_CONFIG=<name>` runs just that configuration once,
    // with the seed from ZRS_TORTURE_SEED.
    let only = std::env::var("ZRS_SOAK_CONFIG").ok();
    // `ZRS_SOAK_MODE=concurrent,stw` keeps the rotation to those modes (to soak the modes in
    // parallel processes).
    let modes: Option<Vec<Mode>> = std::env::var("ZRS_SOAK_MODE").ok().map(|v| {
        v.split(',')
            .map(|m| m.parse().unwrap_or_else(|e| panic!("ZRS_SOAK_MODE: {e}")))
            .collect()
    });
    let report_path = std::env::var("ZRS_SOAK_REPORT").ok();
    eprintln!("soak: {total:?} in rounds of {round:?}, base seed {base:#x}");
    let start = Instant::now();
    let mut all = Report::default();
    let mut by_config: Vec<(String, Report)> = Vec::new();
    let mut n = 0u64;
    while start.elapsed() < total {
        let left = total
            .saturating_sub(start.elapsed())
            .max(Duration::from_secs(5));
        let secs = round.min(left).as_secs().max(5);
        let seed = base.wrapping_add(n.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let mut configs = soak_configs(secs, seed);
        if let Some(modes) = &modes {
            configs.retain(|c| modes.contains(&c.mode));
        }
        let k = configs.len() as u64;
        assert!(k > 0, "ZRS_SOAK_MODE leaves no configuration");
        let mut c = match &only {
            Some(name) => {
                let mut c = configs
                    .into_iter()
                    .find(|c| c.name == *name)
                    .unwrap_or_else(|| panic!("ZRS_SOAK_CONFIG={name:?}: no such configuration"));
                c.seed = base;
                c.duration = total;
                c
            }
            None => configs.into_iter().nth((n % k) as usize).unwrap(),
        };
        c.replay = Some(format!(
            "ZRS_TORTURE_SEED={:#x} ZRS_SOAK_CONFIG={} ZRS_SOAK_SECS={} cargo test -p \
             integration-tests --release --test torture -- --ignored --exact soak --nocapture",
            c.seed,
            c.name,
            c.duration.as_secs()
        ));
        let context = format!(
            "soak run #{n} [{}] after {:.0}s of {total:?}, base seed {base:#x}\nconfig: {c:?}\n\
             seed: {:#x}\nreplay: {}\n",
            c.name,
            start.elapsed().as_secs_f64(),
            c.seed,
            c.replay_command()
        );
        // Printed (and written) if the run aborts the process.
        set_abort_note(
            format!(
                "\nsoak FAILED: {context}totals of the {n} runs before it:\n{}",
                totals(&all, &by_config)
            ),
            report_path.clone(),
        );
        n += 1;
        let r = match try_run(&c) {
            Ok(r) => r,
            Err(f) => {
                let out = format!(
                    "soak FAILED: {context}\n{}\n\nthe failed run until the failure:\n{}\n\n\
                     totals of the {} runs before it:\n{}",
                    f.message,
                    f.report,
                    n - 1,
                    totals(&all, &by_config)
                );
                eprintln!("{out}");
                write_soak_report(&out);
                panic!("soak failed in run #{} [{}]: see above", n - 1, c.name);
            }
        };
        all.add(&r);
        match by_config.iter_mut().find(|(k, _)| *k == c.name) {
            Some((_, t)) => t.add(&r),
            None => by_config.push((c.name.clone(), r)),
        }
        eprintln!(
            "soak: {:.0}s of {total:?}; totals so far:\n{all}",
            start.elapsed().as_secs_f64()
        );
        if only.is_some() {
            break;
        }
    }
    let mut unmet = Vec::new();
    let mut notes = String::new();
    for name in IN_PLACE_CONFIGS {
        match by_config.iter().find(|(k, _)| k == name) {
            None => notes.push_str(&format!(
                "\n{name} did not run: in-place relocation not covered by this soak\n"
            )),
            Some((_, r)) => {
                if r.pages_compacted_in_place == 0 {
                    unmet.push(format!(
                        "{name}: no page compacted in place in {} runs",
                        r.runs
                    ));
                }
                if r.objects_self_forwarded == 0 {
                    unmet.push(format!(
                        "{name}: no object forwarded to itself in {} runs",
                        r.runs
                    ));
                }
            }
        }
    }
    // Direct buffers: every configuration that ran released buffers and compared their
    // contents; those that collect also freed dead owners' buffers by their cleaners.
    for (name, r) in &by_config {
        if r.buffers_released == 0 || r.buffer_contents_checks == 0 {
            unmet.push(format!(
                "{name}: no direct buffer released or compared in {} runs",
                r.runs
            ));
        }
        if name != EPSILON_CONFIG && r.buffers_cleaned == 0 {
            unmet.push(format!(
                "{name}: no direct buffer freed by its cleaner in {} runs",
                r.runs
            ));
        }
        // The pacer's floor held wherever pacing ran.
        if r.worst_pacing_window_ns > r.pacing_floor_budget_ns + r.worst_pacing_window_delays {
            unmet.push(format!(
                "{name}: a thread was held {} ns of pacing delays in one window, over the \
                 floor's {} ns",
                r.worst_pacing_window_ns, r.pacing_floor_budget_ns
            ));
        }
    }
    // Concurrent marking remapped pointers the previous relocation left stale, through the
    // mark ring's stale stage (the `stw` pause remaps every pointer before it marks).
    if let Some((name, r)) = by_config.iter().find(|(k, _)| k == "soak-concurrent") {
        if r.stale_slots_remapped == 0 {
            unmet.push(format!(
                "{name}: no stale slot remapped by the markers in {} runs",
                r.runs
            ));
        }
        // It paces with the default floor (the nearly full heap with a higher one).
        if r.pacing_delays == 0 {
            unmet.push(format!("{name}: no pacing delay in {} runs", r.runs));
        }
    }
    // The rotating configurations marked with Marked2, and the concurrent one remapped stale
    // Marked2 slots; no configuration's cycle records break the mark-color rule.
    for (name, r) in &by_config {
        if r.color_rule_breaks > 0 {
            unmet.push(format!("{name}: cycle records break the mark-color rule"));
        }
        if ROTATING_CONFIGS.contains(&name.as_str()) && r.cycles_marked2 == 0 {
            unmet.push(format!(
                "{name}: no cycle marked with Marked2 in {} runs",
                r.runs
            ));
        }
        if name == ROTATING_CONFIGS[0] && r.stale_marked2_remapped == 0 {
            unmet.push(format!(
                "{name}: no stale Marked2 slot remapped in {} runs",
                r.runs
            ));
        }
    }
    for (i, name) in MINOR_CONFIGS.iter().enumerate() {
        let Some((_, r)) = by_config.iter().find(|(k, _)| k == name) else {
            notes.push_str(&format!(
                "\n{name} did not run: minor cycles not covered by this soak\n"
            ));
            continue;
        };
        let mut missed = Vec::new();
        if r.minor_color_reuses < 3 {
            missed.push("three colors reused between majors");
        }
        if r.remembered_scanned == 0 {
            missed.push("a remembered slot scanned");
        }
        if r.pages_promoted_by_minors == 0 || r.promoted_slots_remembered == 0 {
            missed.push("a page promoted in place with its slots remembered");
        }
        if i == 0 && r.pages_aged_by_minors == 0 {
            missed.push("a page aged");
        }
        if i == 0 && r.relocating_majors_then_10_minors == 0 {
            missed.push("a relocating major followed by ten minors");
        }
        if i == 0 && (r.majors_unremembered == 0 || r.minor_requests_run_as_majors == 0) {
            missed.push("a major that stopped the remembering and a minor run as a major");
        }
        if i == 1 && r.pages_compacted_in_place == 0 {
            missed.push("a page compacted in place");
        }
        if i == 1 && r.pages_compacted_by_minors == 0 {
            missed.push("a young page compacted in place by a minor");
        }
        if !missed.is_empty() {
            unmet.push(format!(
                "{name}: not reached in {} runs: {}",
                r.runs,
                missed.join(", ")
            ));
        }
    }
    match by_config.iter().find(|(k, _)| k == GENERATIONAL_CONFIG) {
        None => notes.push_str(&format!(
            "\n{GENERATIONAL_CONFIG} did not run: the generational mode not covered by this soak\n"
        )),
        Some((name, r))
            if r.minors == 0 || r.remembered_scanned == 0 || r.pages_promoted_by_minors == 0 =>
        {
            unmet.push(format!(
                "{name}: no minor that scanned remembered slots and promoted a page in {} runs",
                r.runs
            ))
        }
        Some(_) => {}
    }
    for name in DIRECT_LIMIT_CONFIGS {
        match by_config.iter().find(|(k, _)| k == name) {
            None => notes.push_str(&format!(
                "\n{name} did not run: the direct-memory limit not covered by this soak\n"
            )),
            Some((_, r)) => {
                if r.direct_limit_cycles == 0 {
                    unmet.push(format!(
                        "{name}: no cycle at the direct-memory limit in {} runs",
                        r.runs
                    ));
                }
                if r.direct_limit_failures == 0 {
                    unmet.push(format!(
                        "{name}: no allocation refused at the direct-memory limit in {} runs",
                        r.runs
                    ));
                }
            }
        }
    }
    match by_config.iter().find(|(k, _)| k == PACED_CONFIG) {
        None => notes.push_str(&format!(
            "\n{PACED_CONFIG} did not run: pacing not covered by this soak\n"
        )),
        Some((_, r)) if r.pacing_delays == 0 => unmet.push(format!(
            "{PACED_CONFIG}: no pacing delay in {} runs",
            r.runs
        )),
        Some((_, r)) if r.phases_on_idle_workers == 0 => unmet.push(format!(
            "{PACED_CONFIG}: no concurrent phase on an idle-class worker in {} runs",
            r.runs
        )),
        Some(_) => {}
    }
    let mut out = format!(
        "soak summary: {:.0}s wall, base seed {base:#x}\n{}{notes}",
        start.elapsed().as_secs_f64(),
        totals(&all, &by_config)
    );
    if !unmet.is_empty() {
        out = format!("soak FAILED: {}\n{out}", unmet.join("; "));
    }
    eprintln!("{out}");
    write_soak_report(&out);
    clear_abort_note();
    assert!(unmet.is_empty(), "{}", unmet.join("; "));
}

/// The generational bookkeeping reached all its paths in `mode`: stores remembered by the
/// barrier, young slots remembered by relocation, and young-pointing slots of old objects
/// verified. Not relocation in `stw`: it copies inside the pause, where no page is young, so
/// no copy needs a bit (one counted there was a stale pointer read as young, before a full
/// cycle read only the copies whose original has a remembered slot).
fn remembered_set_reached(r: &Report, mode: Mode) -> bool {
    r.remembered_by_barrier > 0
        && (mode == Mode::Stw || r.remembered_by_relocation > 0)
        && r.young_slots_verified > 0
}

/// The random programs with `HeapConfig::track_generations` on: every pause's verifier
/// checks the remembered set too, against everything the programs do (weak handles, direct
/// buffers, fresh objects, value slots).
#[test]
fn concurrent_generations() {
    let mut c = direct_limited("concurrent_generations", Mode::Concurrent, 8, base_seed());
    c.track_generations = true;
    let r = run_until(&c, |r| remembered_set_reached(r, Mode::Concurrent));
    assert!(r.cycles >= 5, "{r}");
    assert!(
        remembered_set_reached(&r, Mode::Concurrent),
        "a remembered-set path missed: {r}"
    );
}

/// Minor cycles among the majors: a thread requests twelve minors, then two majors, in turn,
/// while the random programs run (weak handles, direct buffers, value slots, fresh objects),
/// the verifier on in every pause. The test fails unless minors reused a color between
/// majors at least three times, two majors ran back to back, a major that relocated pages was
/// followed by ten minors or more, minors scanned remembered slots, and minors aged pages,
/// promoted pages in place and remembered promoted objects' slots (the default, adaptive
/// tenuring threshold), and minors evacuated objects from sparse young pages, both to
/// survivor target pages (aged by copy) and to old ones (promoted by copy). Each round's last
/// major stops the store barrier's remembering (`Config::stop_remembering`), so the next
/// round's first minor runs as a full cycle that remembers again; the test fails unless that
/// happened.
#[test]
fn concurrent_minors() {
    let mut c = direct_limited("concurrent_minors", Mode::Concurrent, 8, base_seed());
    c.track_generations = true;
    c.continuous = false;
    c.minor_cycles = Some((12, 2));
    c.stop_remembering = true;
    let reached = |r: &Report| {
        r.minor_color_reuses >= 3
            && r.majors_unremembered > 0
            && r.minor_requests_run_as_majors > 0
            && r.back_to_back_majors >= 1
            && r.relocating_majors_then_10_minors >= 1
            && r.remembered_scanned > 0
            && r.pages_aged_by_minors > 0
            && r.pages_promoted_by_minors > 0
            && r.promoted_slots_remembered > 0
            && r.objects_aged_by_copy > 0
            && r.objects_evacuated_by_minors > r.objects_aged_by_copy
    };
    let r = run_until(&c, reached);
    assert!(reached(&r), "a minor-cycle path missed: {r}");
    assert_eq!(r.color_rule_breaks, 0, "cycle records break the rule: {r}");
}

/// As [`concurrent_minors`], with every survivor promoted in place at its first minor
/// (tenuring threshold 0) and the mark colors rotating through all three: the most pointers
/// in a minor's color to promoted objects, which the next cycle must heal. Fails unless
/// minors promoted pages and remembered promoted slots, evacuated objects from sparse young
/// pages and reused a color between majors.
#[test]
fn concurrent_minors_promoting_every_survivor() {
    let mut c = direct_limited(
        "concurrent_minors_promoting_every_survivor",
        Mode::Concurrent,
        8,
        base_seed(),
    );
    c.track_generations = true;
    c.continuous = false;
    c.minor_cycles = Some((12, 2));
    c.tenuring_threshold = Some(0);
    c.mark_colors = ColorChoice::Rotate;
    let reached = |r: &Report| {
        r.minor_color_reuses >= 3
            && r.pages_promoted_by_minors > 0
            && r.promoted_slots_remembered > 0
            && r.cycles_marked2 > 0
            && r.objects_evacuated_by_minors > 0
    };
    let r = run_until(&c, reached);
    assert!(reached(&r), "a minor-cycle path missed: {r}");
    assert_eq!(r.pages_aged_by_minors, 0, "threshold 0 ages nothing: {r}");
    assert_eq!(r.objects_aged_by_copy, 0, "threshold 0 ages nothing: {r}");
    assert_eq!(r.color_rule_breaks, 0, "cycle records break the rule: {r}");
}

/// Minors on a nearly full heap without a relocation reserve, with the default, adaptive
/// tenuring threshold: a minor that finds no target page compacts the young page it holds in
/// place, and one whose survivors were bound for a survivor page takes that survivor age, the
/// page then serving as the target of that age. The verifier on in every pause. Fails unless
/// minors compacted pages in place and aged objects by copy (the soak's nearly full minors
/// run at threshold 0, where every compacted page's copies were bound for old pages).
#[test]
fn concurrent_minors_nearly_full_aging() {
    let c = minors(nearly_full(
        "concurrent_minors_nearly_full_aging",
        Mode::Concurrent,
        8,
        base_seed(),
    ));
    let reached =
        |r: &Report| r.minors >= 5 && r.pages_compacted_by_minors > 0 && r.objects_aged_by_copy > 0;
    let r = run_until(&c, reached);
    assert!(reached(&r), "a minor-cycle path missed: {r}");
    assert_eq!(r.color_rule_breaks, 0, "cycle records break the rule: {r}");
}

/// The `generational` mode with cycles back to back: its director runs three minors to a
/// major (`GcCause::MinorContinuous`) while the random programs run, the verifier on in
/// every pause (remembered-set completeness and the colors by age included); weak handles'
/// deadlines count majors (`HeapUsage::majors`). Fails unless minors ran and scanned
/// remembered slots, promoted pages in place with their slots remembered, evacuated objects
/// from sparse young pages (some aged by copy to survivor pages), the store barrier
/// and relocation remembered slots, and the cycle records keep the mark-color rule.
#[test]
fn generational() {
    let c = direct_limited("generational", Mode::Generational, 8, base_seed());
    let reached = |r: &Report| {
        r.minors >= 5
            && r.remembered_scanned > 0
            && remembered_set_reached(r, Mode::Generational)
            && r.cycles >= 8
            && r.pages_promoted_by_minors > 0
            && r.promoted_slots_remembered > 0
            && r.objects_evacuated_by_minors > 0
            && r.objects_aged_by_copy > 0
    };
    let r = run_until(&c, reached);
    assert!(reached(&r), "a generational path missed: {r}");
    assert!(r.minor_color_reuses > 0, "{r}");
    assert_eq!(r.color_rule_breaks, 0, "cycle records break the rule: {r}");
    assert_direct_paths(&r, Mode::Generational);
}

/// The `generational` mode in a heap small enough to stall all the time, pacing off: a
/// stall's cycle is a major whatever minors the director runs, and no thread waits forever.
#[test]
fn generational_small_heap_stalls() {
    let r = run_until(
        &small(
            "generational_small_heap_stalls",
            Mode::Generational,
            8,
            base_seed(),
        ),
        |r| r.stalls > 0 && r.minors > 0,
    );
    assert_stalls_often_and_ooms_rarely(&r);
    assert!(r.minors > 0, "no minor ran: {r}");
    assert_direct_paths(&r, Mode::Generational);
}

/// As [`concurrent_generations`], in a nearly full `stw` heap, where relocation compacts
/// pages in place inside the pause.
#[test]
fn stw_generations_nearly_full() {
    let mut c = nearly_full("stw_generations_nearly_full", Mode::Stw, 10, base_seed());
    c.track_generations = true;
    let r = run_until(&c, |r| {
        remembered_set_reached(r, Mode::Stw) && r.pages_compacted_in_place > 0
    });
    assert!(r.cycles >= 3, "{r}");
    assert!(
        remembered_set_reached(&r, Mode::Stw),
        "a remembered-set path missed: {r}"
    );
    assert_reaches_in_place(&r);
}
