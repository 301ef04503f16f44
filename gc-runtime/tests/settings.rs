//! Every numeric setting of `HeapConfig` (and of its director and pacing parts) has a range,
//! and `Heap::new` refuses a value outside it with `HeapError::InvalidSetting` naming the
//! setting, instead of accepting it and failing later: a `handle_capacity` whose mapping size
//! wrapped let pushes write past the mapping (SIGSEGV from safe code); `gc_threads:
//! usize::MAX` aborted the process at the first cycle (`capacity overflow` in marking); a zero
//! director `interval` spun the driver; an `uncommit_delay` near `Duration::MAX` overflowed
//! the uncommitter's arithmetic. A collected heap too small to run (its relocation reserve
//! leaving mutators fewer than two small pages) is refused up front with the minimum, where
//! it used to fail at random depending on when the first cycle started.

use gc_runtime::{Heap, HeapConfig, HeapError, Mode};
use std::time::Duration;

const MIB: u64 = 1 << 20;

/// One out-of-range value: what it changes in a default config, the setting the error must
/// name.
struct Case {
    setting: &'static str,
    what: &'static str,
    apply: fn(&mut HeapConfig),
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            setting: "handle_capacity",
            what: "0",
            apply: |c| c.handle_capacity = 0,
        },
        Case {
            setting: "handle_capacity",
            what: "usize::MAX (its mapping size wraps)",
            apply: |c| c.handle_capacity = usize::MAX,
        },
        Case {
            setting: "handle_capacity",
            what: "2^61 + 1 (8 bytes each wraps to 8)",
            apply: |c| c.handle_capacity = (1 << 61) + 1,
        },
        Case {
            setting: "gc_threads",
            what: "0",
            apply: |c| c.gc_threads = 0,
        },
        Case {
            setting: "gc_threads",
            what: "usize::MAX",
            apply: |c| c.gc_threads = usize::MAX,
        },
        Case {
            setting: "gc_threads",
            what: "one past the maximum",
            apply: |c| c.gc_threads = HeapConfig::GC_THREADS_RANGE.1 + 1,
        },
        Case {
            setting: "director_interval",
            what: "0",
            apply: |c| c.director.interval = Duration::ZERO,
        },
        Case {
            setting: "director_interval",
            what: "an hour",
            apply: |c| c.director.interval = Duration::from_secs(3600),
        },
        Case {
            setting: "timer",
            what: "0",
            apply: |c| c.director.timer = Some(Duration::ZERO),
        },
        Case {
            setting: "timer",
            what: "below the director interval",
            apply: |c| c.director.timer = Some(Duration::from_millis(5)),
        },
        Case {
            setting: "uncommit_delay",
            what: "Duration::MAX",
            apply: |c| c.uncommit_delay = Some(Duration::MAX),
        },
        Case {
            setting: "pacing_max_delay",
            what: "0",
            apply: |c| c.pacing.max_delay = Duration::ZERO,
        },
        Case {
            setting: "pacing_quantum",
            what: "u64::MAX",
            apply: |c| c.pacing.quantum = u64::MAX,
        },
        Case {
            setting: "pacing_duration_margin",
            what: "NaN",
            apply: |c| c.pacing.duration_margin = f64::NAN,
        },
        Case {
            setting: "pacing_duration_margin",
            what: "infinity",
            apply: |c| c.pacing.duration_margin = f64::INFINITY,
        },
        Case {
            setting: "max_direct_memory",
            what: "0",
            apply: |c| c.max_direct_memory = Some(0),
        },
        Case {
            setting: "relocation_reserve",
            what: "u64::MAX",
            apply: |c| c.relocation_reserve = Some(u64::MAX),
        },
    ]
}

#[test]
fn the_defaults_pass() {
    for mode in Mode::ALL {
        let c = HeapConfig::new(64 * MIB).mode(mode);
        c.validate().unwrap();
        let h = Heap::new(c).unwrap();
        let mut m = h.attach("main").unwrap();
        m.scope(|s| {
            s.alloc(1, 0, 16).unwrap();
        });
    }
}

#[test]
fn each_out_of_range_setting_is_refused_naming_it() {
    for case in cases() {
        let mut c = HeapConfig::new(64 * MIB);
        (case.apply)(&mut c);
        let from_validate = c.validate();
        let Err(e) = Heap::new(c) else {
            panic!("{} = {} was accepted by Heap::new", case.setting, case.what);
        };
        let msg = e.to_string();
        match &e {
            HeapError::InvalidSetting { setting, .. } => assert_eq!(
                *setting, case.setting,
                "{} = {}: wrong setting named: {msg}",
                case.setting, case.what
            ),
            other => panic!(
                "{} = {}: not InvalidSetting: {other:?}",
                case.setting, case.what
            ),
        }
        assert!(
            msg.contains(case.setting) && msg.contains("give"),
            "{} = {}: the message must name the setting and say what to give: {msg}",
            case.setting,
            case.what
        );
        assert!(
            from_validate.is_err(),
            "{} = {}: validate() accepted what Heap::new refuses",
            case.setting,
            case.what
        );
    }
}

