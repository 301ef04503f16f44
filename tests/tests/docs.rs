//! The documentation against the code: every source file the docs name exists, every line
//! of every Rust excerpt in the book is a line of the sources, every type and function the book
//! names in backticks is declared in the sources, and every constant it quotes with its value
//! has that value, so a renamed file, type or function, or a changed constant, cannot leave
//! the book describing code that is not there.
//!
//! Checked: `docs/src/*.md`, `README.md`, `ARCHITECTURE.md`. A file name is a backticked word
//! ending in `.rs`; it may be a bare name (`mark.rs`) or a path (`gc-runtime/src/mark.rs`), and
//! must name a file of the repository. An excerpt line is compared with comments and
//! surrounding space stripped; lines that are only `...`, blank or comments are elisions.
//! Names and constants: see [`every_name_the_docs_give_in_backticks_is_declared`] and
//! [`every_constant_the_docs_quote_has_its_value`].

use std::collections::HashSet;
use std::path::{Path, PathBuf};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate lives in the workspace")
        .to_path_buf()
}

/// Every `.rs` file under `dir`, skipping build output and hidden directories.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable directory") {
        let path = entry.expect("dir entry").path();
        let name = path.file_name().unwrap().to_string_lossy();
        if name.starts_with('.') || name == "target" {
            continue;
        }
        if path.is_dir() {
            rust_files(&path, out);
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
}

fn docs() -> Vec<(String, String)> {
    let root = repo_root();
    let mut files: Vec<PathBuf> = vec![root.join("README.md"), root.join("ARCHITECTURE.md")];
    for entry in std::fs::read_dir(root.join("docs/src")).expect("docs/src") {
        let path = entry.expect("dir entry").path();
        if path.extension().is_some_and(|e| e == "md") {
            files.push(path);
        }
    }
    files
        .into_iter()
        .map(|p| {
            let name = p.strip_prefix(&root).unwrap().display().to_string();
            (name, std::fs::read_to_string(&p).expect("readable doc"))
        })
        .collect()
}

/// A line without its `//` comment (outside string literals) and surrounding space.
fn strip_comment(line: &str) -> &str {
    let mut in_str = false;
    let b = line.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' if in_str => i += 1,
            b'"' => in_str = !in_str,
            b'/' if !in_str && b.get(i + 1) == Some(&b'/') => return line[..i].trim(),
            _ => {}
        }
        i += 1;
    }
    line.trim()
}

/// The backticked `*.rs` names in a document.
fn named_files(doc: &str) -> Vec<String> {
    doc.split('`')
        .skip(1)
        .step_by(2)
        .filter(|w| w.ends_with(".rs") && !w.contains(' '))
        .map(str::to_string)
        .collect()
}

/// The lines of each ```rust block (with its first line number).
fn excerpts(doc: &str) -> Vec<(usize, Vec<String>)> {
    let mut out = Vec::new();
    let mut current: Option<(usize, Vec<String>)> = None;
    for (n, line) in doc.lines().enumerate() {
        let t = line.trim();
        match &mut current {
            None if t.starts_with("```rust") => current = Some((n + 2, Vec::new())),
            Some(_) if t.starts_with("```") => out.push(current.take().unwrap()),
            Some((_, lines)) => lines.push(line.to_string()),
            None => {}
        }
    }
    out
}

#[test]
fn every_source_file_the_docs_name_exists() {
    let root = repo_root();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let paths: HashSet<String> = files
        .iter()
        .map(|p| p.strip_prefix(&root).unwrap().display().to_string())
        .collect();
    let mut missing = Vec::new();
    let mut checked = 0;
    for (doc, text) in docs() {
        for name in named_files(&text) {
            checked += 1;
            let found = paths
                .iter()
                .any(|p| p == &name || p.ends_with(&format!("/{name}")));
            if !found {
                missing.push(format!("{doc}: `{name}`"));
            }
        }
    }
    assert!(
        checked > 50,
        "only {checked} file names found: the scan is broken"
    );
    assert!(
        missing.is_empty(),
        "the docs name source files that do not exist (renamed or removed?):\n{}",
        missing.join("\n")
    );
}

