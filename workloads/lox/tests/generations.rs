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

fn every_script_on(mode: Mode) {
    let mut scripts: Vec<PathBuf> = std::fs::read_dir(bench_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "lox"))
        .collect();
    scripts.sort();
    assert!(!scripts.is_empty());
    let (mut cycles, mut remembered, mut moved, mut verified) = (0, 0, 0, 0);
    let (mut minors, mut scanned) = (0, 0);
    for script in &scripts {
        let name = script.file_stem().unwrap().to_string_lossy().into_owned();
        let expected =
            std::fs::read_to_string(bench_dir().join("expected").join(format!("{name}.out")))
                .unwrap();
        let config = HeapConfig::new(16 << 20)
            .mode(mode)
            .verify(true)
            .continuous(true)
            .gc_threads(1)
            .track_generations(true);
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
        cycles += stats.cycles.len();
        minors += stats.cycles.iter().filter(|c| c.minor).count();
        scanned += r.scanned;
        remembered += r.barrier_remembered;
        moved += r.relocation_remembered;
        verified += r.verified_young_slots;
    }
    eprintln!(
        "{mode}: {} scripts, {cycles} cycles ({minors} minors, {scanned} remembered slots \
         scanned), {remembered} slots remembered by the barrier, {moved} by relocation, \
         {verified} young slots of old objects verified",
        scripts.len()
    );
    assert!(cycles > 0, "{mode}: no cycle ran");
    if mode == Mode::Generational {
        assert!(
            minors > 0 && scanned > 0,
            "{mode}: no minor ran, or none scanned a remembered slot: {minors} minors"
        );
    }
    assert!(
        remembered > 0 && verified > 0,
        "{mode}: the remembered set's paths were not reached: {remembered} remembered, \
         {verified} verified"
    );
}

#[test]
fn every_bench_script_on_a_concurrent_heap_that_tracks_generations() {
    every_script_on(Mode::Concurrent);
}

#[test]
fn every_bench_script_on_a_stw_heap_that_tracks_generations() {
    every_script_on(Mode::Stw);
}

#[test]
fn every_bench_script_on_a_generational_heap() {
    every_script_on(Mode::Generational);
}
