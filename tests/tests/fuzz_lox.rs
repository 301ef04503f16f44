//! Fuzz targets of the Lox interpreter's untrusted input, its source text: scanner, compiler,
//! disassembler and VM, through the lox crate's public API (`lox::compile`,
//! `lox::disassemble_function`, `Lox::with_output`, `Lox::run_script`: what the `lox` binary
//! does with a script), on a small heap (8m) in every collector mode, sometimes with the heap
//! verifier on or cycles back to back.
//!
//! - `grammar_programs`: random grammatical, typed programs (`fuzz::lox_grammar`): classes,
//!   closures, loops, deep nesting, long strings, injected type, arity, name and compile
//!   errors. Each must compile or fail with clox-formatted compile errors, and then run to an
//!   end: success with nothing on the error output, or a runtime error reported as a message
//!   and a stack trace ("Out of memory." and "Stack overflow." counted apart). These programs
//!   always terminate, so a case that runs past its timeout fails the target too.
//! - `mutated_corpus`: byte/token mutations of every Lox program in the workspace
//!   (`fuzz::mutate`), lossily decoded as the binary decodes a script, with the same checks; a
//!   mutation may make a program loop forever, so a case that runs past its timeout while
//!   using CPU only counts as a "timeout", and one that stops using CPU (stuck) fails.
//!
//! Cases run in batches in a child process (`fuzz::child`), so a crash, an abort or a hang is
//! caught and named by its seed; `ZRS_FUZZ_SEED` replays one, and a failing program is also
//! written to `target/fuzz-failures/` to run with the `lox` binary. Each target requires that
//! its cases reached success, compile errors and runtime errors.

use gc_runtime::{HeapConfig, Mode};
use integration_tests::fuzz::child::{self, Batch};
use integration_tests::fuzz::{corpus, lox_grammar, mutate, Budget, Rng, Tally};
use lox::{InterpretError, Lox};
use std::cell::RefCell;
use std::io::Write;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::OnceLock;
use std::time::Duration;

const FILE: &str = "fuzz_lox";
/// The heap every case runs on: small, so that collections and out-of-memory errors happen.
const HEAP: u64 = 8 << 20;
/// Output kept per case (the rest is counted and dropped).
const OUTPUT_KEPT: usize = 64 << 10;

/// A `Write` that keeps the first [`OUTPUT_KEPT`] bytes.
#[derive(Clone, Default)]
struct Capture(Rc<RefCell<(Vec<u8>, usize)>>);

impl Write for Capture {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let mut b = self.0.borrow_mut();
        let room = OUTPUT_KEPT.saturating_sub(b.0.len());
        b.0.extend_from_slice(&bytes[..bytes.len().min(room)]);
        b.1 += bytes.len();
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Capture {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.borrow().0).into_owned()
    }
    fn written(&self) -> usize {
        self.0.borrow().1
    }
}

/// The heap configuration of one case, drawn from its generator.
fn config(rng: &mut Rng) -> (HeapConfig, String) {
    let mode = *rng.pick(&Mode::ALL);
    let verify = rng.chance(100);
    let stress = mode != Mode::Epsilon && rng.chance(150);
    let config = HeapConfig::new(HEAP)
        .mode(mode)
        .gc_threads(1)
        .verify(verify)
        .continuous(stress);
    let name = format!(
        "{mode}{}{}",
        if verify { "+verify" } else { "" },
        if stress { "+stress" } else { "" }
    );
    (config, name)
}

/// Compile, disassemble and run `source`; the outcome class, or a panic saying what was
/// wrong with the outcome.
fn run_source(source: &str, config: HeapConfig) -> &'static str {
    let script = match lox::compile(source) {
        Ok(script) => script,
        Err(errors) => {
            assert!(
                !errors.errors().is_empty(),
                "a failed compilation has no error"
            );
            for error in errors.errors() {
                let text = error.to_string();
                assert!(
                    text.starts_with(&format!("[line {}] Error", error.line))
                        && !error.message.is_empty(),
                    "a compile error not in clox's format: {text:?}"
                );
            }
            return "compile error";
        }
    };
    let listing = lox::disassemble_function(&script);
    assert!(
        listing.contains("== "),
        "a listing without a header:\n{listing}"
    );
    let (out, err) = (Capture::default(), Capture::default());
    let mut lox = Lox::with_output(config, Box::new(out.clone()), Box::new(err.clone()))
        .unwrap_or_else(|e| panic!("an 8m heap must start: {e}"));
    let result = lox.run_script(&script);
    lox.flush();
    let errors = err.text();
    match result {
        Ok(()) => {
            assert!(
                err.written() == 0,
                "the program succeeded but wrote errors: {errors}"
            );
            "ok"
        }
        Err(InterpretError::Runtime) => {
            let mut lines = errors.lines();
            let message = lines.next().unwrap_or("");
            let trace = lines.next().unwrap_or("");
            assert!(
                !message.is_empty() && trace.starts_with("[line ") && trace.contains("] in "),
                "a runtime error without a message and a stack trace: {errors:?}"
            );
            match message {
                "Out of memory." => "out of memory",
                "Stack overflow." => "stack overflow",
                _ => "runtime error",
            }
        }
        Err(InterpretError::Compile(e)) => {
            panic!("run_script of a compiled script reported compile errors: {e}")
        }
    }
}

