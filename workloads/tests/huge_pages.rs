//! `--huge-pages` on real heaps, with the system's settings as they are (these tests change
//! none): a setting the system does not allow is refused before any run with the file or
//! sysctl to set; one it allows runs cycles and the report says how much of the heap was on
//! 2 MiB pages. Which branch ran is printed.

mod common;

use common::{pause_sweep, scratch, text};
use gc_runtime::{HugePageSystem, HugePages};
use workloads::runner::run_workload;
use workloads::sweep::check_huge_pages;
use workloads::{Mode, RunConfig, WorkloadKind};

const HEAP: u64 = 64 << 20;

fn config(huge: HugePages) -> RunConfig {
    let mut c = RunConfig::new(
        WorkloadKind::HeapChurn,
        Mode::Concurrent,
        HEAP,
        HEAP / 2,
        500,
    );
    c.min_cycles = 1;
    c.huge_pages = Some(huge);
    c
}

#[test]
fn each_setting_is_refused_with_what_to_set_or_used_and_reported() {
    let system = HugePageSystem::read();
    for huge in [HugePages::Transparent, HugePages::Hugetlb] {
        let c = config(huge);
        match system.check(huge, HEAP, None) {
            Err(expected) => {
                eprintln!(
                    "{huge}: the system does not allow it here ({expected}); checking the refusal"
                );
                let up_front = check_huge_pages(std::slice::from_ref(&c)).unwrap_err();
                let run = run_workload(&c).unwrap_err();
                for e in [&up_front, &run] {
                    assert!(e.contains(&expected.to_string()), "{e}");
                    match huge {
                        HugePages::Transparent => assert!(
                            e.contains("/sys/kernel/mm/transparent_hugepage/")
                                && e.contains("echo advise"),
                            "{e}"
                        ),
                        _ => assert!(e.contains("nr_hugepages"), "{e}"),
                    }
                }
                // The command line says it before any run (nothing written), and exits 2.
                let dir = scratch("huge-pages", huge.name());
                let out = pause_sweep(&[
                    "--heaps",
                    "64M",
                    "--modes",
                    "concurrent",
                    "--duration",
                    "0.2",
                    "--huge-pages",
                    huge.name(),
                    "--quiet",
                    "--out",
                    dir.to_str().unwrap(),
                ]);
                assert_eq!(out.status.code(), Some(2));
                let err = text(&out.stderr);
                assert!(err.contains(&expected.to_string()), "{err}");
                assert!(!dir.exists(), "a refused sweep wrote {}", dir.display());
            }
            Ok(()) => {
                eprintln!("{huge}: the system allows it here; checking a run uses it");
                check_huge_pages(std::slice::from_ref(&c)).unwrap();
                let r = run_workload(&c).unwrap_or_else(|e| panic!("{huge}: {e}"));
                assert!(!r.gc.cycles.is_empty(), "{huge}: no cycle ran");
                let pages = r.pages.expect("a run of ours reads its pages");
                assert_eq!(pages.requested, huge);
                assert!(
                    pages.huge_bytes > 0 && pages.label().starts_with("2 MiB ("),
                    "{huge}: {pages:?}"
                );
                let table = workloads::report::markdown_report(std::slice::from_ref(&r));
                assert!(
                    table.contains(&format!("pages: {}", pages.label())),
                    "{table}"
                );
            }
        }
    }
}

#[test]
fn off_runs_on_small_pages_and_says_so() {
    let r = run_workload(&config(HugePages::Off)).unwrap();
    let pages = r.pages.expect("a run of ours reads its pages");
    assert_eq!(pages.requested, HugePages::Off);
    // shmem_enabled `always` or `force` gives even an unadvised memfd huge pages: then the
    // report must say so, and it does not say 4 KiB.
    let label = pages.label();
    if pages.huge_bytes == 0 {
        assert_eq!(label, "4 KiB");
    } else {
        eprintln!("shmem THP is on for every shmem file here: {label}");
        assert!(label.starts_with("2 MiB"));
    }
    let table = workloads::report::markdown_report(std::slice::from_ref(&r));
    assert!(
        table.contains(&format!("pages: {label} (--huge-pages off)")),
        "{table}"
    );
    let json = workloads::report::json::results_json(std::slice::from_ref(&r));
    assert!(
        json.contains("\"huge_bytes\"") && json.contains(&format!("\"pages\": \"{label}\"")),
        "{json}"
    );
}
