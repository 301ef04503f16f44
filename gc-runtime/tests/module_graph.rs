//! The module graphs of the workspace's crates, and the walls between gc-runtime's folders.
//!
//! A file depends on another when its code names it by path: `crate::a::b` (a `use` line or
//! an inline path, grouped imports included), `super::x`, or an item that lib.rs or a folder's
//! `mod.rs` re-exports from it; comments, strings and inline `mod tests { ... }` blocks (unit
//! tests build their fixtures with whatever they need) do not count. The checks:
//!
//! - gc-runtime is built of *units*: its folders (`observe/`, `mark/`, ...) and the leaf
//!   files at its root (`sync.rs`, `config.rs`). A unit uses only units below it: the unit
//!   graph has no cycle, and each unit's layer is one more than the highest layer it uses. A
//!   file outside a folder names only what the folder's `mod.rs` exports (its re-exported
//!   items and its `pub mod` files): a path such as `crate::mark::live_cache::X` into one of
//!   its private files is a violation even where the compiler would allow it. `native/`
//!   uses no other unit. The files inside each folder form no cycle either.
//! - gc-core, workloads and lox (workloads/lox): the files of each form no cycle.
//!
//! ARCHITECTURE.md shows gc-runtime's units and each folder's files layer by layer, and
//! gc-core's files, between the `module-graph` markers; the failure message of a mismatch
//! shows the listing to put there. The checker is tested on small synthetic trees with a
//! planted upward import, a reach into a private file and a circle inside a folder.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Node → the nodes it uses.
type Graph = BTreeMap<String, BTreeSet<String>>;

/// A module path from the crate root (`["mark", "marker"]` for `src/mark/marker.rs`; a
/// folder's `mod.rs` is the folder's path).
type ModPath = Vec<String>;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("gc-runtime lives in the workspace")
        .to_path_buf()
}

/// The code of a source file without its comments (line comments, doc comments, block
/// comments) and without string literals, which may mention `crate::` in messages.
fn code_only(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            let mut depth = 0;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if b[i] == b'\'' && i + 2 < b.len() && (b[i + 2] == b'\'' || b[i + 1] == b'\\') {
            // A char literal ('"', '\n'); lifetimes ('a) have no closing quote nearby.
            let close = b[i + 1..]
                .iter()
                .position(|&c| c == b'\'')
                .map_or(1, |p| p + 2);
            i += close;
            out.push_str("' '");
        } else {
            out.push(b[i] as char);
            i += 1;
        }
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

fn matching_brace(s: &str) -> usize {
    let mut depth = 1;
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
    }
    s.len()
}

fn split_top_level(s: &str) -> Vec<&str> {
    let (mut parts, mut depth, mut start) = (Vec::new(), 0, 0);
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts
}

/// Every path that follows `prefix` (`crate::` or `super::`) in `code`, as its segments, with
/// grouped imports expanded (`crate::a::{b::X, c}` gives `a::b::X` and `a::c`).
fn paths_after(code: &str, prefix: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(p) = rest.find(prefix) {
        let before = rest[..p].chars().next_back();
        rest = &rest[p + prefix.len()..];
        if before.is_some_and(is_ident) || before == Some(':') {
            continue; // `gc_core::crate::`, `super::super::`: not a path from here
        }
        expand(rest, Vec::new(), &mut out);
    }
    out
}

/// The path segments at the start of `s` appended to `base`; a `{...}` group gives one path
/// per member.
fn expand(s: &str, mut base: Vec<String>, out: &mut Vec<Vec<String>>) {
    let mut s = s;
    loop {
        if let Some(group) = s.strip_prefix('{') {
            let end = matching_brace(group);
            for item in split_top_level(&group[..end]) {
                let item = item.trim();
                if !item.is_empty() {
                    expand(item, base.clone(), out);
                }
            }
            return;
        }
        let name: String = s.chars().take_while(|&c| is_ident(c)).collect();
        if name.is_empty() {
            break;
        }
        s = &s[name.len()..];
        if name != "self" {
            base.push(name);
        }
        match s.strip_prefix("::") {
            Some(r) => s = r,
            None => break,
        }
    }
    if !base.is_empty() {
        out.push(base);
    }
}

