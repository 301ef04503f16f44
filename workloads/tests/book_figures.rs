//! `book-figures` as a reader runs it, in a fresh process: the figures it renders must be the
//! committed ones under `docs/src/`. The report plots (`report_plots::BOOK_PLOTS`) are drawn
//! from the run data committed under `docs/src/figures/data/` and are compared byte for byte:
//! a committed plot that is not what its committed data renders to fails here. Of the concept
//! figures under `docs/src/img/`, four are the same on every run and are compared byte
//! for byte: the colored pointer (the first heap of a process lies at offset 0, so its
//! addresses and mappings repeat) and the three drawn from stepped cycles (offsets relative to
//! the heap). The cycle timeline shows measured durations, which differ from run to run; for
//! it the facts are compared: every text of the figure but its title (which names the
//! cycle's number and cause), numbers masked and line breaks ignored, so the phases, their
//! order and what each label says must match.

use std::path::{Path, PathBuf};
use std::process::Command;
use workloads::figures::report_plots;

const EXACT: [&str; 4] = [
    "concept-colored-pointer.svg",
    "concept-barrier-paths.svg",
    "concept-forwarding-table.svg",
    "concept-in-place-compaction.svg",
];
const BY_FACTS: [&str; 1] = ["concept-cycle-timeline.svg"];

/// The book's source directory.
fn book_src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/src")
}

/// The committed file at `path` under the book's `src/`.
fn committed(path: &str) -> String {
    let p = book_src().join(path);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("cannot read {}: {e}", p.display()))
}

/// The texts of an SVG, title dropped, numbers masked (`#`), units (`µs`, `ms`) as `t`,
/// spaces removed: what a figure says, whatever its durations and line breaks.
fn facts(svg: &str) -> String {
    let texts: Vec<&str> = svg
        .split("<text")
        .skip(1)
        .filter_map(|t| {
            t.split_once('>')
                .and_then(|(_, rest)| rest.split_once("</text>"))
        })
        .map(|(body, _)| body.trim())
        .collect();
    let mut out = String::new();
    let mut in_number = false;
    for c in texts.iter().skip(1).flat_map(|t| t.chars()) {
        let digit = c.is_ascii_digit() || (in_number && c == '.');
        if digit {
            if !in_number {
                out.push('#');
            }
        } else if !c.is_whitespace() {
            out.push(c);
        }
        in_number = digit;
    }
    out.replace("µs", "t").replace("ms", "t")
}

#[test]
fn facts_mask_numbers_and_line_breaks_only() {
    let a = "<text x=\"1\">title 1</text><text>Concurrent Mark</text><text>1.25 ms</text>";
    let b =
        "<text x=\"2\">title 2</text><text>Concurrent</text><text>Mark</text><text>830.1 µs</text>";
    assert_eq!(facts(a), facts(b));
    let c = "<text>t</text><text>Concurrent Relocate</text><text>1.25 ms</text>";
    assert_ne!(facts(a), facts(c), "another phase is another fact");
}

#[test]
fn the_committed_figures_are_what_book_figures_renders() {
    let out: PathBuf =
        std::env::temp_dir().join(format!("book-figures-test-{}", std::process::id()));
    let run = Command::new(env!("CARGO_BIN_EXE_book-figures"))
        .arg("--out")
        .arg(&out)
        .arg("--data")
        .arg(book_src().join("figures/data"))
        .output()
        .expect("book-figures runs");
    assert!(
        run.status.success(),
        "book-figures failed: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let fresh = |path: &str| std::fs::read_to_string(out.join(path)).unwrap();
    let redraw = "redraw with `cargo run --release -p workloads --bin book-figures` and commit";
    for name in EXACT {
        let path = format!("img/{name}");
        assert!(
            fresh(&path) == committed(&path),
            "docs/src/{path} is not what book-figures renders: {redraw}"
        );
    }
    for name in BY_FACTS {
        let path = format!("img/{name}");
        assert_eq!(
            facts(&fresh(&path)),
            facts(&committed(&path)),
            "docs/src/{path} shows other facts than book-figures renders: {redraw}"
        );
    }
    for p in report_plots::BOOK_PLOTS {
        assert!(
            fresh(p.svg) == committed(p.svg),
            "docs/src/{} is not what its committed data (docs/src/figures/data/{}) renders to: \
             {redraw}",
            p.svg,
            p.data
        );
    }
    let _ = std::fs::remove_dir_all(&out);
}
