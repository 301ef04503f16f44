//! Running fuzz cases in a child process, so that a crash (a signal: SIGSEGV, an abort after
//! a collector panic), a panic and a hang are each seen as such and pinned to one case's seed
//! instead of taking the test binary down with no seed printed.
//!
//! The child is the test binary itself, re-run on one `#[ignore]`d test of its own with the
//! seeds in [`SEEDS_ENV`] (a test in this crate cannot name another crate's binary, and the
//! test binary always runs the code under test as built). The child prints a `@@fuzz start`
//! line before each case and a `@@fuzz end` line with the case's outcome class after it
//! ([`report_start`], [`report_end`]); the parent reads them as they come ([`run_batch`]).
//! When no line comes for the case timeout, the parent watches the child for a second (its CPU
//! time, and whether any of its threads is runnable): a busy child is running a slow (or
//! endless) program — a `Busy` case, which only a
//! target whose programs always terminate treats as a failure — while an idle one is stuck
//! (a deadlock): a failure. Either way the child is killed and the batch ends there.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// The environment variable that hands a child its seeds (comma-separated hex).
pub const SEEDS_ENV: &str = "ZRS_FUZZ_CHILD_SEEDS";

const MARK: &str = "@@fuzz";

/// How a batch of cases in a child ended.
#[derive(Debug)]
pub enum Batch {
    /// Every case ended; the class of each, in order.
    Done(Vec<(u64, String)>),
    /// The case `seed` ran past the timeout while the child kept using CPU; the cases before
    /// it ended as listed.
    Busy { done: Vec<(u64, String)>, seed: u64 },
    /// The child failed during case `seed`: stuck without using CPU, killed by a signal, or
    /// exited with a failure (a panic). `what` says which, with the end of its stderr.
    Failed { seed: u64, what: String },
}

/// The seeds the parent gave this child, if it is one.
pub fn child_seeds() -> Option<Vec<u64>> {
    let v = std::env::var(SEEDS_ENV).ok()?;
    Some(
        v.split(',')
            .filter(|s| !s.is_empty())
            .map(|s| u64::from_str_radix(s, 16).expect("a seed the parent wrote"))
            .collect(),
    )
}

/// In the child: case `seed` starts.
pub fn report_start(seed: u64) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{MARK} start {seed:x}");
    let _ = out.flush();
}

/// In the child: case `seed` ended as `class`.
pub fn report_end(seed: u64, class: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{MARK} end {seed:x} {class}");
    let _ = out.flush();
}

/// Runs `seeds` in a child: this test binary, running only its test `child_test` (which must
/// read [`child_seeds`] and report every case). `case_timeout` is how long one case may run
/// without ending.
pub fn run_batch(child_test: &str, seeds: &[u64], case_timeout: Duration) -> Batch {
    assert!(!seeds.is_empty());
    let exe = std::env::current_exe().expect("the test binary's path");
    let list: Vec<String> = seeds.iter().map(|s| format!("{s:x}")).collect();
    let mut child = Command::new(exe)
        .args([
            child_test,
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(SEEDS_ENV, list.join(","))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawning the test binary as a child");
    let stdout = child.stdout.take().expect("piped stdout");
    let mut stderr = child.stderr.take().expect("piped stderr");
    let (tx, rx) = mpsc::channel::<String>();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if line.starts_with(MARK) && tx.send(line).is_err() {
                break;
            }
        }
    });
    let err_reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = stderr.read_to_end(&mut bytes);
        bytes
    });
    let mut done = Vec::new();
    let mut current: Option<u64> = None;
    let stderr_tail = |bytes: Vec<u8>| {
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let start = text.len().saturating_sub(4000);
        let start = (start..text.len())
            .find(|&i| text.is_char_boundary(i))
            .unwrap_or(text.len());
        text[start..].to_string()
    };
    let outcome = loop {
        match rx.recv_timeout(case_timeout) {
            Ok(line) => {
                let mut words = line.split_whitespace().skip(1);
                let (kind, seed) = (words.next(), words.next());
                let seed = seed.and_then(|s| u64::from_str_radix(s, 16).ok());
                match (kind, seed) {
                    (Some("start"), Some(seed)) => current = Some(seed),
                    (Some("end"), Some(seed)) => {
                        let class: Vec<&str> = words.collect();
                        done.push((seed, class.join(" ")));
                        current = None;
                    }
                    _ => panic!("the child wrote {line:?}"),
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                // Its stdout closed: the child exited.
                let status = child.wait().expect("waiting for the child");
                let tail = stderr_tail(err_reader.join().unwrap_or_default());
                if status.success() && done.len() == seeds.len() {
                    break Batch::Done(done);
                }
                let seed = current.unwrap_or(seeds[done.len().min(seeds.len() - 1)]);
                break Batch::Failed {
                    seed,
                    what: format!("the child ended with {status} during the case:\n{tail}"),
                };
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let seed = current.unwrap_or(seeds[done.len().min(seeds.len() - 1)]);
                let busy = cpu_busy(child.id());
                let _ = child.kill();
                let _ = child.wait();
                let tail = stderr_tail(err_reader.join().unwrap_or_default());
                if busy {
                    break Batch::Busy { done, seed };
                }
                break Batch::Failed {
                    seed,
                    what: format!(
                        "the case ran for more than {case_timeout:?} and its process used no CPU \
                         and had no runnable thread for a second (stuck: a deadlock?); \
                         stderr:\n{tail}"
                    ),
                };
            }
        }
    };
    let _ = reader.join();
    outcome
}

