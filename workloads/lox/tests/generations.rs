//! The Lox interpreter on a heap with the generational bookkeeping on
//! (`HeapConfig::track_generations`): every benchmark script, at its test size, on a small
//! heap with cycles back to back and the verifier on in every pause, in the `concurrent` and
//! `stw` modes and in the `generational` mode (whose back-to-back cycles are three minors to a
//! major), must print its expected output (`bench/expected/NAME.out`), and the verifier
//! then checked the remembered set against everything the interpreter stores — through
//! `ObjRef::store`, value slots (`store_value_bits`), and `Fresh::init`, which has no barrier
//! because a fresh object is on an eden page. The test fails unless the barrier remembered
//! slots and the verifier found young-pointing slots of old objects (and, `generational`,
//! unless minors ran and scanned remembered slots).

use gc_runtime::{HeapConfig, Mode};
use lox::Lox;
use std::cell::RefCell;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::rc::Rc;

const SIZE_LINE: &str = "var N = ";
const TEST_SIZE_LINE: &str = "// lox-bench test: N = ";

/// Output collected in memory.
#[derive(Clone, Default)]
struct Capture(Rc<RefCell<Vec<u8>>>);

impl Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn bench_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("bench")
}

/// The source of `script` with its `var N = ...;` line set to its test size.
fn small_copy(script: &Path) -> String {
    let source = std::fs::read_to_string(script).unwrap();
    let small = source
        .lines()
        .find_map(|l| l.strip_prefix(TEST_SIZE_LINE))
        .unwrap_or_else(|| panic!("{}: no test size line", script.display()))
        .trim()
        .to_string();
    source
        .lines()
        .map(|l| {
            if l.starts_with(SIZE_LINE) {
                format!("{SIZE_LINE}{small};\n")
            } else {
                format!("{l}\n")
            }
        })
        .collect()
}

/// The most passes over the scripts [`every_script_on`] makes to reach its paths.
const MAX_PASSES: usize = 20;

/// Every script on a 16 MiB heap of `mode` that tracks generations, cycles back to back and
/// the verifier on; `promote_at_first_minor` fixes the tenuring threshold at 0 (the default
/// is adaptive). The remembered set's paths (barrier, scan, verifier) are required only
/// where `reach_remembered_set`: under the adaptive threshold survivors stay young longer,
/// old objects seldom receive a young pointer, and only one or two of these short scripts
/// ran long enough to meet one (one CI run of the suite met none). The scripts run again,
/// pass after pass (up to [`MAX_PASSES`] or a minute), until the required paths were reached:
/// a loaded machine gives a short script few back-to-back cycles (a `stw` one waits as long
/// as its last cycle took before the next), and a single pass sometimes reached none.
fn every_script_on(mode: Mode, promote_at_first_minor: bool, reach_remembered_set: bool) {
    let mut scripts: Vec<PathBuf> = std::fs::read_dir(bench_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "lox"))
        .collect();
    scripts.sort();
    assert!(!scripts.is_empty());
    let (mut cycles, mut remembered, mut moved, mut verified) = (0, 0, 0, 0);
    let (mut minors, mut scanned) = (0, 0);
    // Each script's figures (printed with --nocapture, and in a failed reach check).
    let mut per_script = Vec::new();
    let start = std::time::Instant::now();
    let mut passes = 0;
    let reached = |cycles: usize, minors: usize, scanned: u64, remembered: u64, verified: u64| {
        cycles > 0
            && (mode != Mode::Generational || minors > 0)
            && (!reach_remembered_set
                || (remembered > 0 && verified > 0 && (mode != Mode::Generational || scanned > 0)))
    };
    while passes == 0
        || (passes < MAX_PASSES
            && start.elapsed() < std::time::Duration::from_secs(60)
            && !reached(cycles, minors, scanned, remembered, verified))
    {
        passes += 1;
        for script in &scripts {
            let name = script.file_stem().unwrap().to_string_lossy().into_owned();
            let expected =
                std::fs::read_to_string(bench_dir().join("expected").join(format!("{name}.out")))
                    .unwrap();
            let mut config = HeapConfig::new(16 << 20)
                .mode(mode)
                .verify(true)
                .continuous(true)
                .gc_threads(1)
                .track_generations(true);
            if promote_at_first_minor {
                config = config.tenuring_threshold(0);
            }
            let (out, err) = (Capture::default(), Capture::default());
            let mut lox = Lox::with_output(config, Box::new(out.clone()), Box::new(err.clone()))
                .unwrap_or_else(|e| panic!("{name}: the heap must start: {e}"));
            let result = lox.interpret(&small_copy(script));
            lox.flush();
            let printed = String::from_utf8(out.0.borrow().clone()).unwrap();
            let errors = String::from_utf8(err.0.borrow().clone()).unwrap();
            assert!(result.is_ok(), "{mode} {name}: failed: {errors}");
            assert_eq!(printed, expected, "{mode} {name}: wrong output");
            let r = lox.heap().remembered_set_stats().expect("tracking is on");
            let stats = lox.heap().stats();
            per_script.push(format!(
                "{name}: {} cycles ({} minors), {} scanned, {} by the barrier, {} by relocation, \
             {} verified",
                stats.cycles.len(),
                stats.cycles.iter().filter(|c| c.minor).count(),
                r.scanned,
                r.barrier_remembered,
                r.relocation_remembered,
                r.verified_young_slots
            ));
            cycles += stats.cycles.len();
            minors += stats.cycles.iter().filter(|c| c.minor).count();
            scanned += r.scanned;
            remembered += r.barrier_remembered;
            moved += r.relocation_remembered;
            verified += r.verified_young_slots;
        }
    }
    eprintln!(
        "{mode}: {} scripts, {passes} passes, {cycles} cycles ({minors} minors, {scanned} remembered slots \
         scanned), {remembered} slots remembered by the barrier, {moved} by relocation, \
         {verified} young slots of old objects verified",
        scripts.len()
    );
    for line in &per_script {
        eprintln!("  {mode} {line}");
    }
    assert!(cycles > 0, "{mode}: no cycle ran");
    if mode == Mode::Generational {
        assert!(
            minors > 0,
            "{mode}: no minor ran\n{}",
            per_script.join("\n")
        );
    }
    if reach_remembered_set {
        assert!(
            remembered > 0 && verified > 0 && (mode != Mode::Generational || scanned > 0),
            "{mode}: the remembered set's paths were not reached: {remembered} remembered, \
             {verified} verified, {scanned} scanned\n{}",
            per_script.join("\n")
        );
    }
}

#[test]
fn every_bench_script_on_a_concurrent_heap_that_tracks_generations() {
    every_script_on(Mode::Concurrent, false, true);
}

#[test]
fn every_bench_script_on_a_stw_heap_that_tracks_generations() {
    every_script_on(Mode::Stw, false, true);
}

/// The default, adaptive tenuring threshold: outputs and the verifier, minors run.
#[test]
fn every_bench_script_on_a_generational_heap() {
    every_script_on(Mode::Generational, false, false);
}

/// Survivors promoted at their first minor, so old objects receive young pointers and the
/// remembered set's paths are reached (required).
#[test]
fn every_bench_script_on_a_generational_heap_promoting_at_the_first_minor() {
    every_script_on(Mode::Generational, true, true);
}
