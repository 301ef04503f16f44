//! The JDK `--jvm` runs the Java twins with: found (`--java`, else `JAVA_HOME`, else `java` on
//! `PATH`), asked its version, and used to compile the twins (`workloads/java/*.java`, built
//! into the binary) with its own `javac` into a temporary directory, all before the first run
//! of a sweep starts, so a missing or unfit JDK stops the sweep at once with a message that
//! says how to get one. Nothing else in the workspace needs Java.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The twins' sources, by file name.
pub const TWIN_SOURCES: [(&str, &str); 3] = [
    ("Twin.java", include_str!("../../java/Twin.java")),
    ("HeapChurn.java", include_str!("../../java/HeapChurn.java")),
    (
        "BinaryTrees.java",
        include_str!("../../java/BinaryTrees.java"),
    ),
];

/// The twins' main class.
pub const TWIN_MAIN: &str = "Twin";

/// How to get a JDK, for the messages that need one.
pub const HOW_TO_GET_A_JDK: &str = "Install a JDK (java and javac, 17 or later), e.g.:
  sudo apt install openjdk-21-jdk-headless     (Debian/Ubuntu; openjdk-17-jdk-headless on older releases)
  pip install install-jdk && python3 -c 'import jdk; print(jdk.install(\"21\"))'     (a JDK from PyPI, no root)
then pass --java <the JDK's directory> or set JAVA_HOME.";

/// A JDK that can run the twins.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Jdk {
    /// The `java` launcher as found (not resolved through links).
    pub java: PathBuf,
    /// `javac`, next to the launcher's real file.
    pub javac: PathBuf,
    /// The feature release (`java.specification.version`: 17, 21, 25, ...).
    pub major: u32,
    /// `java.runtime.version` (`17.0.15+6-Debian-1deb12u1`).
    pub version: String,
}

/// Where the launcher is: `--java` (a JDK directory or its `java`), else `$JAVA_HOME/bin/java`,
/// else `java` on `PATH`; the error says which places were tried and how to get a JDK.
pub fn find_java(given: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(p) = given {
        let java = if p.is_dir() {
            p.join("bin").join("java")
        } else {
            p.to_path_buf()
        };
        if java.is_file() {
            return Ok(java);
        }
        return Err(format!(
            "--jvm needs a JDK, and --java {} is not one (no {}).\n{HOW_TO_GET_A_JDK}",
            p.display(),
            java.display()
        ));
    }
    if let Some(home) = std::env::var_os("JAVA_HOME").filter(|h| !h.is_empty()) {
        let java = Path::new(&home).join("bin").join("java");
        if java.is_file() {
            return Ok(java);
        }
        return Err(format!(
            "--jvm needs a JDK, and JAVA_HOME={} has no bin/java.\n{HOW_TO_GET_A_JDK}",
            Path::new(&home).display()
        ));
    }
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join("java"))
        .find(|j| j.is_file())
        .ok_or_else(|| {
            format!(
                "--jvm needs a JDK, and none was found: no --java, JAVA_HOME is not set and \
                 there is no java on PATH.\n{HOW_TO_GET_A_JDK}"
            )
        })
}

/// A `key = value` line of `-XshowSettings:properties`.
fn property<'a>(settings: &'a str, key: &str) -> Option<&'a str> {
    settings.lines().find_map(|l| {
        let (k, v) = l.trim().split_once(" = ")?;
        (k == key).then_some(v.trim())
    })
}

/// The feature release of a `java.specification.version` (`17`; `1.8` is 8).
fn feature_release(spec: &str) -> Option<u32> {
    let spec = spec.strip_prefix("1.").unwrap_or(spec);
    spec.split('.').next()?.parse().ok()
}

impl Jdk {
    /// The JDK of [`find_java`]`(given)`, its version asked by running it, its `javac` found.
    pub fn locate(given: Option<&Path>) -> Result<Jdk, String> {
        let java = find_java(given)?;
        let out = Command::new(&java)
            .args(["-XshowSettings:properties", "-version"])
            .output()
            .map_err(|e| {
                format!(
                    "cannot run {}: {e}; --jvm needs a working JDK.\n{HOW_TO_GET_A_JDK}",
                    java.display()
                )
            })?;
        let settings = String::from_utf8_lossy(&out.stderr);
        let (Some(spec), Some(version)) = (
            property(&settings, "java.specification.version"),
            property(&settings, "java.runtime.version"),
        ) else {
            return Err(format!(
                "{} -XshowSettings:properties -version printed no java.specification.version \
                 (exit {}): is it a Java launcher?\n{HOW_TO_GET_A_JDK}",
                java.display(),
                out.status
            ));
        };
        let major = feature_release(spec)
            .ok_or_else(|| format!("{}: unreadable Java version {spec}", java.display()))?;
        if major < 17 {
            return Err(format!(
                "{} is Java {major}; the GC logs the parser reads are those of JDK 17 and \
                 later.\n{HOW_TO_GET_A_JDK}",
                java.display()
            ));
        }
        let real = std::fs::canonicalize(&java).unwrap_or_else(|_| java.clone());
        let javac = real.with_file_name("javac");
        if !javac.is_file() {
            return Err(format!(
                "{} (Java {version}) has no javac next to it ({}): a runtime without the \
                 compiler cannot build the Java twins.\n{HOW_TO_GET_A_JDK}",
                java.display(),
                javac.display()
            ));
        }
        Ok(Jdk {
            java,
            javac,
            major,
            version: version.to_string(),
        })
    }

    /// Write the twins' sources under `dir` and compile them with this JDK's `javac`;
    /// returns the directory of the classes.
    pub fn compile_twins(&self, dir: &Path) -> Result<PathBuf, String> {
        let fail = |what: &str, e: &dyn std::fmt::Display| {
            format!("cannot {what} the Java twins in {}: {e}", dir.display())
        };
        let src = dir.join("src");
        let classes = dir.join("classes");
        std::fs::create_dir_all(&src).map_err(|e| fail("write", &e))?;
        std::fs::create_dir_all(&classes).map_err(|e| fail("write", &e))?;
        let mut files = Vec::new();
        for (name, text) in TWIN_SOURCES {
            let f = src.join(name);
            std::fs::write(&f, text).map_err(|e| fail("write", &e))?;
            files.push(f);
        }
        let out = Command::new(&self.javac)
            .arg("-d")
            .arg(&classes)
            .args(&files)
            .output()
            .map_err(|e| fail("compile", &e))?;
        if !out.status.success() {
            return Err(format!(
                "{} could not compile the Java twins ({}):\n{}",
                self.javac.display(),
                out.status,
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        Ok(classes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_read_from_the_settings() {
        let settings =
            "Property settings:\n    java.runtime.version = 17.0.15+6-Debian-1deb12u1\n    \
                        java.specification.version = 17\n";
        assert_eq!(
            property(settings, "java.runtime.version"),
            Some("17.0.15+6-Debian-1deb12u1")
        );
        assert_eq!(property(settings, "java.specification.version"), Some("17"));
        assert_eq!(feature_release("17"), Some(17));
        assert_eq!(feature_release("1.8"), Some(8));
        assert_eq!(feature_release("x"), None);
    }

    #[test]
    fn a_java_that_is_not_there_says_how_to_get_one() {
        let e = find_java(Some(Path::new("/nonexistent"))).unwrap_err();
        assert!(e.contains("--java /nonexistent"), "{e}");
        assert!(e.contains("openjdk-21-jdk-headless"), "{e}");
        assert!(e.contains("pip install install-jdk"), "{e}");
    }
}