/// `code` without its inline `mod name { ... }` blocks: the unit tests, which may use any
/// module to build their fixtures and whose `super::` means the file itself.
fn without_inline_modules(code: &str) -> String {
    let mut out = String::new();
    let mut rest = code;
    while let Some(p) = rest.find("mod ") {
        let before = rest[..p].chars().next_back();
        let after = &rest[p + 4..];
        let name_len = after.chars().take_while(|&c| is_ident(c)).count();
        let tail = after[name_len..].trim_start();
        if before.is_some_and(is_ident) || name_len == 0 || !tail.starts_with('{') {
            out.push_str(&rest[..p + 4]);
            rest = after;
            continue;
        }
        out.push_str(&rest[..p]);
        let open = after.len() - tail.len();
        let end = matching_brace(&after[open + 1..]);
        rest = &after[(open + 1 + end + 1).min(after.len())..];
    }
    out.push_str(rest);
    out
}

/// Names re-exported by a `use` statement of a module file, to the path they come from
/// (`pub(crate) use marker::{Mark, is_live as live};` gives `Mark` → `marker::Mark` and
/// `live` → `marker::is_live`); only `pub` and `pub(...)` uses count.
fn reexports(code: &str) -> BTreeMap<String, Vec<String>> {
    let mut map = BTreeMap::new();
    for stmt in code.split(';') {
        let stmt = stmt.trim();
        let Some(rest) = stmt.strip_prefix("pub") else {
            continue;
        };
        let rest = match rest.strip_prefix('(') {
            Some(r) => &r[r.find(')').map_or(0, |i| i + 1)..],
            None => rest,
        };
        let Some(path) = rest.trim_start().strip_prefix("use ") else {
            continue;
        };
        for item in flatten_use(path.trim()) {
            let (path, alias) = match item.split_once(" as ") {
                Some((p, a)) => (p.trim().to_string(), a.trim().to_string()),
                None => {
                    let last = item.rsplit("::").next().unwrap_or(&item).trim().to_string();
                    (item.trim().to_string(), last)
                }
            };
            let segs: Vec<String> = path.split("::").map(|s| s.trim().to_string()).collect();
            map.insert(alias, segs);
        }
    }
    map
}

/// `a::{b, c::{D, E as F}}` → `a::b`, `a::c::D`, `a::c::E as F`.
fn flatten_use(path: &str) -> Vec<String> {
    match path.find('{') {
        None => vec![path.to_string()],
        Some(i) => {
            let prefix = &path[..i];
            let end = matching_brace(&path[i + 1..]);
            split_top_level(&path[i + 1..i + 1 + end])
                .into_iter()
                .map(str::trim)
                .filter(|m| !m.is_empty())
                .flat_map(|m| flatten_use(&format!("{prefix}{m}")))
                .collect()
        }
    }
}

/// `mod x;` and `pub mod x;` declarations of a module file: name → declared `pub`.
fn declared_modules(code: &str) -> BTreeMap<String, bool> {
    let mut out = BTreeMap::new();
    for stmt in code.split([';', '{', '}']) {
        let words: Vec<&str> = stmt.split_whitespace().collect();
        if let [.., kw, name] = words[..] {
            if kw == "mod" && name.chars().all(is_ident) {
                let public = words.len() >= 3 && words[words.len() - 3] == "pub";
                out.insert(name.to_string(), public);
            }
        }
    }
    out
}

/// A crate's sources: module path → code without comments and strings. `lib.rs` is the
/// root (an empty path); `main.rs` and `bin/` are other crates and are left out.
struct Tree {
    files: BTreeMap<ModPath, String>,
}

impl Tree {
    fn from_files(files: &[(&str, &str)]) -> Tree {
        let mut out = BTreeMap::new();
        for (path, src) in files {
            if let Some(m) = module_path(Path::new(path)) {
                out.insert(m, code_only(src));
            }
        }
        Tree { files: out }
    }

    fn read(src: &Path) -> Tree {
        let mut found = Vec::new();
        collect(src, src, &mut found);
        let pairs: Vec<(String, String)> = found
            .into_iter()
            .map(|(rel, p)| (rel, std::fs::read_to_string(p).expect("source file")))
            .collect();
        let refs: Vec<(&str, &str)> = pairs
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        Tree::from_files(&refs)
    }

