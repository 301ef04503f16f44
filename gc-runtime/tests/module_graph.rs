//! The module dependency graphs of gc-core and gc-runtime: no import cycles inside either crate,
//! and ARCHITECTURE.md shows the graph as it is.
//!
//! A module depends on another when its code names it through `crate::` (a `use crate::x`
//! line, a `crate::x::f()` path, or an item lib.rs re-exports from `x`); comments do not
//! count. The graph is listed layer by layer: a module's layer is one more than the highest
//! layer among the modules it uses, so each module uses only modules of lower layers. The
//! listing in ARCHITECTURE.md (between the `module-graph` markers of each crate) must match the
//! one this test prints; when a dependency changes, the failure message shows the new listing.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Module name → the modules it uses.
type Graph = BTreeMap<String, BTreeSet<String>>;

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

/// Every name that follows `crate::` in `code`, including the members of a grouped import
/// (`use crate::{a::X, b}` gives `a` and `b`).
fn crate_paths(code: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = code;
    while let Some(p) = rest.find("crate::") {
        let before = rest[..p].chars().next_back();
        rest = &rest[p + "crate::".len()..];
        if before.is_some_and(is_ident) {
            continue; // e.g. `gc_core::crate::`: not a path from this crate's root
        }
        if let Some(group) = rest.strip_prefix('{') {
            let end = matching_brace(group);
            for item in split_top_level(&group[..end]) {
                let name: String = item.trim().chars().take_while(|&c| is_ident(c)).collect();
                if !name.is_empty() {
                    names.push(name);
                }
            }
        } else {
            let name: String = rest.chars().take_while(|&c| is_ident(c)).collect();
            if !name.is_empty() {
                names.push(name);
            }
        }
    }
    names
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

/// Item → module, for the items lib.rs re-exports (`pub use module::{A, B};`).
fn reexports(lib: &str) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    for stmt in lib.split(';') {
        let stmt = stmt.trim();
        let Some(path) = stmt.strip_prefix("pub use ") else {
            continue;
        };
        let Some((module, items)) = path.split_once("::") else {
            continue;
        };
        let items = items.trim_start_matches('{').trim_end_matches('}');
        for item in items.split(',') {
            let item = item.trim();
            let name = item.rsplit(" as ").next().unwrap_or(item).trim();
            if !name.is_empty() {
                map.insert(name.to_string(), module.to_string());
            }
        }
    }
    map
}

/// The dependency graph of the crate whose sources are in `src` (one file per module; a
/// directory module `x/mod.rs` with its children counts as one module `x`).
fn module_graph(src: &Path) -> Graph {
    let lib = code_only(&std::fs::read_to_string(src.join("lib.rs")).expect("lib.rs"));
    let reexported = reexports(&lib);
    let mut files: Vec<(String, PathBuf)> = Vec::new();
    for entry in std::fs::read_dir(src).expect("src dir") {
        let path = entry.expect("dir entry").path();
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        if path.is_dir() {
            for sub in std::fs::read_dir(&path).expect("module dir") {
                files.push((name.clone(), sub.expect("dir entry").path()));
            }
        } else if path.extension().is_some_and(|e| e == "rs") && name != "lib" {
            files.push((name, path));
        }
    }
    let modules: BTreeSet<String> = files.iter().map(|(m, _)| m.clone()).collect();
    let mut graph: Graph = modules
        .iter()
        .map(|m| (m.clone(), BTreeSet::new()))
        .collect();
    for (module, path) in &files {
        let code = code_only(&std::fs::read_to_string(path).expect("source file"));
        for name in crate_paths(&code) {
            let target = if modules.contains(&name) {
                Some(name)
            } else {
                reexported.get(&name).cloned()
            };
            if let Some(t) = target.filter(|t| t != module) {
                graph.get_mut(module).unwrap().insert(t);
            }
        }
    }
    graph
}

/// The strongly connected components with more than one module: the import cycles.
fn cycles(graph: &Graph) -> Vec<Vec<String>> {
    // Two modules are in one cycle when each reaches the other.
    let reach = |from: &String| {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.clone()];
        while let Some(m) = stack.pop() {
            for d in &graph[&m] {
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

/// The listing: one line per layer, each module with the modules it uses.
fn listing(graph: &Graph) -> String {
    let mut layer: BTreeMap<&String, usize> = BTreeMap::new();
    while layer.len() < graph.len() {
        for (m, deps) in graph {
            if layer.contains_key(m) {
                continue;
            }
            if deps.iter().all(|d| layer.contains_key(d)) {
                let l = deps.iter().map(|d| layer[d] + 1).max().unwrap_or(0);
                layer.insert(m, l);
            }
        }
    }
    let top = layer.values().copied().max().unwrap_or(0);
    let mut out = String::new();
    for l in 0..=top {
        out.push_str(&format!("layer {l}:\n"));
        for (m, deps) in graph.iter().filter(|(m, _)| layer[m] == l) {
            if deps.is_empty() {
                out.push_str(&format!("  {m}\n"));
            } else {
                let deps: Vec<&str> = deps.iter().map(String::as_str).collect();
                out.push_str(&format!("  {m} -> {}\n", deps.join(", ")));
            }
        }
    }
    out
}

fn check_crate(name: &str) {
    let root = workspace_root();
    let graph = module_graph(&root.join(name).join("src"));
    assert!(
        graph.len() > 5,
        "{name}: found only {} modules: the source scan is broken",
        graph.len()
    );
    let cyc = cycles(&graph);
    assert!(
        cyc.is_empty(),
        "{name} has import cycles (modules that use each other, directly or through others): \
         {cyc:?}\n{:#?}",
        graph
    );
    let want = listing(&graph);
    println!("{name}:\n{want}");
    let doc = std::fs::read_to_string(root.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let begin = format!("<!-- module-graph:{name}:begin -->\n```text\n");
    let end = "```\n<!-- module-graph:end -->";
    let shown = doc
        .split_once(&begin)
        .and_then(|(_, rest)| rest.split_once(end))
        .map(|(block, _)| block);
    assert_eq!(
        shown,
        Some(want.as_str()),
        "ARCHITECTURE.md must show {name}'s module graph as it is; put this between \
         `{}` and `{end}`:\n{want}",
        begin.trim_end()
    );
}

#[test]
fn gc_runtime_modules_form_no_cycle_and_match_the_architecture_doc() {
    check_crate("gc-runtime");
}

#[test]
fn gc_core_modules_form_no_cycle_and_match_the_architecture_doc() {
    check_crate("gc-core");
}

#[test]
fn the_scan_sees_grouped_imports_reexports_and_ignores_comments_and_strings() {
    let code = code_only(
        "use crate::{a::X, b};\n// crate::c\n/* crate::d */\nlet s = \"crate::e\";\n\
         crate::f::g(); let c = '\"'; crate::Item;",
    );
    assert_eq!(crate_paths(&code), ["a", "b", "f", "Item"]);
    let re = reexports("pub use m::{Item, Other as O}; pub use n::Thing;");
    assert_eq!(re["Item"], "m");
    assert_eq!(re["O"], "m");
    assert_eq!(re["Thing"], "n");
    let mut g = Graph::new();
    g.insert("x".into(), ["y".to_string()].into());
    g.insert("y".into(), ["x".to_string()].into());
    g.insert("z".into(), ["x".to_string()].into());
    assert_eq!(cycles(&g), vec![vec!["x".to_string(), "y".to_string()]]);
}