/// The boundaries of each documented range are accepted.
#[test]
fn the_ends_of_each_range_pass() {
    let (tlo, thi) = HeapConfig::GC_THREADS_RANGE;
    let (hlo, hhi) = HeapConfig::HANDLE_CAPACITY_RANGE;
    let (ilo, ihi) = gc_runtime::DirectorConfig::INTERVAL_RANGE;
    let edits: [fn(&mut HeapConfig); 7] = [
        |c| c.gc_threads = HeapConfig::GC_THREADS_RANGE.0,
        |c| c.gc_threads = HeapConfig::GC_THREADS_RANGE.1,
        |c| c.handle_capacity = HeapConfig::HANDLE_CAPACITY_RANGE.0,
        |c| c.handle_capacity = HeapConfig::HANDLE_CAPACITY_RANGE.1,
        |c| c.director.interval = gc_runtime::DirectorConfig::INTERVAL_RANGE.0,
        |c| c.director.interval = gc_runtime::DirectorConfig::INTERVAL_RANGE.1,
        |c| c.uncommit_delay = Some(HeapConfig::MAX_UNCOMMIT_DELAY),
    ];
    assert!(tlo >= 1 && thi >= tlo && hlo >= 1 && hhi >= hlo && ilo > Duration::ZERO);
    assert!(ihi >= ilo);
    for edit in edits {
        let mut c = HeapConfig::new(64 * MIB);
        edit(&mut c);
        c.validate().unwrap();
    }
}

/// The largest handle capacity maps and works: handles are pushed and read back (the
/// mapping is `NORESERVE`, so its size costs address space only).
#[test]
fn the_largest_handle_capacity_attaches() {
    let mut c = HeapConfig::new(64 * MIB);
    c.handle_capacity = HeapConfig::HANDLE_CAPACITY_RANGE.1;
    let h = Heap::new(c).unwrap();
    let mut m = h.attach("main").unwrap();
    m.scope(|s| {
        let a = s.alloc(1, 0, 8).unwrap();
        for _ in 0..10_000 {
            let b = s.alloc(1, 0, 8).unwrap();
            s.get(b).write_u64(0, 7);
        }
        s.get(a).write_u64(0, 42);
        assert_eq!(s.get(a).read_u64(0), 42);
    });
}

/// A `concurrent` or `stw` heap whose relocation reserve leaves mutators fewer than two small
/// pages (the one a cycle leaves its survivors on and one to allocate in) is refused, naming
/// the minimum; `epsilon` keeps no reserve and runs in one page.
#[test]
fn a_collected_heap_too_small_to_run_is_refused_with_the_minimum() {
    for mode in [Mode::Concurrent, Mode::Stw] {
        for heap in [2 * MIB, 4 * MIB] {
            let Err(e) = Heap::new(HeapConfig::new(heap).mode(mode)) else {
                panic!("a {mode} heap of {heap} bytes was accepted");
            };
            let msg = e.to_string();
            assert!(
                matches!(
                    e,
                    HeapError::InvalidSetting {
                        setting: "max_heap",
                        ..
                    }
                ) && msg.contains("at least 6M"),
                "{mode} {heap}: {msg}"
            );
        }
        Heap::new(HeapConfig::new(gc_runtime::MIN_COLLECTED_HEAP).mode(mode)).unwrap();
        // A reserve given in code counts too: 6 MiB less a 3 MiB reserve is under two pages,
        // 8 MiB less 4 MiB is two.
        let Err(e) = Heap::new(
            HeapConfig::new(6 * MIB)
                .mode(mode)
                .relocation_reserve(3 * MIB),
        ) else {
            panic!("a {mode} heap of 6 MiB with a 3 MiB reserve was accepted");
        };
        assert!(
            matches!(
                e,
                HeapError::InvalidSetting {
                    setting: "max_heap",
                    ..
                }
            ),
            "{e}"
        );
        Heap::new(
            HeapConfig::new(8 * MIB)
                .mode(mode)
                .relocation_reserve(4 * MIB),
        )
        .unwrap();
    }
    assert_eq!(gc_runtime::MIN_COLLECTED_HEAP, 6 * MIB);
    Heap::new(HeapConfig::new(2 * MIB).mode(Mode::Epsilon)).unwrap();
}