#[test]
fn every_line_of_the_books_rust_excerpts_is_in_the_sources() {
    let root = repo_root();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let source_lines: HashSet<String> = files
        .iter()
        .flat_map(|p| {
            std::fs::read_to_string(p)
                .expect("readable source")
                .lines()
                .map(|l| strip_comment(l).to_string())
                .collect::<Vec<_>>()
        })
        .collect();
    let mut stale = Vec::new();
    let mut checked = 0;
    for (doc, text) in docs() {
        for (first, lines) in excerpts(&text) {
            for (i, line) in lines.iter().enumerate() {
                let code = strip_comment(line);
                if code.is_empty() || code == "..." {
                    continue;
                }
                checked += 1;
                if !source_lines.contains(code) {
                    stale.push(format!("{doc}:{}: {code}", first + i));
                }
            }
        }
    }
    assert!(
        checked > 30,
        "only {checked} excerpt lines found: the scan is broken"
    );
    assert!(
        stale.is_empty(),
        "lines of the book's Rust excerpts that are no longer in the sources:\n{}",
        stale.join("\n")
    );
}

// ---------------------------------------------------------------------------------------------
// Names: what the sources declare, and what the docs name.

/// Identifiers the workspace's sources declare: items (`struct`, `enum`, `trait`, `type`,
/// `fn`, `const`, `static`, `mod`, `union`, `macro_rules!`), enum variants and struct fields,
/// and the module names that files and crates give.
#[derive(Default)]
struct Declared {
    /// Items, variants, fields.
    names: HashSet<String>,
    /// Module and crate names (path segments).
    modules: HashSet<String>,
    /// Names the sources import from other crates (`use std::sync::Arc;`): real, not ours.
    external: HashSet<String>,
}

/// Rust's prelude and primitive types: in no `use` line, and never ours.
const PRELUDE: &[&str] = &[
    "Ok",
    "Err",
    "Some",
    "None",
    "Option",
    "Result",
    "Vec",
    "String",
    "Box",
    "Send",
    "Sync",
    "Drop",
    "Clone",
    "Copy",
    "Default",
    "Debug",
    "Sized",
    "Iterator",
    "From",
    "Into",
    "Fn",
    "FnOnce",
    "FnMut",
    "Self",
    "PartialEq",
    "Eq",
    "Hash",
    "Ord",
    "PartialOrd",
    "ToString",
];

/// The first segments of paths into this workspace's crates.
const OUR_ROOTS: &[&str] = &[
    "crate",
    "self",
    "super",
    "gc_core",
    "gc_runtime",
    "workloads",
    "lox",
    "integration_tests",
];

/// Words of a line: maximal runs of identifier characters.
fn words(line: &str) -> impl Iterator<Item = &str> {
    line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
}

