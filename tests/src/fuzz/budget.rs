//! How many cases a fuzz target runs, and with which seeds: a fixed default case count per
//! target (so that `cargo test` and CI stay bounded), `ZRS_FUZZ_CASES` for another count,
//! `ZRS_FUZZ_SECS` for a time budget instead (the target runs until it is spent), and
//! `ZRS_FUZZ_SEED` to replay one case: the seed a failure printed. A malformed value of any of
//! the three is an error naming the variable and what it accepts, not a silent default.
//!
//! Case seeds come from a base seed (from the clock, so every run tries new inputs) through
//! [`splitmix`]; the failure message of a case names its own seed, which replays it alone.

use super::rng::splitmix;
use std::time::{Duration, Instant};

/// Run this many cases instead of the target's default.
pub const CASES_ENV: &str = "ZRS_FUZZ_CASES";
/// Run for this many seconds instead (fractions allowed); with [`CASES_ENV`] too, stop at
/// whichever comes first.
pub const SECS_ENV: &str = "ZRS_FUZZ_SECS";
/// Replay the one case with this seed (decimal or `0x` hex).
pub const SEED_ENV: &str = "ZRS_FUZZ_SEED";

/// The longest time budget accepted: a day.
const MAX_SECS: f64 = 24.0 * 3600.0;

/// A fuzz target's case budget and seeds.
#[derive(Debug)]
pub struct Budget {
    cases: Option<u64>,
    time: Option<Duration>,
    replay: Option<u64>,
    base: u64,
    started: Instant,
    issued: u64,
}

impl Budget {
    /// The budget the environment asks for, `default_cases` if it asks for none.
    ///
    /// # Panics
    /// With the variable's name and what it accepts, if one of them is malformed.
    pub fn from_env(default_cases: u64) -> Budget {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        Budget::parse(
            var(CASES_ENV).as_deref(),
            var(SECS_ENV).as_deref(),
            var(SEED_ENV).as_deref(),
            default_cases,
        )
        .unwrap_or_else(|e| panic!("{e}"))
    }

    /// The budget for these values of [`CASES_ENV`], [`SECS_ENV`] and [`SEED_ENV`].
    ///
    /// # Errors
    /// A message naming the malformed variable and what it accepts.
    pub fn parse(
        cases: Option<&str>,
        secs: Option<&str>,
        seed: Option<&str>,
        default_cases: u64,
    ) -> Result<Budget, String> {
        let cases = cases
            .map(|v| match v.trim().parse::<u64>() {
                Ok(n) if n >= 1 => Ok(n),
                _ => Err(format!(
                    "{CASES_ENV}={v:?} is not valid: give a whole number of cases, 1 or more"
                )),
            })
            .transpose()?;
        let time = secs
            .map(|v| match v.trim().parse::<f64>() {
                Ok(s) if s.is_finite() && s > 0.0 && s <= MAX_SECS => {
                    Ok(Duration::from_secs_f64(s))
                }
                _ => Err(format!(
                    "{SECS_ENV}={v:?} is not valid: give a number of seconds above 0 and at most \
                     a day (86400), e.g. 60 or 0.5"
                )),
            })
            .transpose()?;
        let replay = seed
            .map(|v| {
                let t = v.trim();
                let parsed = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
                    Some(h) => u64::from_str_radix(h, 16),
                    None => t.parse(),
                };
                parsed.map_err(|_| {
                    format!(
                        "{SEED_ENV}={v:?} is not valid: give the seed a failure printed, decimal \
                         or 0x hex"
                    )
                })
            })
            .transpose()?;
        let cases = match (cases, time) {
            (None, None) => Some(default_cases.max(1)),
            (c, _) => c,
        };
        let clock = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        Ok(Budget {
            cases,
            time,
            replay,
            base: splitmix(clock ^ u64::from(std::process::id()).rotate_left(32)),
            started: Instant::now(),
            issued: 0,
        })
    }

    /// The seed of the next case, or `None` once the budget is spent. A replay has one case.
    pub fn next_seed(&mut self) -> Option<u64> {
        if let Some(seed) = self.replay {
            return (std::mem::replace(&mut self.issued, 1) == 0).then_some(seed);
        }
        if self.cases.is_some_and(|n| self.issued >= n)
            || self.time.is_some_and(|t| self.started.elapsed() >= t)
        {
            return None;
        }
        self.issued += 1;
        Some(splitmix(self.base.wrapping_add(self.issued)))
    }

    /// Up to `n` more seeds (fewer once the budget is spent).
    pub fn next_seeds(&mut self, n: usize) -> Vec<u64> {
        std::iter::from_fn(|| self.next_seed()).take(n).collect()
    }

    /// True when replaying one seed.
    pub fn is_replay(&self) -> bool {
        self.replay.is_some()
    }

    /// Cases issued so far.
    pub fn issued(&self) -> u64 {
        self.issued
    }

    /// Time since the budget was made.
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// The command that replays the case with `seed` of test `test` in test file `file`.
    pub fn replay_command(file: &str, test: &str, seed: u64) -> String {
        format!(
            "{SEED_ENV}={seed:#x} cargo test -p integration-tests --release --test {file} -- \
             --exact {test}"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_count_time_and_replay() {
        let mut b = Budget::parse(None, None, None, 3).unwrap();
        let seeds = b.next_seeds(10);
        assert_eq!(seeds.len(), 3);
        assert!(seeds[0] != seeds[1] && seeds[1] != seeds[2]);
        let mut b = Budget::parse(Some(" 5 "), None, None, 3).unwrap();
        assert_eq!(b.next_seeds(10).len(), 5);
        let mut b = Budget::parse(None, None, Some("0x2a"), 3).unwrap();
        assert_eq!(b.next_seeds(10), vec![42]);
        assert!(b.is_replay());
        let mut b = Budget::parse(None, Some("0.05"), None, 3).unwrap();
        let n = std::iter::from_fn(|| b.next_seed())
            .take(100_000_000)
            .count();
        assert!(n > 3 && b.elapsed() >= Duration::from_millis(50), "{n}");
    }

    #[test]
    fn malformed_values_name_the_variable() {
        for (cases, secs, seed, var) in [
            (Some("0"), None, None, CASES_ENV),
            (Some("-1"), None, None, CASES_ENV),
            (Some("many"), None, None, CASES_ENV),
            (None, Some("0"), None, SECS_ENV),
            (None, Some("NaN"), None, SECS_ENV),
            (None, Some("inf"), None, SECS_ENV),
            (None, Some("1e9"), None, SECS_ENV),
            (None, None, Some("0xzz"), SEED_ENV),
            (None, None, Some("-3"), SEED_ENV),
        ] {
            let e = Budget::parse(cases, secs, seed, 1).unwrap_err();
            assert!(e.starts_with(var) && e.contains("give"), "{e}");
        }
    }
}
