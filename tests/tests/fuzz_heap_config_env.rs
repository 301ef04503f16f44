//! Fuzz target of the environment overrides `HeapConfig::from_env` reads (`ZRS_GC_LOG`,
//! `ZRS_GC_THREADS`, `ZRS_PACING_QUANTUM`, `ZRS_PACING_MAX_DELAY_US`,
//! `ZRS_PACING_MIN_MUTATOR_SHARE`, `ZRS_PACING_WINDOW_US`, `ZRS_HUGE_PAGES`,
//! `ZRS_MEMBARRIER`): random values —
//! numbers at the edges of each range and past `u64::MAX`, signs, units, spaces, empty
//! strings, non-ASCII text — set in random combinations. Each case checks the result against
//! what the variables say: a malformed value is an `EnvError` naming that variable; a
//! well-formed one lands in the configuration; and `Heap::new` then either creates the heap
//! or refuses an out-of-range value as `InvalidSetting` naming its setting, or huge pages the
//! system does not allow (as the system's own check says). Never a panic.
//!
//! Alone in its test binary: the environment is process-global, and this target sets it.

use gc_runtime::{HeapConfig, HeapError, Mode, ENV_VARS};
use integration_tests::fuzz::{Budget, Rng, Tally};

const FILE: &str = "fuzz_heap_config_env";
const TEST: &str = "environment_overrides";

fn value(rng: &mut Rng, var: &str) -> String {
    const COMMON: &[&str] = &[
        "",
        " ",
        "0",
        "1",
        "-1",
        "+1",
        "1.5",
        "18446744073709551615",
        "18446744073709551616",
        "99999999999999999999",
        "\u{e9}",
        "0x10",
        "1_000",
        " 2 ",
    ];
    let own: &[&str] = match var {
        "ZRS_GC_LOG" => &[
            "off", "gc", "info", "debug", "trace", "GC", "phases", "bogus",
        ],
        "ZRS_GC_THREADS" => &["2", "1024", "1025", "4294967296"],
        "ZRS_MEMBARRIER" => &["on", "off", "OFF", " on ", "auto", "yes"],
        "ZRS_HUGE_PAGES" => &[
            "off",
            "OFF",
            "transparent",
            "hugetlb",
            " hugetlb ",
            "thp",
            "on",
        ],
        "ZRS_PACING_QUANTUM" => &[
            "4k", "4K", "4095", "64m", "64M", "65m", "256KiB", "1T", "3x",
        ],
        "ZRS_PACING_MIN_MUTATOR_SHARE" => &[
            "0", "0.5", "0.99", "1", "-0.25", "NaN", "inf", "1e-3", "half",
        ],
        _ => &["1", "1000", "1000000", "1000001", "18446744073709551"],
    };
    if rng.chance(500) {
        rng.pick(own).to_string()
    } else if rng.chance(300) {
        rng.wide().to_string()
    } else {
        rng.pick(COMMON).to_string()
    }
}