fn declared() -> Declared {
    let root = repo_root();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let mut d = Declared::default();
    for krate in [
        "gc_core",
        "gc_runtime",
        "workloads",
        "lox",
        "integration_tests",
    ] {
        d.modules.insert(krate.to_string());
    }
    // Module names first: a `use` is of another crate unless its path starts at one of ours.
    for path in &files {
        d.modules
            .insert(path.file_stem().unwrap().to_string_lossy().to_string());
    }
    let mut texts = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).expect("readable source");
        texts.push(text.clone());
        // Brace depth, and the depth at which the body of the innermost enum or struct being
        // read starts (its variants or fields are the first words of its lines at that depth).
        let mut depth = 0usize;
        let mut body: Option<usize> = None;
        let mut pending_body = false;
        let mut in_use: Option<bool> = None; // inside a `use` of another crate (true) or ours
        for line in text.lines() {
            let code = strip_comment(line);
            if code.is_empty() || code.starts_with('#') {
                continue;
            }
            let bare = code
                .trim_start_matches("pub(crate) ")
                .trim_start_matches("pub ");
            if in_use.is_none() {
                if let Some(path) = bare.strip_prefix("use ") {
                    let root = words(path).next().unwrap_or_default();
                    in_use = Some(!OUR_ROOTS.contains(&root) && !d.modules.contains(root));
                }
            }
            if let Some(external) = in_use {
                if external {
                    let path = bare.strip_prefix("use ").unwrap_or(bare);
                    d.external.extend(words(path).map(str::to_string));
                }
                if code.ends_with(';') {
                    in_use = None;
                }
                continue;
            }
            if body == Some(depth) {
                let first = code
                    .trim_start_matches("pub(crate) ")
                    .trim_start_matches("pub ");
                if let Some(w) = words(first).next() {
                    let rest = first[w.len()..].trim_start();
                    if rest.is_empty() || rest.starts_with([',', '(', '{', ':', '=']) {
                        d.names.insert(w.to_string());
                    }
                }
            }
            let ws: Vec<&str> = words(code).collect();
            for pair in ws.windows(2) {
                if matches!(
                    pair[0],
                    "struct"
                        | "enum"
                        | "trait"
                        | "type"
                        | "fn"
                        | "const"
                        | "static"
                        | "mod"
                        | "union"
                        | "macro_rules"
                ) {
                    d.names.insert(pair[1].to_string());
                    if pair[0] == "mod" {
                        d.modules.insert(pair[1].to_string());
                    }
                    if matches!(pair[0], "struct" | "enum") {
                        pending_body = true;
                    }
                }
            }
            for c in code.chars() {
                match c {
                    '{' => {
                        depth += 1;
                        if pending_body {
                            body = Some(depth);
                            pending_body = false;
                        }
                    }
                    '}' => {
                        if body == Some(depth) {
                            body = None;
                        }
                        depth = depth.saturating_sub(1);
                    }
                    ';' if pending_body => pending_body = false, // a unit or tuple struct
                    _ => {}
                }
            }
        }
    }
    // Paths into other crates used without a `use` (`libc::madvise`, `Ordering::SeqCst`,
    // `std::mem::forget`): every segment after an external first one is external too.
    for text in &texts {
        for line in text.lines() {
            let code = strip_comment(line);
            let mut rest = code;
            while let Some(i) = rest.find("::") {
                let before = rest[..i]
                    .rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .next()
                    .unwrap_or_default();
                let after = words(&rest[i + 2..]).next().unwrap_or_default();
                let ours = OUR_ROOTS.contains(&before) || d.modules.contains(before);
                if (d.external.contains(before) || before == "libc") && !ours {
                    d.external.insert(after.to_string());
                }
                rest = &rest[i + 2..];
            }
        }
    }
    // The Lox programs' functions and classes (`fib()` of the benchmarks).
    lox_names(&repo_root(), &mut d.names);
    d
}

/// `fun name` and `class Name` of every `.lox` file under `dir`.
fn lox_names(dir: &Path, out: &mut HashSet<String>) {
    for entry in std::fs::read_dir(dir).expect("readable directory") {
        let path = entry.expect("dir entry").path();
        let name = path.file_name().unwrap().to_string_lossy();
        if name.starts_with('.') || name == "target" {
            continue;
        }
        if path.is_dir() {
            lox_names(&path, out);
        } else if name.ends_with(".lox") {
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            let ws: Vec<&str> = words(&text).collect();
            for pair in ws.windows(2) {
                if pair[0] == "fun" || pair[0] == "class" {
                    out.insert(pair[1].to_string());
                }
            }
        }
    }
}