/// True if process `pid` is running a program rather than stuck, judged over the next second:
/// it used some CPU (at least 20 ms), or one of its threads was running or waiting for a core
/// (state `R`) at one of the samples taken every 50 ms. A deadlocked child uses no CPU and
/// has every thread asleep; a child on a machine busy with other work may get little CPU, but
/// its threads are seen runnable, so a loaded machine does not pass for a deadlock.
fn cpu_busy(pid: u32) -> bool {
    let ticks = || -> Option<u64> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // Fields after the command name, which is in parentheses and may hold spaces.
        let rest = &stat[stat.rfind(')')? + 2..];
        let fields: Vec<&str> = rest.split_whitespace().collect();
        // utime and stime are fields 14 and 15 of the whole line: 11 and 12 after the name.
        Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
    };
    let Some(before) = ticks() else { return false };
    let mut runnable = false;
    for _ in 0..20 {
        runnable |= any_thread_runnable(pid);
        std::thread::sleep(Duration::from_millis(50));
    }
    let Some(after) = ticks() else { return false };
    // Clock ticks are 1/100 s on Linux: 20 ms is 2.
    runnable || after.saturating_sub(before) >= 2
}

/// True if a thread of process `pid` is in state `R` (running, or runnable and waiting for a
/// core).
fn any_thread_runnable(pid: u32) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    tasks.flatten().any(|task| {
        std::fs::read_to_string(task.path().join("stat"))
            .ok()
            .and_then(|stat| {
                let rest = &stat[stat.rfind(')')? + 2..];
                Some(rest.starts_with('R'))
            })
            .unwrap_or(false)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sleeping process is stuck, a spinning one busy: the stuck test tells a deadlock from
    /// a running program.
    #[test]
    fn a_sleeping_child_is_stuck_and_a_spinning_one_busy() {
        let mut sleeper = Command::new("sleep").arg("30").spawn().expect("sleep");
        let mut spinner = Command::new("sh")
            .args(["-c", "while :; do :; done"])
            .spawn()
            .expect("sh");
        // Past their start (exec and loading run, and show as runnable).
        std::thread::sleep(Duration::from_millis(300));
        let (sleeping, spinning) = (cpu_busy(sleeper.id()), cpu_busy(spinner.id()));
        for child in [&mut sleeper, &mut spinner] {
            let _ = child.kill();
            let _ = child.wait();
        }
        assert!(!sleeping, "a sleeping process was taken for a busy one");
        assert!(spinning, "a spinning process was taken for a stuck one");
    }
}
