//! The `cpu-probe` binary as a user runs it: a row per CPU probed, and a clear error with exit
//! status 2 for a duration or a CPU it refuses.

use std::process::Command;

fn probe(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_cpu-probe"))
        .args(args)
        .output()
        .expect("cpu-probe runs")
}

#[test]
fn a_short_probe_prints_a_row_for_the_cpu_it_was_given() {
    let cpu = workloads::cpu_probe::allowed_cpus()[0];
    let out = probe(&["--duration", "0.2", "--cpus", &cpu.to_string()]);
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("| CPU | lost on the CPU"), "{text}");
    assert!(
        text.contains(&format!("\n| {cpu} | ")),
        "no row for CPU {cpu}: {text}"
    );
    assert_eq!(
        text.matches("\n| ").count(),
        2,
        "a header and one row: {text}"
    );
}

#[test]
fn a_duration_or_cpu_out_of_range_is_refused_with_what_to_give() {
    for bad in ["0", "601", "-1"] {
        let out = probe(&["--duration", bad]);
        assert_eq!(out.status.code(), Some(2), "{bad}: {out:?}");
    }
    let out = probe(&["--duration", "0"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("give a duration in that range"), "{err}");
    let out = probe(&["--duration", "0.1", "--cpus", "100000"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("give CPUs among"), "{err}");
}