/// The book's text outside fenced code blocks.
fn prose(doc: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in doc.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// Backticked spans of the prose.
fn spans(doc: &str) -> Vec<String> {
    prose(doc)
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// Names that are deliberately not this project's, by rule: ZGC's C++ classes and files
/// (`ZMark`, `ZHeap::mark_start`, `zMark.cpp`), and the other systems the book compares with.
fn not_ours(name: &str) -> bool {
    let b = name.as_bytes();
    let zgc = b.len() > 1 && (b[0] == b'Z' || b[0] == b'z') && b[1].is_ascii_uppercase();
    zgc || NOT_OURS.contains(&name)
}

/// Names of other systems the book cites (HotSpot, the JDK, Netty, V8, Shenandoah, Go, Linux,
/// crates): every one is a comparison, never a claim about this code.
const NOT_OURS: &[&str] = &[
    // HotSpot, the JDK
    "GCCause",
    "JavaThread",
    "ByteBuffer",
    "DirectByteBuffer",
    "Cleaner",
    "FileChannel",
    "MappedByteBuffer",
    "CollectedHeap",
    // Netty, jemalloc
    "PooledByteBufAllocator",
    "PoolThreadCache",
    "ResourceLeakDetector",
    "SizeClasses",
    "ByteBuf",
    // Shenandoah, V8, Go
    "ShenandoahPacer",
    "HandleScope",
    // more of HotSpot and the JDK
    "OopStorage",
    "OutOfMemoryError",
    "WeakReference",
    "MaxDirectMemorySize",
    "ConcurrentGCBreakpoints",
    "SystemMemoryBarrier",
    "UseSystemMemoryBarrier",
    // HotSpot's safepoint log fields
    "Total",
    // Linux's /proc fields, system calls the code does not make, glibc
    "VmRSS",
    "Pss",
    "ShmemPmdMapped",
    "FilePmdMapped",
    "Private_Hugetlb",
    "Shared_Hugetlb",
    "madvise",
    "malloc_trim",
];

/// A path's segments, without a trailing call (`(…)`).
fn path_segments(span: &str) -> Option<Vec<&str>> {
    let body = span.split_once('(').map_or(span, |(head, _)| head);
    let segments: Vec<&str> = body.split("::").collect();
    let ident = |s: &str| {
        !s.is_empty()
            && !s.starts_with(|c: char| c.is_ascii_digit())
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    segments.iter().all(|s| ident(s)).then_some(segments)
}

/// Why a backticked span names something the sources do not declare, or `None` if it is
/// declared, not a name, or not ours.
fn undeclared(span: &str, d: &Declared) -> Option<String> {
    let span = span.trim();
    let call = span.ends_with(')') && span.contains('(');
    let segments = path_segments(span)?;
    let first = segments[0];
    if not_ours(first) || not_ours(span) {
        return None;
    }
    let camel = |s: &str| {
        s.starts_with(|c: char| c.is_ascii_uppercase()) && s.chars().any(|c| c.is_ascii_lowercase())
    };
    let known = |s: &str| d.names.contains(s) || d.modules.contains(s) || d.external.contains(s);
    if PRELUDE.contains(&first) || d.external.contains(first) && !d.names.contains(first) {
        return None; // Rust's or another crate's (`Arc`, `AtomicU64::fetch_add`)
    }
    let lower = first.starts_with(|c: char| c.is_ascii_lowercase() || c == '_');
    match segments.len() {
        // `CamelCase` or `fn_name()`: declared (or another crate's: `madvise()` is libc's).
        1 if camel(first) || call && lower => (!known(first)).then(|| format!("`{first}`")),
        1 => None,
        _ => {
            // A path of ours starts with a crate, a module or a type of ours: `gc_core::...`,
            // `object_allocator::page_stalling`, `Pacer::delay_for`. Other paths (`std::`,
            // `libc::`, `Ordering::Relaxed`) are not ours unless their first segment is.
            if !known(first) {
                return camel(first).then(|| format!("`{first}` (in `{span}`)"));
            }
            let missing: Vec<&str> = segments.iter().copied().filter(|s| !known(s)).collect();
            (!missing.is_empty()).then(|| format!("`{}` (in `{span}`)", missing.join("`, `")))
        }
    }
}

/// Every backticked `CamelCase` name, `fn_name()` call and path (`Type::method`,
/// `module::function`) of the docs is declared in the workspace's sources (a type, function,
/// constant, variant, field or module of that name exists), except names that are not ours by
/// rule ([`not_ours`]): ZGC's, and the other systems the book compares with.
#[test]
fn every_name_the_docs_give_in_backticks_is_declared() {
    let d = declared();
    assert!(
        d.names.len() > 1000 && d.names.contains("ColoredPtr") && d.names.contains("Marked0"),
        "only {} declared names found: the scan is broken",
        d.names.len()
    );
    let mut missing = Vec::new();
    let mut checked = 0;
    for (doc, text) in docs() {
        for span in spans(&text) {
            if path_segments(span.trim()).is_some() {
                checked += 1;
            }
            if let Some(why) = undeclared(&span, &d) {
                missing.push(format!("{doc}: {why}"));
            }
        }
    }
    missing.sort();
    missing.dedup();
    eprintln!("{checked} backticked names checked");
    assert!(
        checked > 300,
        "only {checked} names found: the scan is broken"
    );
    assert!(
        missing.is_empty(),
        "the docs name types or functions the sources do not declare (renamed or removed? if a \
         name is another system's, say whose in the text and add it to NOT_OURS):\n{}",
        missing.join("\n")
    );
}

/// The rule of [`undeclared`] on a few spans, so that a change to it cannot make it accept
/// everything.
#[test]
fn the_name_check_finds_what_is_not_declared() {
    let d = declared();
    for ours in [
        "ColoredPtr",
        "Pacer::delay_for",
        "mark_roots()",
        "gc_core::parse_size",
        "GoodColor::Marked1",
        "HeapConfig::handle_capacity",
        "gc_threads(1)",
    ] {
        assert_eq!(undeclared(ours, &d), None, "{ours}");
    }
    for missing in [
        "Pacer::delay_before_page",
        "NoSuchType",
        "no_such_function()",
        "gc_core::no_such_item",
    ] {
        assert!(undeclared(missing, &d).is_some(), "{missing} was accepted");
    }
    for not_ours in [
        "ZMark",
        "ZHeap::mark_start",
        "ShenandoahPacer",
        "std::mem::take",
        "ok",
    ] {
        assert_eq!(undeclared(not_ours, &d), None, "{not_ours}");
    }
}

// ---------------------------------------------------------------------------------------------
// Constants: the values the docs quote next to a constant's name.

/// A quoted or computed value: bytes and plain numbers as `f64`, durations in nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Value {
    Number(f64),
    Nanos(f64),
}

/// A value as the docs write it: `1024`, `1,024`, `64 KiB`, `6 MiB`, `1 ms`, `20 µs`, `1.25`.
/// The number must start the text; `None` if it does not.
fn parse_quoted(text: &str) -> Option<Value> {
    let t = text.trim_start();
    let end = t
        .find(|c: char| !(c.is_ascii_digit() || c == ',' || c == '.' || c == '_'))
        .unwrap_or(t.len());
    let digits = t[..end].trim_end_matches(['.', ',']);
    if digits.is_empty() || !digits.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let n: f64 = digits.replace([',', '_'], "").parse().ok()?;
    let unit: String = t[digits.len()..]
        .trim_start()
        .chars()
        .take_while(|c| c.is_alphabetic())
        .collect();
    Some(match unit.as_str() {
        "B" | "bytes" => Value::Number(n),
        "KiB" | "K" => Value::Number(n * 1024.0),
        "MiB" | "M" => Value::Number(n * 1024.0 * 1024.0),
        "GiB" | "G" => Value::Number(n * 1024.0 * 1024.0 * 1024.0),
        "TiB" | "T" => Value::Number(n * 1024f64.powi(4)),
        "ns" => Value::Nanos(n),
        "µs" | "us" => Value::Nanos(n * 1e3),
        "ms" => Value::Nanos(n * 1e6),
        "s" => Value::Nanos(n * 1e9),
        _ => Value::Number(n),
    })
}

/// `const NAME: T = EXPR;` of every source file: name -> expression.
fn const_expressions() -> std::collections::HashMap<String, Vec<String>> {
    let root = repo_root();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let mut out = std::collections::HashMap::new();
    for path in files {
        let text = std::fs::read_to_string(&path).expect("readable source");
        let mut rest = text.as_str();
        while let Some(i) = rest.find("const ") {
            let after = &rest[i + 6..];
            rest = after;
            let Some(colon) = after.find(':') else { break };
            let name = after[..colon].trim();
            if name.is_empty()
                || !name
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c == '_' || c.is_ascii_digit())
            {
                continue;
            }
            let (Some(eq), Some(semi)) = (after.find('='), after.find(';')) else {
                continue;
            };
            if eq < semi {
                let expr: String = after[eq + 1..semi]
                    .lines()
                    .map(strip_comment)
                    .collect::<Vec<_>>()
                    .join(" ");
                out.entry(name.to_string())
                    .or_insert_with(Vec::new)
                    .push(expr);
            }
        }
    }
    out
}

/// Evaluate a constant's expression: integer and float literals, other constants (by their
/// last path segment), `+ - * / << >>`, parentheses, `Duration::from_{secs,millis,micros,
/// nanos}(n)`. `Err` says what it could not read.
fn eval_const(
    name: &str,
    consts: &std::collections::HashMap<String, Vec<String>>,
) -> Result<Value, String> {
    eval_at(name, consts, 0)
}

fn eval_at(
    name: &str,
    consts: &std::collections::HashMap<String, Vec<String>>,
    depth: usize,
) -> Result<Value, String> {
    if depth > 20 {
        return Err(format!("`{name}`: constants defined in a circle"));
    }
    let exprs = consts
        .get(name)
        .ok_or_else(|| format!("no `const {name}` in the sources"))?;
    // A name may be defined more than once (`lox::MIN_COLLECTED_HEAP` re-exports
    // gc-runtime's): the first definition that reads is its value.
    let mut why = String::new();
    for expr in exprs {
        let mut p = Parser {
            s: expr.clone(),
            i: 0,
            consts,
            depth,
        };
        match p.sum() {
            Ok(v) if p.rest_is_empty() => return Ok(v),
            Ok(_) => {
                why = format!(
                    "`{name}` = `{}`: cannot read `{}`",
                    expr.trim(),
                    &p.s[p.i..]
                )
            }
            Err(e) => why = e,
        }
    }
    Err(why)
}

struct Parser<'a> {
    s: String,
    i: usize,
    consts: &'a std::collections::HashMap<String, Vec<String>>,
    depth: usize,
}

