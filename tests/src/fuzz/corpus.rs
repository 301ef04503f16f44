//! The seed corpus of the mutation fuzzer: every Lox program of the workspace — the
//! benchmarks (`workloads/lox/bench/*.lox`) and the interpreter's test corpus
//! (`workloads/lox/tests/corpus/**/*.lox`, programs that pass, fail to compile and fail at
//! run time) — read once, in a fixed order, so a seed picks the same file on every run.

use std::path::{Path, PathBuf};

/// One corpus program.
#[derive(Debug)]
pub struct Script {
    /// Path relative to the workspace root.
    pub name: String,
    pub bytes: Vec<u8>,
}

/// The workspace root (the parent of this crate's directory).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate is inside the workspace")
        .to_path_buf()
}

/// Every corpus program, sorted by path.
///
/// # Panics
/// If a directory cannot be read or holds no program (the corpus moved: update this).
pub fn load() -> Vec<Script> {
    let root = workspace_root();
    let mut paths = Vec::new();
    for dir in ["workloads/lox/bench", "workloads/lox/tests/corpus"] {
        let before = paths.len();
        collect(&root.join(dir), &mut paths);
        assert!(paths.len() > before, "no .lox file under {dir}");
    }
    paths.sort();
    paths
        .into_iter()
        .map(|p| Script {
            name: p
                .strip_prefix(&root)
                .unwrap_or(&p)
                .to_string_lossy()
                .into_owned(),
            bytes: std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())),
        })
        .collect()
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "lox") {
            out.push(path);
        }
    }
}
