//! The `memory-probe` binary as a user runs it: a table for small buffers, and a clear error
//! with exit status 2 for a size it refuses.

use std::process::Command;

fn probe(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_memory-probe"))
        .args(args)
        .output()
        .expect("memory-probe runs")
}

#[test]
fn small_buffers_give_a_row_per_size_and_page_kind() {
    let out = probe(&["--sizes", "64K,1M", "--loads", "10000"]);
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("| buffer | pages |"), "{text}");
    for size in ["| 64K | 4 KiB |", "| 1M | 4 KiB |"] {
        assert!(text.contains(size), "no row {size}: {text}");
    }
}

#[test]
fn a_size_out_of_range_is_refused_with_what_to_give() {
    for bad in ["100", "32G"] {
        let out = probe(&["--sizes", bad]);
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("give sizes between 4K"), "{err}");
    }
    let out = probe(&["--sizes", "lots"]);
    assert_eq!(out.status.code(), Some(2), "a malformed size: {out:?}");
}
