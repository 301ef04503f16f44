//! What the `pause-sweep` binary's integration tests share: running the binary, its output as
//! text, and a fresh scratch directory per test.

use std::path::PathBuf;
use std::process::{Command, Output};

/// Run the `pause-sweep` binary with `args`.
pub fn pause_sweep(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pause-sweep"))
        .args(args)
        .output()
        .expect("the binary runs")
}

/// Output bytes as text.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// An empty directory under the system's temp directory, named after the test file
/// (`suite`), this process and `name`.
pub fn scratch(suite: &str, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("{suite}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}
