//! `memory-probe`: this machine's floor for a marker (see `workloads::memory_probe`): the
//! time of a random cache-line load, one at a time and many at once, over buffers from
//! cache-sized to heap-sized, on 4 KiB and on transparent huge pages.
//! `cargo run --release -p workloads --bin memory-probe -- --sizes 4M,16M,1G`.

use clap::Parser;
use std::process::ExitCode;
use workloads::memory_probe::{probe, transparent_allowed, ProbePages};

/// Measure random cache-line loads on this machine: dependent (a pointer chase through a random
/// cycle of every 64-byte line of the buffer: each load waits for the one before, as a marker
/// waits for an object it did not prefetch) and independent (the same lines with their
/// addresses known ahead, so the loads overlap, as a marker's prefetches make them), in
/// nanoseconds per load, for each buffer size, on 4 KiB pages (madvise MADV_NOHUGEPAGE) and,
/// where /sys/kernel/mm/transparent_hugepage/enabled allows it, on transparent huge pages
/// (MADV_HUGEPAGE; the table says how much of the buffer got them). Marking an object takes at
/// least two random lines (the object and its mark bit's word), so twice the independent figure
/// at the heap's size is about the least a marked object can cost one GC thread here.
#[derive(Parser)]
#[command(name = "memory-probe")]
struct Cli {
    /// Buffer sizes, comma-separated, with K/M/G suffix (binary units), each between 4K and
    /// 16G and at most half of the machine's memory.
    #[arg(long, default_value = "1M,4M,16M,256M,1G", value_delimiter = ',', value_parser = gc_core::parse_size)]
    sizes: Vec<u64>,
    /// Loads of each kind per buffer.
    #[arg(long, default_value_t = 4_000_000, value_parser = clap::value_parser!(u64).range(1000..=1_000_000_000))]
    loads: u64,
    /// Seed of the random order of the lines.
    #[arg(long, default_value_t = 42)]
    seed: u64,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let memory = gc_core::config::physical_memory_bytes();
    for &s in &cli.sizes {
        if !(4096..=16 << 30).contains(&s) || memory.is_some_and(|m| s > m / 2) {
            eprintln!(
                "memory-probe: a --sizes entry of {s} bytes is outside 4K..16G or over half \
                 of this machine's memory; give sizes between 4K and the smaller of 16G and \
                 half the memory"
            );
            return ExitCode::from(2);
        }
    }
    let mut kinds = vec![ProbePages::Small];
    match transparent_allowed() {
        Some(true) => kinds.push(ProbePages::Transparent),
        Some(false) => println!(
            "transparent huge pages are off for anonymous memory \
             (/sys/kernel/mm/transparent_hugepage/enabled is never): 4 KiB pages only"
        ),
        None => {
            println!("cannot read /sys/kernel/mm/transparent_hugepage/enabled: 4 KiB pages only")
        }
    }
    println!("| buffer | pages | on huge pages | dependent ns/load | independent ns/load |");
    println!("|---:|---|---:|---:|---:|");
    for &size in &cli.sizes {
        for &pages in &kinds {
            match probe(size as usize, pages, cli.loads as usize, cli.seed) {
                Ok(r) => println!(
                    "| {} | {} | {} MiB | {:.1} | {:.1} |",
                    gc_core::format_size(r.bytes as u64),
                    match pages {
                        ProbePages::Small => "4 KiB",
                        ProbePages::Transparent => "transparent",
                    },
                    r.huge_bytes >> 20,
                    r.dependent_ns,
                    r.independent_ns
                ),
                Err(e) => {
                    eprintln!("memory-probe: {e}");
                    return ExitCode::from(1);
                }
            }
        }
    }
    ExitCode::SUCCESS
}