    /// The longest prefix of `path` that names a module file, refined through re-exports: a
    /// name a module re-exports from one of its children leads to that child.
    fn resolve(&self, path: &[String]) -> Option<(ModPath, Vec<String>)> {
        let mut module: ModPath = Vec::new();
        let mut rest: Vec<String> = path.to_vec();
        // The crate root's re-exports (`pub use observe::stats;`) first.
        if let Some(first) = rest.first() {
            let mut candidate = module.clone();
            candidate.push(first.clone());
            if !self.files.contains_key(&candidate) {
                let root = reexports(self.files.get(&module)?);
                let target = root.get(first)?;
                rest = target
                    .iter()
                    .cloned()
                    .chain(rest[1..].iter().cloned())
                    .collect();
            }
        }
        let mut steps = 0;
        while let Some(next) = rest.first().cloned() {
            steps += 1;
            if steps > 16 {
                break;
            }
            let mut child = module.clone();
            child.push(next.clone());
            if self.files.contains_key(&child) {
                module = child;
                rest.remove(0);
                continue;
            }
            // A name the module re-exports from a child of its own.
            let re = reexports(&self.files[&module]);
            match re.get(&next) {
                Some(target) if target.len() > 1 && target[0] != "crate" => {
                    let mut c = module.clone();
                    c.push(target[0].clone());
                    if !self.files.contains_key(&c) {
                        break;
                    }
                    rest = target
                        .iter()
                        .cloned()
                        .chain(rest[1..].iter().cloned())
                        .collect();
                }
                _ => break,
            }
        }
        if module.is_empty() {
            None
        } else {
            Some((module, rest))
        }
    }

    /// Each file's references: (the segments it wrote from the crate root, the module they
    /// reach).
    fn references(&self) -> Vec<(ModPath, Vec<String>, ModPath)> {
        let mut out = Vec::new();
        for (m, code) in &self.files {
            if m.is_empty() {
                continue;
            }
            let code = without_inline_modules(code);
            let mut written: Vec<Vec<String>> = paths_after(&code, "crate::");
            // `super::` is the parent module (for a folder's mod.rs, the folder's parent):
            // resolved as a path from the root.
            let parent: Vec<String> = m[..m.len() - 1].to_vec();
            for p in paths_after(&code, "super::") {
                written.push(parent.iter().cloned().chain(p).collect());
            }
            for w in written {
                if let Some((target, _)) = self.resolve(&w) {
                    if &target != m {
                        out.push((m.clone(), w, target));
                    }
                }
            }
        }
        out
    }

    /// The folders: modules with children.
    fn folders(&self) -> BTreeSet<ModPath> {
        self.files
            .keys()
            .filter(|k| k.len() > 1)
            .map(|k| k[..k.len() - 1].to_vec())
            .collect()
    }

    /// Every file as a node, an edge for every reference between two files.
    fn file_graph(&self) -> Graph {
        let mut g: Graph = self
            .files
            .keys()
            .filter(|k| !k.is_empty())
            .map(|k| (k.join("::"), BTreeSet::new()))
            .collect();
        for (from, _, to) in self.references() {
            if to.is_empty() {
                continue;
            }
            g.get_mut(&from.join("::")).unwrap().insert(to.join("::"));
        }
        g
    }
}

/// `a/b.rs` → `["a", "b"]`, `a/mod.rs` → `["a"]`, `lib.rs` → `[]`; `main.rs`, `bin/` → none.
fn module_path(rel: &Path) -> Option<ModPath> {
    let mut segs: Vec<String> = rel
        .iter()
        .map(|s| s.to_string_lossy().to_string())
        .collect();
    let last = segs.pop()?;
    let stem = last.strip_suffix(".rs")?.to_string();
    if segs.first().is_some_and(|s| s == "bin") || (segs.is_empty() && stem == "main") {
        return None;
    }
    if !(segs.is_empty() && stem == "lib") && stem != "mod" {
        segs.push(stem);
    }
    Some(segs)
}