impl Parser<'_> {
    fn rest_is_empty(&mut self) -> bool {
        self.skip_ws();
        self.i == self.s.len()
    }
    fn skip_ws(&mut self) {
        while self.s[self.i..].starts_with(char::is_whitespace) {
            self.i += 1;
        }
    }
    fn eat(&mut self, op: &str) -> bool {
        self.skip_ws();
        if self.s[self.i..].starts_with(op) {
            self.i += op.len();
            true
        } else {
            false
        }
    }
    fn sum(&mut self) -> Result<Value, String> {
        let mut v = self.product()?;
        loop {
            if self.eat("+") {
                v = num_op(v, self.product()?, |a, b| a + b);
            } else if self.eat("-") {
                v = num_op(v, self.product()?, |a, b| a - b);
            } else {
                return Ok(v);
            }
        }
    }
    fn product(&mut self) -> Result<Value, String> {
        let mut v = self.atom()?;
        loop {
            if self.eat("<<") {
                v = num_op(v, self.atom()?, |a, b| a * 2f64.powf(b));
            } else if self.eat(">>") {
                v = num_op(v, self.atom()?, |a, b| (a / 2f64.powf(b)).floor());
            } else if self.eat("*") {
                v = num_op(v, self.atom()?, |a, b| a * b);
            } else if self.eat("/") {
                v = num_op(v, self.atom()?, |a, b| a / b);
            } else {
                return Ok(v);
            }
        }
    }
    fn atom(&mut self) -> Result<Value, String> {
        self.skip_ws();
        if self.eat("(") {
            let v = self.sum()?;
            return if self.eat(")") {
                Ok(v)
            } else {
                Err("unbalanced parenthesis".into())
            };
        }
        let rest = &self.s[self.i..];
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':' || c == '.'))
            .unwrap_or(rest.len());
        let token = rest[..end].to_string();
        self.i += end;
        if token.starts_with(|c: char| c.is_ascii_digit()) {
            // Without digit separators and a type suffix (`1_024usize`, `64u64`, `1.25f64`).
            let digits: String = token
                .chars()
                .filter(|&c| c != '_')
                .take_while(|c| c.is_ascii_digit() || *c == '.')
                .collect();
            return digits
                .parse()
                .map(Value::Number)
                .map_err(|_| format!("literal `{token}`"));
        }
        for (f, scale) in [
            ("Duration::from_secs", 1e9),
            ("Duration::from_millis", 1e6),
            ("Duration::from_micros", 1e3),
            ("Duration::from_nanos", 1.0),
        ] {
            if token == f && self.eat("(") {
                let Value::Number(n) = self.sum()? else {
                    return Err("duration of a duration".into());
                };
                if !self.eat(")") {
                    return Err("unbalanced parenthesis".into());
                }
                return Ok(Value::Nanos(n * scale));
            }
        }
        let last = token.rsplit("::").next().unwrap_or_default();
        if !last.is_empty()
            && last
                .chars()
                .all(|c| c.is_ascii_uppercase() || c == '_' || c.is_ascii_digit())
        {
            return eval_at(last, self.consts, self.depth + 1);
        }
        Err(format!("cannot read `{token}`"))
    }
}

