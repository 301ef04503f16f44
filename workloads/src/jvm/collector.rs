//! The HotSpot collectors `pause-sweep --jvm` can run the Java twins under, and what one JVM
//! run of a sweep is ([`JvmSpec`], a run's `RunConfig::jvm`): which collector, which JDK, every
//! option given to `java`. The JVM's counterpart of this project's `Mode`: ZGC (the collector
//! this project is built after, non-generational: one heap, every cycle marks and compacts
//! all of it, with three short pauses), generational ZGC (a young and an old generation, each
//! collected the same way), G1 (regions evacuated in stop-the-world pauses, marking
//! concurrent), Parallel and Serial (every collection stops the world).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::PathBuf;

/// A HotSpot collector, by the name `--jvm` takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum JvmCollector {
    /// Non-generational ZGC (`-XX:+UseZGC`; `-XX:-ZGenerational` on JDK 21–23; gone in 24).
    #[serde(rename = "ZGC")]
    Zgc,
    /// Generational ZGC (JDK 21 and later; `-XX:+ZGenerational` on 21–23).
    #[serde(rename = "GenZGC")]
    GenZgc,
    /// G1, the default collector (`-XX:+UseG1GC`).
    G1,
    /// The parallel (throughput) collector (`-XX:+UseParallelGC`).
    Parallel,
    /// The serial collector (`-XX:+UseSerialGC`).
    Serial,
}

impl JvmCollector {
    /// Every collector, in the order the help lists them.
    pub const ALL: [JvmCollector; 5] = [
        JvmCollector::Zgc,
        JvmCollector::GenZgc,
        JvmCollector::G1,
        JvmCollector::Parallel,
        JvmCollector::Serial,
    ];

    /// The name `--jvm` takes and the tables show.
    pub fn name(self) -> &'static str {
        match self {
            JvmCollector::Zgc => "ZGC",
            JvmCollector::GenZgc => "GenZGC",
            JvmCollector::G1 => "G1",
            JvmCollector::Parallel => "Parallel",
            JvmCollector::Serial => "Serial",
        }
    }

    /// The options that select this collector on a JDK of feature release `major`, or why
    /// that JDK does not have it.
    pub fn flags(self, major: u32) -> Result<Vec<String>, String> {
        let v = |flags: &[&str]| Ok(flags.iter().map(|f| f.to_string()).collect());
        match self {
            JvmCollector::Zgc => match major {
                ..=10 => Err("ZGC appeared in JDK 11".into()),
                11..=14 => v(&["-XX:+UnlockExperimentalVMOptions", "-XX:+UseZGC"]),
                15..=20 => v(&["-XX:+UseZGC"]),
                21..=23 => v(&["-XX:+UseZGC", "-XX:-ZGenerational"]),
                _ => Err("JDK 24 removed non-generational ZGC; GenZGC is its ZGC".into()),
            },
            JvmCollector::GenZgc => match major {
                ..=20 => Err("generational ZGC appeared in JDK 21".into()),
                21..=23 => v(&["-XX:+UseZGC", "-XX:+ZGenerational"]),
                _ => v(&["-XX:+UseZGC"]),
            },
            JvmCollector::G1 => v(&["-XX:+UseG1GC"]),
            JvmCollector::Parallel => v(&["-XX:+UseParallelGC"]),
            JvmCollector::Serial => v(&["-XX:+UseSerialGC"]),
        }
    }

    /// The collectors a JDK of feature release `major` has.
    pub fn available(major: u32) -> Vec<JvmCollector> {
        Self::ALL
            .into_iter()
            .filter(|c| c.flags(major).is_ok())
            .collect()
    }

    /// Whether the collector works concurrently with the program (ZGC's two kinds): the
    /// `Mode` its rows stand nearest to. G1's marking is concurrent too, but its collections
    /// copy with the world stopped, as Parallel's and Serial's do.
    pub fn is_concurrent(self) -> bool {
        matches!(self, JvmCollector::Zgc | JvmCollector::GenZgc)
    }

    /// Bytes of a reference field in the heap: 8 for ZGC (no compressed oops), else 4 below
    /// 32 GiB, where HotSpot compresses them by default.
    pub fn reference_bytes(self, heap_bytes: u64) -> u32 {
        if self.is_concurrent() || heap_bytes >= 32 << 30 {
            8
        } else {
            4
        }
    }
}

impl fmt::Display for JvmCollector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for JvmCollector {
    type Err = String;

    /// A collector by name, in any case.
    fn from_str(s: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|c| c.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| {
                let names: Vec<&str> = Self::ALL.iter().map(|c| c.name()).collect();
                format!(
                    "unknown HotSpot collector '{s}': choose from {}",
                    names.join(", ")
                )
            })
    }
}

/// One JVM run of a sweep: the collector, the JDK, and the whole `java` command line but the
/// twin's own arguments.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JvmSpec {
    pub collector: JvmCollector,
    /// The JDK's feature release (17, 21, 25, ...).
    pub major: u32,
    /// The JDK's full version (`java.runtime.version`, e.g. `17.0.15+6-Debian-1deb12u1`).
    pub version: String,
    /// The `java` launcher.
    pub java: PathBuf,
    /// Every JVM option, in order: heap size, collector, GC threads, logging.
    pub flags: Vec<String>,
    /// The GC log the run writes (`-Xlog:gc*,safepoint`), kept next to the results.
    pub log: PathBuf,
    /// Where the twins' classes are (compiled by this JDK's `javac`).
    pub classes: PathBuf,
}

impl JvmSpec {
    /// `JDK 17 ZGC`: the name of the run's series in tables and plots.
    pub fn series(&self) -> String {
        format!("JDK {} {}", self.major, self.collector)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_follow_the_jdk_release() {
        let f = |c: JvmCollector, major| c.flags(major).map(|v| v.join(" "));
        assert_eq!(f(JvmCollector::Zgc, 17).unwrap(), "-XX:+UseZGC");
        assert_eq!(
            f(JvmCollector::Zgc, 21).unwrap(),
            "-XX:+UseZGC -XX:-ZGenerational"
        );
        assert!(f(JvmCollector::Zgc, 25).unwrap_err().contains("GenZGC"));
        assert!(f(JvmCollector::GenZgc, 17).unwrap_err().contains("JDK 21"));
        assert_eq!(
            f(JvmCollector::GenZgc, 22).unwrap(),
            "-XX:+UseZGC -XX:+ZGenerational"
        );
        assert_eq!(f(JvmCollector::GenZgc, 25).unwrap(), "-XX:+UseZGC");
        assert_eq!(f(JvmCollector::G1, 25).unwrap(), "-XX:+UseG1GC");
        use JvmCollector::*;
        assert_eq!(JvmCollector::available(17), [Zgc, G1, Parallel, Serial]);
        assert_eq!(JvmCollector::available(21), JvmCollector::ALL);
        assert_eq!(JvmCollector::available(25), [GenZgc, G1, Parallel, Serial]);
    }

    #[test]
    fn names_parse_in_any_case() {
        for c in JvmCollector::ALL {
            assert_eq!(c.name().parse::<JvmCollector>().unwrap(), c);
            assert_eq!(c.name().to_lowercase().parse::<JvmCollector>().unwrap(), c);
            assert_eq!(serde_json::to_value(c).unwrap(), c.name());
        }
        let e = "Shenandoah".parse::<JvmCollector>().unwrap_err();
        assert!(e.contains("ZGC, GenZGC, G1, Parallel, Serial"), "{e}");
    }
}