fn collect(root: &Path, dir: &Path, out: &mut Vec<(String, PathBuf)>) {
    for entry in std::fs::read_dir(dir).expect("source dir") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            collect(root, &path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path.strip_prefix(root).unwrap().display().to_string();
            out.push((rel, path));
        }
    }
}

/// The strongly connected components with more than one node: the cycles.
fn cycles(graph: &Graph) -> Vec<Vec<String>> {
    let reach = |from: &String| {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.clone()];
        while let Some(m) = stack.pop() {
            for d in graph.get(&m).into_iter().flatten() {
                if seen.insert(d.clone()) {
                    stack.push(d.clone());
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<&String, BTreeSet<String>> =
        graph.keys().map(|m| (m, reach(m))).collect();
    let mut done = BTreeSet::new();
    let mut out = Vec::new();
    for m in graph.keys() {
        if done.contains(m) || !reaches[m].contains(m) {
            continue;
        }
        let comp: Vec<String> = graph
            .keys()
            .filter(|o| reaches[m].contains(*o) && reaches[*o].contains(m))
            .cloned()
            .collect();
        done.extend(comp.iter().cloned());
        out.push(comp);
    }
    out
}

/// One line per layer, each node with the nodes it uses; `indent` before every line.
fn listing(graph: &Graph, indent: &str) -> String {
    let mut layer: BTreeMap<&String, usize> = BTreeMap::new();
    while layer.len() < graph.len() {
        let before = layer.len();
        for (m, deps) in graph {
            if layer.contains_key(m) {
                continue;
            }
            if deps.iter().all(|d| layer.contains_key(d)) {
                let l = deps.iter().map(|d| layer[d] + 1).max().unwrap_or(0);
                layer.insert(m, l);
            }
        }
        assert!(layer.len() > before, "listing a graph with a cycle");
    }
    let top = layer.values().copied().max().unwrap_or(0);
    let mut out = String::new();
    for l in 0..=top {
        out.push_str(&format!("{indent}layer {l}:\n"));
        for (m, deps) in graph.iter().filter(|(m, _)| layer[m] == l) {
            if deps.is_empty() {
                out.push_str(&format!("{indent}  {m}\n"));
            } else {
                let deps: Vec<&str> = deps.iter().map(String::as_str).collect();
                out.push_str(&format!("{indent}  {m} -> {}\n", deps.join(", ")));
            }
        }
    }
    out
}

/// gc-runtime's walls: the unit graph (folders and root files), each folder's file graph,
/// and the references into a folder's private files. Returns the listing and the problems.
fn check_walls(tree: &Tree) -> (String, Vec<String>) {
    let mut problems = Vec::new();
    let folders = tree.folders();
    let unit = |m: &ModPath| m[0].clone();
    let mut units: Graph = tree
        .files
        .keys()
        .filter(|k| !k.is_empty())
        .map(|k| (unit(k), BTreeSet::new()))
        .collect();
    let mut inside: BTreeMap<String, Graph> = BTreeMap::new();
    for f in &folders {
        let files: Graph = tree
            .files
            .keys()
            .filter(|k| k.len() == f.len() + 1 && k.starts_with(f))
            .map(|k| (k[f.len()].clone(), BTreeSet::new()))
            .collect();
        inside.insert(f.join("::"), files);
    }
    for (from, written, to) in tree.references() {
        let (fu, tu) = (unit(&from), unit(&to));
        if fu != tu {
            units.get_mut(&fu).unwrap().insert(tu.clone());
            // Outside a folder, only what its mod.rs exports: the first segment after the
            // folder must not be one of its private files.
            let folder = vec![tu.clone()];
            if folders.contains(&folder) && written.first() == Some(&tu) && written.len() > 1 {
                let decl = declared_modules(&tree.files[&folder]);
                if decl.get(&written[1]) == Some(&false) {
                    problems.push(format!(
                        "{} reaches into {}'s private file: crate::{}",
                        from.join("::"),
                        tu,
                        written.join("::")
                    ));
                }
            }
        } else if from.len() >= 2 && to.len() >= 2 && from[..from.len() - 1] == to[..to.len() - 1] {
            // Two files of one folder.
            let f = from[..from.len() - 1].join("::");
            if let Some(g) = inside.get_mut(&f) {
                g.get_mut(&from[from.len() - 1])
                    .unwrap()
                    .insert(to[to.len() - 1].clone());
            }
        }
    }
    for c in cycles(&units) {
        problems.push(format!(
            "units that use each other (a folder uses one above it): {c:?}"
        ));
    }
    for (f, g) in &inside {
        for c in cycles(g) {
            problems.push(format!("files of {f}/ that use each other: {c:?}"));
        }
    }
    if let Some(deps) = units.get("native").filter(|d| !d.is_empty()) {
        problems.push(format!(
            "native/ must not depend on the collector: uses {deps:?}"
        ));
    }
    if !problems.is_empty() {
        return (String::new(), problems);
    }
    let mut out = listing(&units, "");
    for (f, g) in &inside {
        out.push_str(&format!("{f}/:\n"));
        out.push_str(&listing(g, "  "));
    }
    (out, problems)
}

fn crate_tree(dir: &str) -> Tree {
    let tree = Tree::read(&workspace_root().join(dir).join("src"));
    assert!(
        tree.files.len() > 5,
        "{dir}: found only {} files: the source scan is broken",
        tree.files.len()
    );
    tree
}

/// The crate's file graph has no cycle.
fn check_no_file_cycle(dir: &str) -> Graph {
    let graph = crate_tree(dir).file_graph();
    let cyc = cycles(&graph);
    assert!(
        cyc.is_empty(),
        "{dir} has import cycles (files that use each other, directly or through others): \
         {cyc:?}\n{graph:#?}"
    );
    graph
}

fn check_architecture_doc(name: &str, want: &str) {
    println!("{name}:\n{want}");
    let doc =
        std::fs::read_to_string(workspace_root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let begin = format!("<!-- module-graph:{name}:begin -->\n```text\n");
    let end = "```\n<!-- module-graph:end -->";
    let shown = doc
        .split_once(&begin)
        .and_then(|(_, rest)| rest.split_once(end))
        .map(|(block, _)| block);
    assert_eq!(
        shown,
        Some(want),
        "ARCHITECTURE.md must show {name}'s module graph as it is; put this between \
         `{}` and `{end}`:\n{want}",
        begin.trim_end()
    );
}

#[test]
fn gc_runtime_folders_are_walls_and_match_the_architecture_doc() {
    let tree = crate_tree("gc-runtime");
    assert!(
        tree.folders().len() >= 8,
        "gc-runtime: found only {} folders: the scan is broken",
        tree.folders().len()
    );
    let (want, problems) = check_walls(&tree);
    assert!(
        problems.is_empty(),
        "gc-runtime's walls are broken:\n{}",
        problems.join("\n")
    );
    check_architecture_doc("gc-runtime", &want);
}

#[test]
fn gc_core_files_form_no_cycle_and_match_the_architecture_doc() {
    let graph = check_no_file_cycle("gc-core");
    check_architecture_doc("gc-core", &listing(&graph, ""));
}

#[test]
fn lox_files_form_no_cycle() {
    check_no_file_cycle("workloads/lox");
}

#[test]
fn workloads_files_form_no_cycle() {
    check_no_file_cycle("workloads");
}

#[test]
fn the_scan_sees_grouped_imports_reexports_and_ignores_comments_and_strings() {
    let code = code_only(
        "use crate::{a::X, b};\n// crate::c\n/* crate::d */\nlet s = \"crate::e\";\n\
         crate::f::g(); let c = '\"'; crate::Item; use super::{h, i::J};",
    );
    let firsts: Vec<String> = paths_after(&code, "crate::")
        .into_iter()
        .map(|p| p[0].clone())
        .collect();
    assert_eq!(firsts, ["a", "b", "f", "Item"]);
    assert_eq!(
        paths_after(&code, "super::"),
        [
            vec!["h".to_string()],
            vec!["i".to_string(), "J".to_string()]
        ]
    );
    let re = reexports("pub use m::{Item, Other as O}; pub(crate) use n::Thing; use p::Q;");
    assert_eq!(re["Item"], ["m", "Item"]);
    assert_eq!(re["O"], ["m", "Other"]);
    assert_eq!(re["Thing"], ["n", "Thing"]);
    assert!(!re.contains_key("Q"), "a private use re-exports nothing");
    let decl = declared_modules("mod a;\npub mod b;\n#[cfg(test)]\nmod tests { }");
    assert_eq!(decl.get("a"), Some(&false));
    assert_eq!(decl.get("b"), Some(&true));
    let mut g = Graph::new();
    g.insert("x".into(), ["y".to_string()].into());
    g.insert("y".into(), ["x".to_string()].into());
    g.insert("z".into(), ["x".to_string()].into());
    assert_eq!(cycles(&g), vec![vec!["x".to_string(), "y".to_string()]]);
}

/// A small tree in gc-runtime's shape: `low/` below `high/`, `high/h.rs` using `low`'s export.
fn synthetic(low_a: &str, high_h: &str, low_b: &str) -> Tree {
    Tree::from_files(&[
        ("lib.rs", "mod low; mod high; mod leaf; pub use high::H;"),
        ("leaf.rs", "pub struct L;"),
        (
            "low/mod.rs",
            "//! low\nmod a;\nmod b;\npub(crate) use a::A;\npub(crate) use b::B;",
        ),
        ("low/a.rs", low_a),
        ("low/b.rs", low_b),
        ("high/mod.rs", "mod h;\npub use h::H;"),
        ("high/h.rs", high_h),
    ])
}

#[test]
fn the_walls_check_passes_a_clean_tree() {
    let t = synthetic(
        "use crate::leaf::L; pub struct A;",
        "use crate::low::A; pub struct H;",
        "use super::a::A; pub struct B;",
    );
    let (listing, problems) = check_walls(&t);
    assert_eq!(problems, Vec::<String>::new());
    assert_eq!(
        listing,
        "layer 0:\n  leaf\nlayer 1:\n  low -> leaf\nlayer 2:\n  high -> low\n\
         high/:\n  layer 0:\n    h\n\
         low/:\n  layer 0:\n    a\n  layer 1:\n    b -> a\n"
    );
}

#[test]
fn the_walls_check_fails_on_a_planted_upward_import() {
    // `low/a.rs` names `high`'s export: the folder below uses the one above it.
    let t = synthetic(
        "use crate::high::H; pub struct A;",
        "use crate::low::A; pub struct H;",
        "pub struct B;",
    );
    let (_, problems) = check_walls(&t);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].contains("[\"high\", \"low\"]"), "{problems:?}");
    // Through a root re-export (`crate::H`) it is the same import.
    let t = synthetic(
        "use crate::H; pub struct A;",
        "use crate::low::A; pub struct H;",
        "pub struct B;",
    );
    assert_eq!(check_walls(&t).1.len(), 1);
}

#[test]
fn the_walls_check_fails_on_a_reach_into_a_private_file() {
    // `high/h.rs` names `low/a.rs` by its path instead of `low`'s export.
    let t = synthetic(
        "pub struct A;",
        "use crate::low::a::A; pub struct H;",
        "pub struct B;",
    );
    let (_, problems) = check_walls(&t);
    assert_eq!(
        problems,
        ["high::h reaches into low's private file: crate::low::a::A"]
    );
}

#[test]
fn the_walls_check_fails_on_a_circle_inside_a_folder() {
    let t = synthetic(
        "use super::b::B; pub struct A;",
        "use crate::low::A; pub struct H;",
        "use super::A; pub struct B;", // through mod.rs's re-export of a::A
    );
    let (_, problems) = check_walls(&t);
    assert_eq!(
        problems,
        ["files of low/ that use each other: [\"a\", \"b\"]"]
    );
}

#[test]
fn the_file_check_fails_on_a_circle_through_a_submodule() {
    let t = Tree::from_files(&[
        ("lib.rs", "pub mod a; pub mod vm;"),
        ("a.rs", "use crate::vm::fast::F;"),
        ("vm.rs", "mod fast; pub use fast::F;"),
        ("vm/fast.rs", "use crate::a::X; pub struct F;"),
    ]);
    assert_eq!(
        cycles(&t.file_graph()),
        vec![vec!["a".to_string(), "vm::fast".to_string()]]
    );
}
