//! The documentation against the code: every source file the docs name exists, and every line
//! of every Rust excerpt in the book is a line of the sources, so a renamed file or a changed
//! function cannot leave the book describing code that is not there.
//!
//! Checked: `docs/src/*.md`, `README.md`, `ARCHITECTURE.md`. A file name is a backticked word
//! ending in `.rs`; it may be a bare name (`mark.rs`) or a path (`gc-runtime/src/mark.rs`), and
//! must name a file of the repository. An excerpt line is compared with comments and
//! surrounding space stripped; lines that are only `...`, blank or comments are elisions.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate lives in the workspace")
        .to_path_buf()
}

/// Every `.rs` file under `dir`, skipping build output and hidden directories.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable directory") {
        let path = entry.expect("dir entry").path();
        let name = path.file_name().unwrap().to_string_lossy();
        if name.starts_with('.') || name == "target" {
            continue;
        }
        if path.is_dir() {
            rust_files(&path, out);
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
}

fn docs() -> Vec<(String, String)> {
    let root = repo_root();
    let mut files: Vec<PathBuf> = vec![root.join("README.md"), root.join("ARCHITECTURE.md")];
    for entry in std::fs::read_dir(root.join("docs/src")).expect("docs/src") {
        let path = entry.expect("dir entry").path();
        if path.extension().is_some_and(|e| e == "md") {
            files.push(path);
        }
    }
    files
        .into_iter()
        .map(|p| {
            let name = p.strip_prefix(&root).unwrap().display().to_string();
            (name, std::fs::read_to_string(&p).expect("readable doc"))
        })
        .collect()
}

/// A line without its `//` comment (outside string literals) and surrounding space.
fn strip_comment(line: &str) -> &str {
    let mut in_str = false;
    let b = line.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' if in_str => i += 1,
            b'"' => in_str = !in_str,
            b'/' if !in_str && b.get(i + 1) == Some(&b'/') => return line[..i].trim(),
            _ => {}
        }
        i += 1;
    }
    line.trim()
}

/// The backticked `*.rs` names in a document.
fn named_files(doc: &str) -> Vec<String> {
    doc.split('`')
        .skip(1)
        .step_by(2)
        .filter(|w| w.ends_with(".rs") && !w.contains(' '))
        .map(str::to_string)
        .collect()
}

/// The lines of each ```rust block (with its first line number).
fn excerpts(doc: &str) -> Vec<(usize, Vec<String>)> {
    let mut out = Vec::new();
    let mut current: Option<(usize, Vec<String>)> = None;
    for (n, line) in doc.lines().enumerate() {
        let t = line.trim();
        match &mut current {
            None if t.starts_with("```rust") => current = Some((n + 2, Vec::new())),
            Some(_) if t.starts_with("```") => out.push(current.take().unwrap()),
            Some((_, lines)) => lines.push(line.to_string()),
            None => {}
        }
    }
    out
}

#[test]
fn every_source_file_the_docs_name_exists() {
    let root = repo_root();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let paths: HashSet<String> = files
        .iter()
        .map(|p| p.strip_prefix(&root).unwrap().display().to_string())
        .collect();
    let mut missing = Vec::new();
    let mut checked = 0;
    for (doc, text) in docs() {
        for name in named_files(&text) {
            checked += 1;
            let found = paths
                .iter()
                .any(|p| p == &name || p.ends_with(&format!("/{name}")));
            if !found {
                missing.push(format!("{doc}: `{name}`"));
            }
        }
    }
    assert!(
        checked > 50,
        "only {checked} file names found: the scan is broken"
    );
    assert!(
        missing.is_empty(),
        "the docs name source files that do not exist (renamed or removed?):\n{}",
        missing.join("\n")
    );
}

#[test]
fn every_line_of_the_books_rust_excerpts_is_in_the_sources() {
    let root = repo_root();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let source_lines: HashSet<String> = files
        .iter()
        .flat_map(|p| {
            std::fs::read_to_string(p)
                .expect("readable source")
                .lines()
                .map(|l| strip_comment(l).to_string())
                .collect::<Vec<_>>()
        })
        .collect();
    let mut stale = Vec::new();
    let mut checked = 0;
    for (doc, text) in docs() {
        for (first, lines) in excerpts(&text) {
            for (i, line) in lines.iter().enumerate() {
                let code = strip_comment(line);
                if code.is_empty() || code == "..." {
                    continue;
                }
                checked += 1;
                if !source_lines.contains(code) {
                    stale.push(format!("{doc}:{}: {code}", first + i));
                }
            }
        }
    }
    assert!(
        checked > 30,
        "only {checked} excerpt lines found: the scan is broken"
    );
    assert!(
        stale.is_empty(),
        "lines of the book's Rust excerpts that are no longer in the sources:\n{}",
        stale.join("\n")
    );
}
