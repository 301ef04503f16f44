//! `cpu-probe`: this machine's floor for a pause (see `workloads::cpu_probe`): how often, and
//! for how long, a thread that holds its CPU loses it to interrupts or to the hypervisor.
//! `cargo run --release -p workloads --bin cpu-probe -- --duration 10`.

use clap::Parser;
use std::process::ExitCode;
use std::time::Duration;
use workloads::cpu_probe::{allowed_cpus, probe_cpus, BOUNDS_US, GAP_NS};

/// Spin one thread per CPU, pinned there, reading the clock in a tight loop, and count the
/// gaps between two readings longer than 20 µs: time the thread lost while it held its CPU
/// (an interrupt handled there, or, in a virtual machine, the hypervisor running something
/// else), told apart from the times another thread was scheduled instead. A pause whose
/// request meets such a gap on the mutator's CPU, or the driver's, waits for it, and no
/// per-thread counter of the kernel shows it: this is the tail below which pause times on this
/// machine cannot be pushed. Every CPU spins at once, so run it on an otherwise idle machine
/// (or beside a workload, to see what it adds).
#[derive(Parser)]
#[command(name = "cpu-probe")]
struct Cli {
    /// Seconds to spin (0.1 to 600).
    #[arg(long, default_value_t = 10.0)]
    duration: f64,
    /// CPUs to probe, comma-separated (default: every CPU this process may run on).
    #[arg(long, value_delimiter = ',')]
    cpus: Vec<usize>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if !(0.1..=600.0).contains(&cli.duration) {
        eprintln!(
            "cpu-probe: --duration {} is outside 0.1..600 seconds; give a duration in that range",
            cli.duration
        );
        return ExitCode::from(2);
    }
    let allowed = allowed_cpus();
    let cpus = if cli.cpus.is_empty() {
        allowed.clone()
    } else {
        cli.cpus.clone()
    };
    if let Some(c) = cpus.iter().find(|c| !allowed.contains(c)) {
        eprintln!("cpu-probe: this process may not run on CPU {c}; give CPUs among {allowed:?}");
        return ExitCode::from(2);
    }
    let probes = match probe_cpus(&cpus, Duration::from_secs_f64(cli.duration)) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("cpu-probe: {e}");
            return ExitCode::from(1);
        }
    };
    println!(
        "Time lost by a thread spinning on each CPU, in gaps of over {} µs between two clock \
         readings ({} s):",
        GAP_NS / 1000,
        cli.duration
    );
    println!();
    println!(
        "| CPU | lost on the CPU, per second: > 20 µs | > {} µs | > {} µs | > {} ms | longest | share of time | of it not charged to the thread | switched out: times / longest |",
        BOUNDS_US[0],
        BOUNDS_US[1],
        BOUNDS_US[2] / 1000
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for p in &probes {
        println!(
            "| {} | {:.0} | {:.1} | {:.1} | {:.2} | {} µs | {:.2}% | {:.0}% | {} / {} µs |",
            p.cpu,
            p.per_second_over(0),
            p.per_second_over(BOUNDS_US[0]),
            p.per_second_over(BOUNDS_US[1]),
            p.per_second_over(BOUNDS_US[2]),
            p.longest_ns / 1000,
            100.0 * p.lost_share(),
            100.0 * p.not_charged_ns as f64 / p.lost_ns.max(1) as f64,
            p.switched,
            p.switched_longest_ns / 1000
        );
    }
    println!();
    println!(
        "\"Not charged\" is time the thread's CPU clock did not advance over (steal, where the \
         kernel accounts it); the rest was charged to it (interrupt handling, when the kernel \
         does not account interrupts apart, and in a virtual machine the host's own handling of \
         them). A pause's time to safepoint meets such a gap when its request falls into one on \
         the mutator's or the driver's CPU."
    );
    ExitCode::SUCCESS
}
