//! The object layout has one owner: `src/object.rs`.
//!
//! Every Lox object is reference slots plus raw bytes in the collector's heap, and
//! `src/object.rs` declares where each field lives. This test scans the interpreter's other
//! sources and fails if one of them reads or writes an object's raw bytes itself (a call of
//! `read_u64`, `write_u64`, `read_f64`, `write_f64`, `read_bytes` or `write_bytes`, whatever
//! its offset) or names a reference slot by a literal number (`o.load(0)`, `s.store(x, 1, v)`)
//! instead of through the named accessors and slot constants of `src/object.rs`. A second test
//! plants such code in a copy of a source to show that the scan finds it.

use std::path::{Path, PathBuf};

/// The raw-byte accessors of `ObjRef`, which only `src/object.rs` may call.
const RAW_ACCESSORS: [&str; 6] = [
    "read_u64",
    "write_u64",
    "read_f64",
    "write_f64",
    "read_bytes",
    "write_bytes",
];

/// The slot accessors of `ObjRef` (`load(i)`, `store(i, v)`) and `Scope` (`load(obj, i)`,
/// `store(obj, i, v)`), whose slot index must be a name, not a literal.
const SLOT_ACCESSORS: [&str; 2] = ["load", "store"];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a source directory") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The source with every `//` comment blanked (so that documentation may name the accessors),
/// keeping line numbers.
fn without_comments(text: &str) -> String {
    text.lines()
        .map(|line| match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The top-level arguments of the call whose `(` is at `open`, trimmed (`None` if the
/// parenthesis never closes).
fn call_arguments(text: &str, open: usize) -> Option<Vec<&str>> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut start = open + 1;
    let mut args = Vec::new();
    for (i, &b) in bytes.iter().enumerate().skip(open) {
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth -= 1;
                if depth == 0 {
                    args.push(text[start..i].trim());
                    return Some(args);
                }
            }
            b',' if depth == 1 => {
                args.push(text[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    None
}

/// Whether a slot argument is, or starts with, a number (`0`, `1usize`, `2 + i`).
fn is_literal_index(arg: &str) -> bool {
    arg.starts_with(|c: char| c.is_ascii_digit())
}

/// Every method call `.name(` in `text`: the line number and the offset of its `(`.
fn method_calls(text: &str, name: &str) -> Vec<(usize, usize)> {
    let pattern = format!(".{name}(");
    text.match_indices(&pattern)
        .map(|(at, _)| {
            let line = text[..at].matches('\n').count() + 1;
            (line, at + pattern.len() - 1)
        })
        .collect()
}

/// The raw-byte accesses and literal slot indices in one source file, as `file:line: what`.
fn violations(file: &str, text: &str) -> Vec<String> {
    let text = without_comments(text);
    let mut found = Vec::new();
    for name in RAW_ACCESSORS {
        for (line, _) in method_calls(&text, name) {
            found.push(format!("{file}:{line}: raw access `.{name}(`"));
        }
    }
    for name in SLOT_ACCESSORS {
        for (line, open) in method_calls(&text, name) {
            let Some(args) = call_arguments(&text, open) else {
                continue;
            };
            // `o.load(i)` / `o.store(i, v)`: the slot is the first argument;
            // `s.load(obj, i)` / `s.store(obj, i, v)`: the second.
            let slot = match (name, args.len()) {
                ("load", 1) | ("store", 2) => args[0],
                ("load", 2) | ("store", 3) => args[1],
                _ => continue,
            };
            if is_literal_index(slot) {
                found.push(format!(
                    "{file}:{line}: literal slot `.{name}(.. {slot} ..)`"
                ));
            }
        }
    }
    found
}

fn sources() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let name = path.strip_prefix(root).unwrap().display().to_string();
            let text = std::fs::read_to_string(&path).expect("a readable source");
            (name, text)
        })
        .collect()
}

const OWNER: &str = "src/object.rs";

#[test]
fn only_object_rs_knows_raw_offsets_and_slot_numbers() {
    let sources = sources();
    assert!(
        sources.len() >= 15 && sources.iter().any(|(name, _)| name == OWNER),
        "the scan found {} files: it is broken",
        sources.len()
    );
    let mut found = Vec::new();
    for (name, text) in &sources {
        let v = violations(name, text);
        if name == OWNER {
            // The owner itself is where the raw accesses are: the scan must see them, or it
            // would pass on anything.
            assert!(
                v.len() >= 10,
                "the scan sees only {} raw accesses in {OWNER}: it is broken",
                v.len()
            );
        } else {
            found.extend(v);
        }
    }
    assert!(
        found.is_empty(),
        "object fields accessed by raw offset or literal slot outside {OWNER} (add a named \
         accessor or slot constant there):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_scan_finds_planted_offsets_and_slots() {
    let (name, text) = sources()
        .into_iter()
        .find(|(name, _)| name == "src/vm/fast.rs")
        .expect("src/vm/fast.rs");
    assert!(violations(&name, &text).is_empty());
    for plant in [
        "let tag = up.read_u64(0);",
        "st.set(up.read_u64(8) as usize, raw, r);",
        "o.write_u64(\n    0,\n    hash,\n);",
        "let id = callee.read_u64(CLOSURE_CODE) as u32;",
        "f.read_bytes(16 + at, &mut out);",
        "o.write_bytes(0, &header);",
        "n.write_f64(0, 1.5);",
        "let name = native.load(0);",
        "up.store(1, None);",
        "s.store(native, 0, Some(name));",
        "let c = s.load(instance, 1);",
    ] {
        let planted = text.replacen("use std::io::Write;", &format!("{plant}\n"), 1);
        assert_ne!(planted, text, "the plant went in");
        assert_eq!(
            violations(&name, &planted).len(),
            1,
            "the scan misses `{plant}`"
        );
    }
    // Named slots, atomics and comments are not violations.
    for fine in [
        "let f = o.load(CLOSURE_FUNCTION);",
        "s.store(class, CLASS_METHODS, Some(methods));",
        "t.load(cap + i)",
        "flag.load(Ordering::Acquire);",
        "flag.store(true, Ordering::Release);",
        "// o.read_u64(8) in a comment",
    ] {
        let planted = text.replacen("use std::io::Write;", &format!("{fine}\n"), 1);
        assert!(
            violations(&name, &planted).is_empty(),
            "the scan flags `{fine}`"
        );
    }
}