fn case(rng: &mut Rng) -> String {
    let mut set = Vec::new();
    for var in ENV_VARS {
        if rng.chance(600) {
            let v = value(rng, var);
            std::env::set_var(var, &v);
            set.push((var, v));
        } else {
            std::env::remove_var(var);
        }
    }
    let result = HeapConfig::from_env(16 << 20);
    let config = match result {
        Err(e) => {
            let named = set.iter().find(|(k, _)| *k == e.variable);
            let Some((_, v)) = named else {
                panic!("{e} names a variable that is not set ({set:?})")
            };
            assert_eq!(&e.value, v, "{e}");
            assert!(!e.accepted.is_empty() && e.to_string().contains(e.variable));
            return format!("malformed: {}", e.variable);
        }
        Ok(c) => c,
    };
    for (var, v) in &set {
        let t = v.trim();
        match *var {
            "ZRS_GC_THREADS" if !t.is_empty() => {
                assert_eq!(Ok(config.gc_threads), t.parse::<usize>(), "{var}={v:?}")
            }
            "ZRS_PACING_QUANTUM" if !t.is_empty() => {
                assert_eq!(
                    Ok(config.pacing.quantum),
                    gc_runtime::parse_size(t),
                    "{var}={v:?}"
                )
            }
            "ZRS_MEMBARRIER" if !t.is_empty() => {
                assert_eq!(
                    config.membarrier,
                    t.eq_ignore_ascii_case("on"),
                    "{var}={v:?}"
                )
            }
            "ZRS_HUGE_PAGES" if !t.is_empty() => assert_eq!(
                Ok(config.memory.huge_pages),
                t.parse::<gc_runtime::HugePages>(),
                "{var}={v:?}"
            ),
            "ZRS_PACING_MAX_DELAY_US" if !t.is_empty() => assert_eq!(
                Ok(config.pacing.max_delay.as_micros() as u64),
                t.parse::<u64>(),
                "{var}={v:?}"
            ),
            "ZRS_PACING_WINDOW_US" if !t.is_empty() => assert_eq!(
                Ok(config.pacing.window.as_micros() as u64),
                t.parse::<u64>(),
                "{var}={v:?}"
            ),
            "ZRS_PACING_MIN_MUTATOR_SHARE" if !t.is_empty() => {
                let want = t
                    .parse::<f64>()
                    .expect("parsed, since from_env accepted it");
                let got = config.pacing.min_mutator_share;
                assert!(
                    got == want || (got.is_nan() && want.is_nan()),
                    "{var}={v:?}"
                )
            }
            _ => {}
        }
    }
    // Keep the heaps that can be created small: at most 8 GC threads.
    if config.gc_threads > 8 {
        return match config.validate() {
            Err(HeapError::InvalidSetting { setting, .. }) => format!("refused: {setting}"),
            Err(
                HeapError::TransparentHugePagesRefused { .. }
                | HeapError::HugePagesUnavailable { .. },
            ) => "refused: huge pages".to_string(),
            Err(e) => panic!("a geometry error for a 16m heap: {e}"),
            Ok(()) => "parsed: many threads".to_string(),
        };
    }
    let config_huge = config.memory.huge_pages;
    match gc_runtime::Heap::new(config.mode(Mode::Concurrent)) {
        Ok(heap) => {
            let mut m = heap.attach("env").expect("attach");
            m.scope(|s| {
                s.alloc(1, 0, 64).expect("a small object in an empty heap");
                s.collect("fuzz");
            });
            "ok".to_string()
        }
        Err(HeapError::InvalidSetting { setting, problem }) => {
            assert!(!problem.is_empty());
            format!("refused: {setting}")
        }
        Err(
            e @ (HeapError::TransparentHugePagesRefused { .. }
            | HeapError::HugePagesUnavailable { .. }),
        ) => {
            let sys = gc_runtime::HugePageSystem::read();
            assert!(
                sys.check(config_huge, 16 << 20, None).is_err(),
                "{e}, but the system allows {config_huge}"
            );
            "refused: huge pages".to_string()
        }
        Err(e) => panic!("a 16m heap refused for another reason: {e}"),
    }
}

#[test]
fn environment_overrides() {
    let mut budget = Budget::from_env(1500);
    let mut tally = Tally::new();
    while let Some(seed) = budget.next_seed() {
        let class = std::panic::catch_unwind(|| case(&mut Rng::new(seed))).unwrap_or_else(|_| {
            panic!(
                "{TEST}: case {seed:#x} panicked; replay: {}",
                Budget::replay_command(FILE, TEST, seed)
            )
        });
        tally.add(&class);
    }
    for var in ENV_VARS {
        std::env::remove_var(var);
    }
    eprintln!("{}", tally.summary(TEST, budget.elapsed()));
    tally.require(
        TEST,
        &[
            "ok",
            "malformed: ZRS_GC_LOG",
            "malformed: ZRS_GC_THREADS",
            "malformed: ZRS_PACING_QUANTUM",
            "malformed: ZRS_PACING_MAX_DELAY_US",
            "malformed: ZRS_PACING_MIN_MUTATOR_SHARE",
            "malformed: ZRS_PACING_WINDOW_US",
            "malformed: ZRS_HUGE_PAGES",
            "refused: pacing",
        ],
        300,
    );
}
