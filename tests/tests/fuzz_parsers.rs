//! Fuzz targets of the size and option parsers, which read what a user types:
//!
//! - `sizes`: `gc_runtime::parse_size` on random strings built from digits, units, signs,
//!   spaces, dots and non-ASCII text, numbers near `u64::MAX` with every suffix included;
//!   each result is checked against a reference reading of the grammar (the value, or an error
//!   that names the accepted forms), never a panic;
//! - `lox_options`: the `lox` command line (`Options::try_parse_from`, then `check_heap` and
//!   `heap_config`) on random argument lists drawn from its own flags and random values;
//! - `pause_sweep_cli`: the `pause-sweep` command line (`Cli::try_parse_from`, then the run
//!   configurations it builds) on random arguments drawn from the flags of every subcommand,
//!   found through clap's own description of the command.
//!
//! Every case either succeeds or fails with a non-empty message; a panic fails the target
//! with the case's seed (`ZRS_FUZZ_SEED` replays it). Each target requires that some cases
//! were accepted and some refused.

use clap::{CommandFactory, Parser};
use integration_tests::fuzz::{Budget, Rng, Tally};

const FILE: &str = "fuzz_parsers";

/// Runs `case` once per seed of the budget, failing with the seed on a panic.
fn drive(test: &str, default_cases: u64, case: fn(&mut Rng) -> &'static str) -> Tally {
    let mut budget = Budget::from_env(default_cases);
    let mut tally = Tally::new();
    while let Some(seed) = budget.next_seed() {
        let class = std::panic::catch_unwind(|| case(&mut Rng::new(seed))).unwrap_or_else(|_| {
            panic!(
                "{test}: case {seed:#x} panicked; replay: {}",
                Budget::replay_command(FILE, test, seed)
            )
        });
        tally.add(class);
    }
    eprintln!("{}", tally.summary(test, budget.elapsed()));
    tally
}

/// A random size string.
fn size_text(rng: &mut Rng) -> String {
    const PARTS: &[&str] = &[
        "k",
        "K",
        "m",
        "M",
        "g",
        "G",
        "t",
        "T",
        "b",
        "B",
        "i",
        "iB",
        "KiB",
        "mb",
        "GiB",
        "TB",
        "x",
        " ",
        "\t",
        "-",
        "+",
        ".",
        "_",
        "e",
        "0",
        "1",
        "9",
        "\u{e9}",
        "\u{660}",
        "\u{ff11}",
        "18446744073709551615",
        "18446744073709551616",
        "16777215",
        "16777216",
        "17592186044415",
        "99999999999999999999",
    ];
    let mut s = String::new();
    if rng.chance(700) {
        s.push_str(&rng.wide().to_string());
    }
    for _ in 0..rng.below(4) {
        let part: &&str = rng.pick(PARTS);
        s.push_str(part);
    }
    if rng.chance(100) {
        s = s.repeat(rng.range(2, 50) as usize);
    }
    s
}

/// The size grammar read independently of `parse_size`: digits, then an optional unit.
fn reference(s: &str) -> Option<u64> {
    let t = s.trim_matches(|c: char| c.is_whitespace());
    let end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(end);
    if digits.is_empty() {
        return None;
    }
    let shift = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => return None,
    };
    digits.parse::<u64>().ok()?.checked_mul(1u64 << shift)
}

fn size_case(rng: &mut Rng) -> &'static str {
    let s = size_text(rng);
    let got = gc_runtime::parse_size(&s);
    match (reference(&s), &got) {
        (Some(want), Ok(n)) => {
            assert_eq!(*n, want, "{s:?}");
            // The formatted size reads back the same.
            assert_eq!(gc_runtime::parse_size(&gc_runtime::format_size(*n)), Ok(*n));
            "accepted"
        }
        (None, Err(e)) => {
            assert!(
                e.contains("is not a size")
                    || e.contains("unknown size unit")
                    || e.contains("too large"),
                "{s:?}: {e}"
            );
            "refused"
        }
        (want, got) => panic!("{s:?}: expected {want:?}, got {got:?}"),
    }
}