/// Case `seed` of `grammar_programs`: the program and its heap configuration.
fn grammar_case(seed: u64) -> (String, HeapConfig, String) {
    let mut rng = Rng::new(seed);
    let source = lox_grammar::program(&mut rng);
    let (config, name) = config(&mut rng);
    (source, config, name)
}

/// The corpus, read once per process.
fn the_corpus() -> &'static [corpus::Script] {
    static CORPUS: OnceLock<Vec<corpus::Script>> = OnceLock::new();
    CORPUS.get_or_init(corpus::load)
}

/// Case `seed` of `mutated_corpus`.
fn mutated_case(seed: u64) -> (String, HeapConfig, String) {
    let mut rng = Rng::new(seed);
    let (bytes, from) = mutate::mutate(&mut rng, the_corpus());
    let (config, name) = config(&mut rng);
    (
        String::from_utf8_lossy(&bytes).into_owned(),
        config,
        format!("{name}, mutated from {from}"),
    )
}

/// Writes a failing case's program to `target/fuzz-failures/` and returns its path.
fn save(test: &str, seed: u64, source: &str) -> PathBuf {
    let dir = corpus::workspace_root().join("target/fuzz-failures");
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join(format!("{test}-{seed:016x}.lox"));
    let _ = std::fs::write(&path, source);
    path
}

/// Runs the target's cases in children of `child_test` until the budget is spent. `busy_fails`:
/// a case past its timeout fails the target (its programs always terminate).
fn drive(
    test: &str,
    child_test: &str,
    default_cases: u64,
    timeout: Duration,
    busy_fails: bool,
    case: fn(u64) -> (String, HeapConfig, String),
) -> Tally {
    let mut budget = Budget::from_env(default_cases);
    let mut tally = Tally::new();
    let fail = |seed: u64, what: &str| -> ! {
        let (source, _, config) = case(seed);
        let path = save(test, seed, &source);
        panic!(
            "{test}: case {seed:#x} ({config}) failed: {what}\nthe program is in {}\nreplay: {}",
            path.display(),
            Budget::replay_command(FILE, test, seed)
        );
    };
    loop {
        let seeds = budget.next_seeds(50);
        if seeds.is_empty() {
            break;
        }
        let mut pending: &[u64] = &seeds;
        while !pending.is_empty() {
            match child::run_batch(child_test, pending, timeout) {
                Batch::Done(done) => {
                    done.iter().for_each(|(_, class)| tally.add(class));
                    break;
                }
                Batch::Busy { done, seed } => {
                    done.iter().for_each(|(_, class)| tally.add(class));
                    if busy_fails {
                        fail(seed, &format!("it ran for more than {timeout:?}"));
                    }
                    tally.add("timeout");
                    let at = pending
                        .iter()
                        .position(|&s| s == seed)
                        .expect("a batch seed");
                    pending = &pending[at + 1..];
                }
                Batch::Failed { seed, what } => fail(seed, &what),
            }
        }
    }
    eprintln!("{}", tally.summary(test, budget.elapsed()));
    tally
}

/// In a child: run the seeds the parent gave (or, run by hand, a few of its own), reporting
/// each case. A panic fails the child, and the parent names the case.
fn child_cases(case: fn(u64) -> (String, HeapConfig, String)) {
    let seeds = child::child_seeds().unwrap_or_else(|| (1..=5).collect());
    for seed in seeds {
        child::report_start(seed);
        let (source, config, name) = case(seed);
        let class = std::panic::catch_unwind(|| run_source(&source, config))
            .unwrap_or_else(|_| panic!("case {seed:#x} ({name}) panicked"));
        child::report_end(seed, class);
    }
}

#[test]
fn grammar_programs() {
    let t = drive(
        "grammar_programs",
        "grammar_child",
        1500,
        Duration::from_secs(30),
        true,
        grammar_case,
    );
    t.require(
        "grammar_programs",
        &["ok", "compile error", "runtime error"],
        100,
    );
}

#[test]
fn mutated_corpus() {
    let t = drive(
        "mutated_corpus",
        "mutated_child",
        2500,
        Duration::from_secs(5),
        false,
        mutated_case,
    );
    t.require(
        "mutated_corpus",
        &["ok", "compile error", "runtime error"],
        100,
    );
}

#[test]
#[ignore = "the child process of grammar_programs"]
fn grammar_child() {
    child_cases(grammar_case);
}

#[test]
#[ignore = "the child process of mutated_corpus"]
fn mutated_child() {
    child_cases(mutated_case);
}
