//! `file-backing`: what the heap's file backing costs on this machine (see
//! `workloads::file_backing`): 4 KiB stores and loads through a shared mapping of a memfd
//! against `pwrite`/`pread` on the same descriptor, the first touch of a page against a page
//! already mapped, and `msync` on a memfd against a file on disk.
//! `cargo run --release -p workloads --bin file-backing -- --size 64M --rounds 5`.

use clap::Parser;
use std::path::PathBuf;
use std::process::ExitCode;
use workloads::file_backing::{run, Options};

/// Measure what a heap backed by a file mapped into memory costs against reading and writing
/// the file: sequential and random 4 KiB stores and loads through a MAP_SHARED mapping of a
/// memfd against pwrite/pread on the same fd (Java's MappedByteBuffer against
/// FileChannel.write/read), the first store to a page (a page fault) against a page already
/// mapped, and msync(MS_SYNC) on a memfd against a file on disk (MappedByteBuffer.force()).
/// Each figure is the median of --rounds rounds, in nanoseconds per 4 KiB page.
#[derive(Parser)]
#[command(name = "file-backing")]
struct Cli {
    /// Size of the file each measurement works on, with K/M/G suffix (binary units): a
    /// multiple of 4K between 1M and 4G. Larger than the CPU caches to measure memory.
    #[arg(long, default_value = "64M", value_parser = gc_core::parse_size)]
    size: u64,
    /// Rounds of each measurement; the median is printed.
    #[arg(long, default_value_t = 5)]
    rounds: u32,
    /// Directory for the file on disk of the msync comparison (created and unlinked at once);
    /// it must be on a disk, not tmpfs, for the comparison to mean anything.
    #[arg(long, default_value_os_t = std::env::temp_dir())]
    dir: PathBuf,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let o = Options {
        size: cli.size,
        rounds: cli.rounds,
        dir: cli.dir,
    };
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    match run(&o) {
        Ok(rows) => {
            println!(
                "file-backing: {} file, median of {} rounds (a round: every page once, or one \
                 msync); load average before: {}",
                gc_core::format_size(o.size),
                o.rounds,
                load.split_whitespace()
                    .take(3)
                    .collect::<Vec<_>>()
                    .join(" ")
            );
            println!();
            println!("| measurement | ns per 4 KiB page | µs per round |");
            println!("|---|---:|---:|");
            for r in rows {
                println!(
                    "| {} | {} | {:.1} |",
                    r.what,
                    if r.ns_per_page < 10.0 {
                        format!("{:.2}", r.ns_per_page)
                    } else {
                        format!("{:.0}", r.ns_per_page)
                    },
                    r.ns_per_round / 1e3
                );
            }
            let after = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
            println!();
            println!(
                "load average after: {}",
                after
                    .split_whitespace()
                    .take(3)
                    .collect::<Vec<_>>()
                    .join(" ")
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("file-backing: {e}");
            ExitCode::FAILURE
        }
    }
}
