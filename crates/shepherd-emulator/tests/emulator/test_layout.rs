//! The crate's layout: no two source files import each other, directly or
//! around a loop, so reading order is dependency order (issue 12).
//!
//! A file "imports" another when one of its `use` trees, or a `crate::…`
//! or `super::…` path in its code, names an item of the other (through
//! `pub use` re-exports of a `mod.rs` to the file that defines the item).
//! Unit tests (`#[cfg(test)] mod tests`) are left out.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use regex::Regex;

type Graph = BTreeMap<String, BTreeSet<String>>;

/// Module path (`graphql/view`, `""` for `lib.rs`) to source, tests cut.
fn sources(root: &Path) -> BTreeMap<String, String> {
    let comment = Regex::new(r"//[^\n]*").unwrap();
    let mut out = BTreeMap::new();
    for entry in walkdir::WalkDir::new(root) {
        let entry = entry.unwrap();
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let rel = path.strip_prefix(root).unwrap().to_string_lossy();
        let mut module = rel.trim_end_matches(".rs").replace('\\', "/");
        if module == "lib" {
            module.clear();
        } else if let Some(parent) = module.strip_suffix("/mod") {
            module = parent.to_owned();
        }
        let mut text = std::fs::read_to_string(path).unwrap();
        if let Some(at) = text.find("#[cfg(test)]\nmod tests") {
            text.truncate(at);
        }
        out.insert(module, comment.replace_all(&text, "").into_owned());
    }
    out
}

/// `a::{b, c::{d, e as f}}` as paths: `a::b`, `a::c::d`, `a::c::e`.
fn flatten(tree: &str) -> Vec<Vec<String>> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        let path = tree.split(" as ").next().unwrap_or_default().trim();
        return vec![path.split("::").map(str::to_owned).collect()];
    };
    let prefix: Vec<String> = tree[..open]
        .split("::")
        .filter(|s| !s.trim().is_empty())
        .map(|s| s.trim().to_owned())
        .collect();
    let body = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let (mut items, mut depth, mut current) = (Vec::new(), 0, String::new());
    for c in body.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            _ => {}
        }
        if c == ',' && depth == 0 {
            items.push(std::mem::take(&mut current));
        } else {
            current.push(c);
        }
    }
    items.push(current);
    items
        .iter()
        .filter(|item| !item.trim().is_empty())
        .flat_map(|item| flatten(item))
        .map(|rest| prefix.iter().cloned().chain(rest).collect())
        .collect()
}

fn split(module: &str) -> Vec<String> {
    if module.is_empty() {
        Vec::new()
    } else {
        module.split('/').map(str::to_owned).collect()
    }
}

/// The path from the crate root, for paths relative to `module`.
fn absolute(module: &str, children: &BTreeSet<String>, path: &[String]) -> Option<Vec<String>> {
    let mut base = split(module);
    let first = path.first()?;
    let rest = match first.as_str() {
        "crate" => return Some(path[1..].to_vec()),
        "self" => &path[1..],
        "super" => {
            let mut rest = path;
            while rest.first().is_some_and(|s| s == "super") {
                base.pop();
                rest = &rest[1..];
            }
            rest
        }
        child if children.contains(child) => path,
        _ => return None,
    };
    Some(base.into_iter().chain(rest.iter().cloned()).collect())
}

fn import_graph(root: &Path) -> Graph {
    let files = sources(root);
    let use_re = Regex::new(r"\buse\s+([^;]+);").unwrap();
    let pub_use_re = Regex::new(r"\bpub(?:\([^)]*\))?\s+use\s+([^;]+);").unwrap();
    let path_re = Regex::new(r"(?:^|[^\w:])((?:crate|super)(?:::\w+)+)").unwrap();
    let mod_re = Regex::new(r"(?m)^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;").unwrap();
    let children: BTreeMap<&str, BTreeSet<String>> = files
        .iter()
        .map(|(m, text)| {
            let names = mod_re.captures_iter(text).map(|c| c[1].to_owned());
            (m.as_str(), names.collect())
        })
        .collect();
    // `pub use` re-exports: module -> name -> the path it stands for.
    let mut aliases: BTreeMap<&str, BTreeMap<String, Vec<String>>> = BTreeMap::new();
    for (module, text) in &files {
        for capture in pub_use_re.captures_iter(text) {
            for path in flatten(&capture[1]) {
                if let Some(target) = absolute(module, &children[module.as_str()], &path) {
                    let name = path.last().cloned().unwrap_or_default();
                    aliases.entry(module).or_default().insert(name, target);
                }
            }
        }
    }
    let resolve = |mut path: Vec<String>| -> Option<String> {
        for _ in 0..10 {
            let n = (1..=path.len())
                .rev()
                .find(|&n| files.contains_key(&path[..n].join("/")))?;
            let module = path[..n].join("/");
            match path
                .get(n)
                .and_then(|name| aliases.get(module.as_str())?.get(name))
            {
                Some(target) => path = target.clone(),
                None => return Some(module),
            }
        }
        None
    };
    let mut graph = Graph::new();
    for (module, text) in &files {
        let mut paths: Vec<Vec<String>> = Vec::new();
        for capture in use_re.captures_iter(text) {
            paths.extend(flatten(&capture[1]));
        }
        for capture in path_re.captures_iter(text) {
            paths.push(capture[1].split("::").map(str::to_owned).collect());
        }
        let edges = graph.entry(module.clone()).or_default();
        for path in paths {
            let path: Vec<String> = if path.last().is_some_and(|s| s == "self") {
                path[..path.len() - 1].to_vec()
            } else {
                path
            };
            let Some(full) = absolute(module, &children[module.as_str()], &path) else {
                continue;
            };
            if let Some(target) = resolve(full) {
                if !target.is_empty() && &target != module {
                    edges.insert(target);
                }
            }
        }
    }
    graph
}

/// A loop of imports, if there is one.
fn find_cycle(graph: &Graph) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &Graph,
        done: &mut BTreeSet<String>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = stack.iter().position(|n| n == node) {
            let mut cycle = stack[at..].to_vec();
            cycle.push(node.to_owned());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        stack.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, done, stack) {
                return Some(cycle);
            }
        }
        stack.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut done, &mut Vec::new()))
}

#[test]
fn no_two_source_files_import_each_other() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = import_graph(&root);
    // The check sees real imports: the server imports the shared state,
    // a GraphQL resolver imports the objects' handles.
    assert!(graph["server"].contains("shared"), "{graph:#?}");
    assert!(graph["graphql/pull_request/pull"].contains("graphql/objects"));
    assert!(
        graph["gitlab/common"].contains("rest/common"),
        "via rest's re-export"
    );
    if let Some(cycle) = find_cycle(&graph) {
        panic!("source files import each other: {}", cycle.join(" -> "));
    }
}

#[test]
fn the_check_finds_a_loop() {
    let mut graph = Graph::new();
    graph.entry("a".into()).or_default().insert("b".into());
    graph.entry("b".into()).or_default().insert("c".into());
    graph.entry("c".into()).or_default().insert("a".into());
    assert_eq!(
        find_cycle(&graph).unwrap(),
        ["a", "b", "c", "a"].map(String::from)
    );
    graph.get_mut("c").unwrap().clear();
    assert_eq!(find_cycle(&graph), None);
}
