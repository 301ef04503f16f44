//! What a fuzz target's cases reached: a count per outcome class ("ok", "runtime error",
//! "out of memory", "refused: gc_threads", ...), a summary line for the run, and the check
//! that every class the target must reach was reached. A fuzzer whose inputs all end the same
//! way (every program a syntax error, every configuration refused) tests nothing; this makes
//! that a failure instead of a silent pass.

use std::collections::BTreeMap;
use std::time::Duration;

/// Cases per outcome class.
#[derive(Debug, Default)]
pub struct Tally {
    counts: BTreeMap<String, u64>,
}

impl Tally {
    pub fn new() -> Tally {
        Tally::default()
    }

    /// Count one case that ended as `class`.
    pub fn add(&mut self, class: &str) {
        *self.counts.entry(class.to_string()).or_default() += 1;
    }

    /// Cases counted in all.
    pub fn total(&self) -> u64 {
        self.counts.values().sum()
    }

    /// Cases that ended as `class`.
    pub fn get(&self, class: &str) -> u64 {
        self.counts.get(class).copied().unwrap_or(0)
    }

    /// Cases whose class starts with `prefix`.
    pub fn with_prefix(&self, prefix: &str) -> u64 {
        self.counts
            .iter()
            .filter(|(k, _)| k.starts_with(prefix))
            .map(|(_, v)| v)
            .sum()
    }

    /// One line: `<target>: N cases in S s: class n, class n, ...`.
    pub fn summary(&self, target: &str, elapsed: Duration) -> String {
        let classes: Vec<String> = self
            .counts
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        format!(
            "{target}: {} cases in {:.1} s: {}",
            self.total(),
            elapsed.as_secs_f64(),
            classes.join(", ")
        )
    }

    /// Fail unless every class whose name starts with one of `prefixes` was reached (unless
    /// the run is too small to ask it: fewer than `min_cases` cases, e.g. a one-seed replay).
    ///
    /// # Panics
    /// Naming the classes never reached and what was reached instead.
    pub fn require(&self, target: &str, prefixes: &[&str], min_cases: u64) {
        if self.total() < min_cases {
            return;
        }
        let missing: Vec<&str> = prefixes
            .iter()
            .copied()
            .filter(|p| self.with_prefix(p) == 0)
            .collect();
        assert!(
            missing.is_empty(),
            "{target}: no case reached {missing:?}; reached {:?}: the generator no longer \
             covers what it must",
            self.counts
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_requirements() {
        let mut t = Tally::new();
        t.add("ok");
        t.add("ok");
        t.add("refused: gc_threads");
        assert_eq!(
            (t.total(), t.get("ok"), t.with_prefix("refused")),
            (3, 2, 1)
        );
        t.require("t", &["ok", "refused"], 3);
        t.require("t", &["never"], 4);
        let missing = std::panic::catch_unwind(|| t.require("t", &["ok", "never"], 1));
        assert!(missing.is_err());
        assert_eq!(
            t.summary("t", Duration::from_secs(1)),
            "t: 3 cases in 1.0 s: ok 2, refused: gc_threads 1"
        );
    }
}