fn num_op(a: Value, b: Value, f: impl Fn(f64, f64) -> f64) -> Value {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => Value::Number(f(x, y)),
        (Value::Nanos(x), Value::Number(y)) | (Value::Number(y), Value::Nanos(x)) => {
            Value::Nanos(f(x, y))
        }
        (Value::Nanos(x), Value::Nanos(y)) => Value::Nanos(f(x, y)),
    }
}

/// The text after a name, if it quotes a value for it: `NAME (V`, `NAME, V`, `NAME = V`,
/// `NAME of V`, `NAME is V` (the name may end in a backtick or an asterisk).
fn quoted_after(after: &str) -> Option<Value> {
    let t = after.trim_start_matches(['`', '*']);
    let t = t.trim_start();
    for lead in ["(default ", "(", ", ", "= ", "of ", "is "] {
        if let Some(v) = t.strip_prefix(lead) {
            return parse_quoted(v);
        }
    }
    None
}

/// Settings the book quotes by name rather than by a constant, with the value the code gives
/// them: the phrase (matched at a word start) and the real value.
fn named_defaults() -> Vec<(&'static str, Value)> {
    let pacing = gc_runtime::PacingConfig::default();
    let nanos = |d: std::time::Duration| Value::Nanos(d.as_nanos() as f64);
    vec![
        ("pacing quantum", Value::Number(pacing.quantum as f64)),
        (
            "quantum* of bytes it allocates",
            Value::Number(pacing.quantum as f64),
        ),
        ("max_delay", nanos(pacing.max_delay)),
        ("duration_margin", Value::Number(pacing.duration_margin)),
    ]
}

