//! The benchmark scripts (`bench/*.lox`) print what they should, and `lox-bench` refuses to
//! time an interpreter that prints something else.
//!
//! Every script takes its size from one line `var N = ...;` and names a small size with a line
//! `// lox-bench test: N = ...`. [`every_bench_script_prints_its_expected_output`] runs a copy
//! of each script with that small size under this crate's `lox` and compares its stdout with
//! `bench/expected/NAME.out`: the output of clox (the book's C interpreter) on the same copy,
//! committed. A script whose output changes, or that loses either line, fails the test; so does
//! an expected file whose script is gone. To write the expected files again from clox (after
//! changing a script on purpose):
//!
//! ```text
//! bash shared/bench/clox/build.sh /tmp/clox
//! LOX_BENCH_EXPECTED_FROM=/tmp/clox cargo test --release -p lox --test bench
//! ```
//!
//! The full-size scripts are compared with clox by `lox-bench --baseline` itself, which stops
//! with a clear error when the outputs differ: the last two tests check that it does.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const SIZE_LINE: &str = "var N = ";
const TEST_SIZE_LINE: &str = "// lox-bench test: N = ";

fn bench_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("bench")
}

fn expected_dir() -> PathBuf {
    bench_dir().join("expected")
}

/// Every `bench/*.lox`, sorted.
fn scripts() -> Vec<PathBuf> {
    let mut scripts: Vec<PathBuf> = std::fs::read_dir(bench_dir())
        .expect("the bench directory")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "lox"))
        .collect();
    scripts.sort();
    assert!(
        !scripts.is_empty(),
        "no script in {}",
        bench_dir().display()
    );
    scripts
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .expect("a file name")
        .to_string_lossy()
        .into_owned()
}

/// The source of `script` with its `var N = ...;` line set to its test size.
fn small_copy(script: &Path) -> Result<String, String> {
    let source = std::fs::read_to_string(script).map_err(|e| e.to_string())?;
    let small = source
        .lines()
        .find_map(|l| l.strip_prefix(TEST_SIZE_LINE))
        .ok_or(format!("no `{TEST_SIZE_LINE}...` line"))?
        .trim();
    small
        .parse::<u64>()
        .map_err(|e| format!("test size `{small}`: {e}"))?;
    let size_lines = source.lines().filter(|l| l.starts_with(SIZE_LINE)).count();
    if size_lines != 1 {
        return Err(format!(
            "{size_lines} lines start with `{SIZE_LINE}`: exactly one must give the size"
        ));
    }
    let mut copy = String::new();
    for line in source.lines() {
        if line.starts_with(SIZE_LINE) {
            if !line.ends_with(';') {
                return Err(format!("`{line}` must be `{SIZE_LINE}<number>;`"));
            }
            copy.push_str(&format!("{SIZE_LINE}{small};"));
        } else {
            copy.push_str(line);
        }
        copy.push('\n');
    }
    Ok(copy)
}

fn run(binary: &Path, args: &[&str], script: &Path) -> Output {
    Command::new(binary)
        .args(args)
        .arg(script)
        .output()
        .unwrap_or_else(|e| panic!("running {}: {e}", binary.display()))
}

#[test]
fn every_bench_script_prints_its_expected_output() {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench-small");
    std::fs::create_dir_all(&tmp).expect("a scratch directory");
    let reference = std::env::var_os("LOX_BENCH_EXPECTED_FROM").map(PathBuf::from);
    let mut failures = Vec::new();
    let scripts = scripts();
    for script in &scripts {
        let name = stem(script);
        let copy = match small_copy(script) {
            Ok(copy) => copy,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        let path = tmp.join(format!("{name}.lox"));
        std::fs::write(&path, copy).expect("writing the small copy");
        let expected_path = expected_dir().join(format!("{name}.out"));
        let output = match &reference {
            Some(clox) => run(clox, &[], &path),
            None => run(
                Path::new(env!("CARGO_BIN_EXE_lox")),
                &["--gc", "concurrent", "--heap", "64m"],
                &path,
            ),
        };
        let stdout = String::from_utf8_lossy(&output.stdout);
        if !output.status.success() || !output.stderr.is_empty() {
            failures.push(format!(
                "{name}: exit status {}, stderr {:?}",
                output.status,
                String::from_utf8_lossy(&output.stderr)
            ));
            continue;
        }
        if stdout.trim().is_empty() {
            failures.push(format!(
                "{name}: printed nothing (a script prints its check value)"
            ));
            continue;
        }
        if reference.is_some() {
            std::fs::create_dir_all(expected_dir()).expect("the expected directory");
            std::fs::write(&expected_path, stdout.as_bytes()).expect("writing an expected file");
            continue;
        }
        match std::fs::read_to_string(&expected_path) {
            Err(e) => failures.push(format!(
                "{name}: {}: {e} (write it from clox: see this test's documentation)",
                expected_path.display()
            )),
            Ok(expected) if expected != stdout => failures.push(format!(
                "{name}: printed\n{stdout}but {} holds\n{expected}",
                expected_path.display()
            )),
            Ok(_) => {}
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} bench scripts failed:\n{}",
        failures.len(),
        scripts.len(),
        failures.join("\n")
    );
}

#[test]
fn every_expected_output_has_its_script() {
    let names: Vec<String> = scripts().iter().map(|p| stem(p)).collect();
    for entry in std::fs::read_dir(expected_dir()).expect("the expected directory") {
        let path = entry.expect("a directory entry").path();
        let name = stem(&path);
        assert!(
            path.extension().is_some_and(|e| e == "out") && names.contains(&name),
            "{} belongs to no bench script: remove it",
            path.display()
        );
    }
}

/// A directory holding one small script and a stand-in for clox: a shell script printing
/// `clox_prints`.
fn fake_baseline(test: &str, clox_prints: &str) -> (PathBuf, PathBuf) {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(test);
    let scripts = dir.join("scripts");
    std::fs::create_dir_all(&scripts).expect("a scratch directory");
    std::fs::write(scripts.join("tiny.lox"), "print 1;\nprint 2;\n").expect("the script");
    let clox = dir.join("clox");
    std::fs::write(&clox, format!("#!/bin/sh\nprintf '{clox_prints}'\n")).expect("the stand-in");
    Command::new("chmod")
        .arg("+x")
        .arg(&clox)
        .status()
        .expect("chmod");
    (scripts, clox)
}

fn lox_bench(scripts: &Path, clox: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lox-bench"))
        .arg("--dir")
        .arg(scripts)
        .arg("--baseline")
        .arg(clox)
        .args(["--runs", "1", "--lox", env!("CARGO_BIN_EXE_lox")])
        .output()
        .expect("running lox-bench")
}

#[test]
fn lox_bench_baseline_fails_clearly_when_lox_prints_something_else() {
    let (scripts, clox) = fake_baseline("bench-baseline-differs", "1\\n3\\n");
    let output = lox_bench(&scripts, &clox);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "stderr: {stderr}");
    assert!(
        stderr.contains("tiny.lox: lox --gc")
            && stderr.contains("printed something other than clox: at line 2 clox printed `3`"),
        "stderr: {stderr}"
    );
    assert!(output.stdout.is_empty(), "no table after a mismatch");
}

#[test]
fn lox_bench_baseline_reports_when_outputs_agree() {
    let (scripts, clox) = fake_baseline("bench-baseline-agrees", "1\\n2\\n");
    let output = lox_bench(&scripts, &clox);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains("tiny")
            && stdout.contains("geometric mean")
            && stdout.contains("(best of 1 interleaved rounds; ratios of the best times)"),
        "{stdout}"
    );
}