/// A random command line for `cmd`: its own long flags (of one random subcommand, if it has
/// any) with random values, positional junk, and flags it does not know.
fn argv(rng: &mut Rng, cmd: &clap::Command) -> Vec<String> {
    let mut args = vec![cmd.get_name().to_string()];
    let mut cmd = cmd;
    let subs: Vec<&clap::Command> = cmd.get_subcommands().collect();
    if !subs.is_empty() && rng.chance(700) {
        cmd = *rng.pick(&subs);
        args.push(cmd.get_name().to_string());
    }
    let flags: Vec<String> = cmd
        .get_arguments()
        .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
        .collect();
    const VALUES: &[&str] = &[
        "0",
        "1",
        "-1",
        "2",
        "3",
        "6m",
        "8M",
        "16m",
        "64m",
        "1g",
        "3m",
        "4m",
        "1.5",
        "0.5",
        "1e400",
        "NaN",
        "inf",
        "-inf",
        "",
        " ",
        "on",
        "off",
        "maybe",
        "concurrent",
        "stw",
        "epsilon",
        "generational",
        "bogus",
        "heap,direct",
        "pooled",
        "max",
        "18446744073709551615",
        "18446744073709551616",
        "99999999999999999999g",
        "16T",
        "17T",
        "4294967296",
        "1000",
        "1001",
        "604801",
        "\u{e9}",
        "a.lox",
        "-",
        "--",
        "heap-churn",
        "lru-cache",
    ];
    for _ in 0..rng.below(6) {
        match rng.below(10) {
            0 => args.push(rng.pick(VALUES).to_string()),
            1 => args.push(format!("--no-such-{}", rng.below(3))),
            2 if !flags.is_empty() => {
                let f = rng.pick(&flags).clone();
                args.push(format!("{f}={}", rng.pick(VALUES)));
            }
            _ if !flags.is_empty() => {
                args.push(rng.pick(&flags).clone());
                if rng.chance(800) {
                    let v = if rng.chance(300) {
                        size_text(rng)
                    } else {
                        rng.pick(VALUES).to_string()
                    };
                    args.push(v);
                }
            }
            _ => args.push(size_text(rng)),
        }
    }
    args
}

fn lox_case(rng: &mut Rng) -> &'static str {
    let args = argv(rng, &lox::cli::Options::command());
    match lox::cli::Options::try_parse_from(&args) {
        Ok(o) => {
            let size = o.heap_size();
            assert!(size > 0 || o.heap.is_none(), "{args:?}");
            match o.check_heap() {
                Ok(()) => {
                    let c = o
                        .heap_config()
                        .expect("no ZRS_* variable is set in this test");
                    assert_eq!(c.memory.max_heap, size, "{args:?}");
                    "accepted"
                }
                // A --young-size outside the generational mode, or outside its range.
                Err(e) if e.starts_with("--young-size") => "refused: young size",
                Err(e) => {
                    assert!(e.contains("at least"), "{args:?}: {e}");
                    "refused: heap check"
                }
            }
        }
        Err(e) => {
            assert!(!e.to_string().trim().is_empty(), "{args:?}");
            "refused: parse"
        }
    }
}

fn sweep_case(rng: &mut Rng) -> &'static str {
    let args = argv(rng, &workloads::cli::Cli::command());
    match workloads::cli::Cli::try_parse_from(&args) {
        Ok(cli) => {
            let built = match &cli.command {
                Some(c) => c.run_config().map(|r| r.map(|_| ())),
                None => Some(cli.sweep.configs().map(|_| ())),
            };
            match built {
                None | Some(Ok(())) => "accepted",
                Some(Err(e)) => {
                    assert!(!e.trim().is_empty(), "{args:?}");
                    "refused: run config"
                }
            }
        }
        Err(e) => {
            assert!(!e.to_string().trim().is_empty(), "{args:?}");
            "refused: parse"
        }
    }
}

#[test]
fn sizes() {
    let t = drive("sizes", 50_000, size_case);
    t.require("sizes", &["accepted", "refused"], 100);
}

#[test]
fn lox_options() {
    let t = drive("lox_options", 5_000, lox_case);
    t.require(
        "lox_options",
        &["accepted", "refused: parse", "refused: heap"],
        1000,
    );
}

#[test]
fn pause_sweep_cli() {
    let t = drive("pause_sweep_cli", 3_000, sweep_case);
    t.require("pause_sweep_cli", &["accepted", "refused: parse"], 1000);
}