fn close(a: Value, b: Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) | (Value::Nanos(x), Value::Nanos(y)) => {
            (x - y).abs() <= 1e-9 * x.abs().max(y.abs())
        }
        _ => false,
    }
}

/// Every constant the docs quote with a value next to its backticked name (`` `RECENT_EVENTS`
/// (1024) ``, `` `MIN_COLLECTED_HEAP`, 6 MiB ``), and every setting they quote with its default
/// by name ("the pacing quantum (64 KiB)", "`max_delay` (1 ms)"), has that value in the code:
/// constants evaluated from their definitions, settings read from their `Default`.
#[test]
fn every_constant_the_docs_quote_has_its_value() {
    let consts = const_expressions();
    let defaults = named_defaults();
    let mut wrong = Vec::new();
    let mut checked = 0;
    for (doc, text) in docs() {
        let flat = prose(&text)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        // Backticked constants.
        for (i, span) in flat.split('`').enumerate() {
            if i % 2 == 0
                || span.len() < 3
                || !span
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c == '_' || c.is_ascii_digit())
                || !span.contains('_') && !consts.contains_key(span)
            {
                continue;
            }
            let after: String = flat.split('`').skip(i + 1).collect::<Vec<_>>().join("`");
            let Some(quoted) = quoted_after(&after) else {
                continue;
            };
            if !consts.contains_key(span) {
                continue; // an environment variable or another system's name
            }
            checked += 1;
            match eval_const(span, &consts) {
                Ok(real) if close(real, quoted) => {}
                Ok(real) => {
                    wrong.push(format!("{doc}: `{span}` quoted as {quoted:?}, is {real:?}"))
                }
                Err(e) => wrong.push(format!("{doc}: `{span}`: {e}")),
            }
        }
        // Settings by name.
        for (phrase, real) in &defaults {
            let mut from = 0;
            while let Some(at) = flat[from..].find(phrase) {
                let start = from + at;
                from = start + phrase.len();
                let word_start = start == 0
                    || !flat[..start].ends_with(|c: char| c.is_alphanumeric() || c == '_');
                if !word_start {
                    continue;
                }
                if let Some(quoted) = quoted_after(&flat[from..]) {
                    checked += 1;
                    if !close(*real, quoted) {
                        wrong.push(format!(
                            "{doc}: \"{phrase}\" quoted as {quoted:?}, is {real:?}"
                        ));
                    }
                }
            }
        }
    }
    eprintln!("{checked} quoted constants and settings checked");
    assert!(
        checked >= 4,
        "only {checked} quoted constants found: the scan is broken"
    );
    assert!(
        wrong.is_empty(),
        "the docs quote constants with values the code does not have:\n{}",
        wrong.join("\n")
    );
}

/// The constant reader on constants of known value, so that it cannot drift into reading
/// nothing.
#[test]
fn the_constant_reader_reads_the_sources() {
    let consts = const_expressions();
    let bytes = |n: u64| Value::Number(n as f64);
    assert_eq!(
        eval_const("RECENT_EVENTS", &consts),
        Ok(bytes(gc_runtime::RECENT_EVENTS as u64))
    );
    assert_eq!(
        eval_const("MIN_COLLECTED_HEAP", &consts),
        Ok(bytes(gc_runtime::MIN_COLLECTED_HEAP))
    );
    assert_eq!(
        eval_const("GRANULE_SIZE", &consts),
        Ok(bytes(gc_core::GRANULE_SIZE))
    );
    assert_eq!(
        quoted_after("` (1,024) records"),
        Some(Value::Number(1024.0))
    );
    assert_eq!(quoted_after(", 6 MiB with"), Some(bytes(6 << 20)));
    assert_eq!(quoted_after("` (1 ms)"), Some(Value::Nanos(1e6)));
}
