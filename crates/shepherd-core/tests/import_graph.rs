//! The workspace's reading order is its dependency order: within every crate, no
//! source file imports, directly or through others, a file that imports it back.
//!
//! A file imports another when it names an item by a path that resolves into the
//! other file's module: `use crate::a::b::X`, `use super::X`, `pub use child::Y`
//! (a re-export), or a qualified path in code such as `super::error::Error::Gone`.
//! A `mod child;` line is not an import: a parent owns its children, and a child may
//! use what its parent defines. A path resolves to the deepest module it names, so
//! `crate::run::Error` points at `run/mod.rs` (which re-exports it) and
//! `crate::run::error::Error` at `run/error.rs`.
//!
//! Crates import each other in one direction only (Cargo refuses a cycle), so the
//! check is per crate root (`lib.rs`, `main.rs`, each `bin/*.rs`). It parses with
//! `syn`, so `use` groups, renames, globs and inline modules are read as rustc reads
//! them. Run it alone with `cargo test -p shepherd-core --test import_graph`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is how a test fails

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// Crates whose cycles are reported but do not fail the test, each with
/// why. None: every crate's files form a graph without cycles.
const KNOWN_CYCLES: &[&str] = &[];

type Edges = Vec<(PathBuf, PathBuf)>;

#[test]
fn no_two_source_files_import_each_other() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("crates/ is the parent of shepherd-core")
        .to_path_buf();
    let mut found: Vec<(String, Vec<String>, Vec<String>)> = Vec::new();
    let mut roots_seen = 0;
    for entry in sorted_dir(&crates) {
        let src = entry.join("src");
        if !src.is_dir() {
            continue;
        }
        let name = entry
            .file_name()
            .and_then(|n| n.to_str())
            .expect("crate directory names are UTF-8")
            .to_string();
        for root in crate_roots(&src) {
            roots_seen += 1;
            let graph = Graph::load(&root);
            let file_cycles = graph.cycles().into_iter().map(|cycle| {
                let edges = graph.edges_within(&cycle);
                (cycle, edges)
            });
            for (cycle, edges) in file_cycles.chain(graph.module_cycles()) {
                let files: Vec<String> = cycle.iter().map(|f| relative(f, &src)).collect();
                let edges = edges
                    .into_iter()
                    .map(|(a, b)| format!("{} -> {}", relative(&a, &src), relative(&b, &src)))
                    .collect();
                found.push((name.clone(), files, edges));
            }
        }
    }
    assert!(
        roots_seen >= 7,
        "found only {roots_seen} crate roots under {crates:?}"
    );

    let mut report = String::new();
    let mut excused = BTreeSet::new();
    for (krate, files, edges) in &found {
        let line = format!("{krate}: a cycle through {}\n", files.join(", "));
        let mut text = line;
        for edge in edges {
            text.push_str(&format!("    {edge}\n"));
        }
        if KNOWN_CYCLES.contains(&krate.as_str()) {
            excused.insert(krate.as_str());
            eprint!("known (see KNOWN_CYCLES): {text}");
        } else {
            report.push_str(&text);
        }
    }
    for krate in KNOWN_CYCLES {
        if !excused.contains(krate) {
            report.push_str(&format!(
                "{krate} has no import cycle left: remove it from KNOWN_CYCLES\n"
            ));
        }
    }
    assert!(report.is_empty(), "import cycles:\n{report}");
}

/// A small crate with one cycle and one clean pair, so the check can fail.
#[test]
fn the_check_finds_a_cycle_through_a_re_export_and_ignores_mod_lines() {
    let dir = tempdir("files");
    let src = dir.join("src");
    std::fs::create_dir_all(src.join("run")).unwrap();
    std::fs::write(
        src.join("lib.rs"),
        "mod run; mod round; mod error;\npub use error::Error;\n",
    )
    .unwrap();
    std::fs::write(src.join("error.rs"), "pub struct Error;\n").unwrap();
    std::fs::write(
        src.join("run/mod.rs"),
        "mod imp;\npub mod options;\npub use imp::Run;\n",
    )
    .unwrap();
    std::fs::write(
        src.join("run/imp.rs"),
        "use crate::round::Runner;\npub struct Run(Runner);\nfn f() -> crate::Error { crate::Error }\n",
    )
    .unwrap();
    std::fs::write(src.join("run/options.rs"), "pub struct Options;\n").unwrap();
    std::fs::write(
        src.join("round.rs"),
        "use crate::run::{self, options::Options};\npub struct Runner(Options);\nmod tests { use super::*; }\n",
    )
    .unwrap();
    let graph = Graph::load(&src.join("lib.rs"));
    let cycles: Vec<Vec<String>> = graph
        .cycles()
        .iter()
        .map(|c| c.iter().map(|f| relative(f, &src)).collect())
        .collect();
    // imp.rs -> round.rs (Runner) -> run/mod.rs (`run` itself) -> imp.rs (re-export);
    // imp.rs -> lib.rs -> error.rs is a chain, not a cycle.
    assert_eq!(
        cycles,
        vec![vec![
            "round.rs".to_string(),
            "run/imp.rs".to_string(),
            "run/mod.rs".to_string()
        ]]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Two directories whose files lean on each other, no two files importing
/// each other: a cycle between the modules, as `run` and `round` were.
#[test]
fn the_check_finds_a_cycle_between_sibling_modules() {
    let dir = tempdir("modules");
    let src = dir.join("src");
    for d in ["run", "round"] {
        std::fs::create_dir_all(src.join(d)).unwrap();
    }
    let files = [
        ("lib.rs", "mod run; mod round;\n"),
        ("run/mod.rs", "mod imp; pub mod error;\n"),
        ("run/imp.rs", "use crate::round::runner::Runner;\n"),
        ("run/error.rs", "pub struct Error;\n"),
        ("round/mod.rs", "pub mod runner; mod fix;\n"),
        ("round/runner.rs", "pub struct Runner;\n"),
        ("round/fix.rs", "use crate::run::error::Error;\n"),
    ];
    for (path, text) in files {
        std::fs::write(src.join(path), text).unwrap();
    }
    let graph = Graph::load(&src.join("lib.rs"));
    assert!(graph.cycles().is_empty());
    let cycles: Vec<Vec<String>> = graph
        .module_cycles()
        .iter()
        .map(|(c, _)| c.iter().map(|f| relative(f, &src)).collect())
        .collect();
    assert_eq!(
        cycles,
        vec![vec!["round/mod.rs".to_string(), "run/mod.rs".to_string()]]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

fn tempdir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("import-graph-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn sorted_dir(dir: &Path) -> Vec<PathBuf> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("read {dir:?}: {e}"))
        .map(|e| e.expect("directory entry").path())
        .collect();
    entries.sort();
    entries
}

fn crate_roots(src: &Path) -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = ["lib.rs", "main.rs"]
        .iter()
        .map(|f| src.join(f))
        .filter(|p| p.is_file())
        .collect();
    let bin = src.join("bin");
    if bin.is_dir() {
        for entry in sorted_dir(&bin) {
            if entry.extension().is_some_and(|e| e == "rs") {
                roots.push(entry);
            } else if entry.join("main.rs").is_file() {
                roots.push(entry.join("main.rs"));
            }
        }
    }
    roots
}

fn relative(file: &Path, src: &Path) -> String {
    file.strip_prefix(src)
        .unwrap_or(file)
        .to_string_lossy()
        .into_owned()
}

/// One crate root's modules and the file-level import graph between them.
struct Graph {
    /// Module path (`["round", "fix"]`) to the file that holds it.
    modules: BTreeMap<Vec<String>, PathBuf>,
    edges: BTreeMap<PathBuf, BTreeSet<PathBuf>>,
}

/// A path named in a file, with the module it is written in.
struct Reference {
    file: PathBuf,
    module: Vec<String>,
    path: Vec<String>,
}

impl Graph {
    fn load(root: &Path) -> Graph {
        let mut modules = BTreeMap::new();
        let mut references = Vec::new();
        let dir = root
            .parent()
            .expect("a crate root is in src/")
            .to_path_buf();
        read_module(root, Vec::new(), dir, &mut modules, &mut references);
        let mut edges: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
        for file in modules.values() {
            edges.entry(file.clone()).or_default();
        }
        for reference in &references {
            if let Some(target) = resolve(&modules, reference) {
                if target != reference.file {
                    edges
                        .entry(reference.file.clone())
                        .or_default()
                        .insert(target);
                }
            }
        }
        Graph { modules, edges }
    }

    /// Every strongly connected component of more than one file, each sorted
    /// (Tarjan's algorithm).
    fn cycles(&self) -> Vec<Vec<PathBuf>> {
        struct State<'a> {
            edges: &'a BTreeMap<PathBuf, BTreeSet<PathBuf>>,
            index: BTreeMap<&'a PathBuf, usize>,
            low: BTreeMap<&'a PathBuf, usize>,
            stack: Vec<&'a PathBuf>,
            on_stack: BTreeSet<&'a PathBuf>,
            out: Vec<Vec<PathBuf>>,
        }
        fn connect<'a>(s: &mut State<'a>, v: &'a PathBuf) {
            let n = s.index.len();
            s.index.insert(v, n);
            s.low.insert(v, n);
            s.stack.push(v);
            s.on_stack.insert(v);
            let edges = s.edges;
            for w in &edges[v] {
                if !s.index.contains_key(w) {
                    connect(s, w);
                    let low = s.low[v].min(s.low[w]);
                    s.low.insert(v, low);
                } else if s.on_stack.contains(w) {
                    let low = s.low[v].min(s.index[w]);
                    s.low.insert(v, low);
                }
            }
            if s.low[v] == s.index[v] {
                let mut component = Vec::new();
                loop {
                    let w = s.stack.pop().expect("v is on the stack");
                    s.on_stack.remove(w);
                    component.push(w.clone());
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    s.out.push(component);
                }
            }
        }
        let mut state = State {
            edges: &self.edges,
            index: BTreeMap::new(),
            low: BTreeMap::new(),
            stack: Vec::new(),
            on_stack: BTreeSet::new(),
            out: Vec::new(),
        };
        for v in self.edges.keys() {
            if !state.index.contains_key(v) {
                connect(&mut state, v);
            }
        }
        state.out.sort();
        state.out
    }

    /// The cycles between sibling modules: for every module, each file below it
    /// stands for the child module it is in (`round/fix.rs` for `round` at the crate
    /// root), so `run/imp.rs -> round/mod.rs` and `round/fix.rs -> run/error.rs` are
    /// a cycle `run <-> round` although no two of those files import each other. A
    /// cycle is reported by the child modules' own files (`mod.rs` or `x.rs`).
    fn module_cycles(&self) -> Vec<(Vec<PathBuf>, Edges)> {
        let mut out = Vec::new();
        for parent in self.modules.keys() {
            let child_of = |file: &PathBuf| -> Option<Vec<String>> {
                let module = self.file_module(file)?;
                if module.len() <= parent.len() || !module.starts_with(parent) {
                    return None;
                }
                Some(module[..=parent.len()].to_vec())
            };
            // Child module's file -> child module's file, with the file edges behind it.
            let mut edges: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
            let mut witnesses: Vec<(PathBuf, PathBuf, PathBuf, PathBuf)> = Vec::new();
            for (from, tos) in &self.edges {
                let Some(a) = child_of(from) else { continue };
                for to in tos {
                    let Some(b) = child_of(to) else { continue };
                    if a != b {
                        let (fa, fb) = (self.modules[&a].clone(), self.modules[&b].clone());
                        edges.entry(fb.clone()).or_default();
                        edges.entry(fa.clone()).or_default().insert(fb.clone());
                        witnesses.push((fa, fb, from.clone(), to.clone()));
                    }
                }
            }
            let graph = Graph {
                modules: BTreeMap::new(),
                edges,
            };
            for cycle in graph.cycles() {
                // A cycle of single files is already a file cycle.
                if !cycle.iter().any(|f| self.is_directory_module(f)) {
                    continue;
                }
                let members: BTreeSet<&PathBuf> = cycle.iter().collect();
                let shown = witnesses
                    .iter()
                    .filter(|(fa, fb, _, _)| members.contains(fa) && members.contains(fb))
                    .map(|(_, _, from, to)| (from.clone(), to.clone()))
                    .collect();
                out.push((cycle, shown));
            }
        }
        out.sort();
        out.dedup();
        out
    }

    /// The module path a file is the root of (its outermost module).
    fn file_module(&self, file: &PathBuf) -> Option<Vec<String>> {
        self.modules
            .iter()
            .filter(|(_, f)| *f == file)
            .map(|(m, _)| m.clone())
            .min_by_key(|m| m.len())
    }

    fn is_directory_module(&self, file: &Path) -> bool {
        let Some(module) = self.file_module(&file.to_path_buf()) else {
            return false;
        };
        self.modules
            .iter()
            .any(|(m, f)| m.len() > module.len() && m.starts_with(&module) && f != file)
    }

    fn edges_within(&self, files: &[PathBuf]) -> Edges {
        let set: BTreeSet<&PathBuf> = files.iter().collect();
        let mut out = Vec::new();
        for from in files {
            let Some(tos) = self.edges.get(from) else {
                continue;
            };
            for to in tos {
                if set.contains(to) {
                    out.push((from.clone(), to.clone()));
                }
            }
        }
        out
    }
}

/// Parses `file`, the module at `path`, whose `mod x;` children live in `dir`.
fn read_module(
    file: &Path,
    path: Vec<String>,
    dir: PathBuf,
    modules: &mut BTreeMap<Vec<String>, PathBuf>,
    references: &mut Vec<Reference>,
) {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("read {file:?}: {e}"));
    let ast = syn::parse_file(&text).unwrap_or_else(|e| panic!("parse {file:?}: {e}"));
    modules.insert(path.clone(), file.to_path_buf());
    let mut reader = Reader {
        file: file.to_path_buf(),
        stack: vec![(path, dir)],
        children: Vec::new(),
        references: Vec::new(),
        inline: Vec::new(),
    };
    reader.visit_file(&ast);
    references.append(&mut reader.references);
    for inline in reader.inline {
        modules.insert(inline, file.to_path_buf());
    }
    for (child_path, child_file, child_dir) in reader.children {
        read_module(&child_file, child_path, child_dir, modules, references);
    }
}

struct Reader {
    file: PathBuf,
    /// The module being read and the directory of its `mod x;` children.
    stack: Vec<(Vec<String>, PathBuf)>,
    children: Vec<(Vec<String>, PathBuf, PathBuf)>,
    inline: Vec<Vec<String>>,
    references: Vec<Reference>,
}

impl Reader {
    fn current(&self) -> &(Vec<String>, PathBuf) {
        self.stack
            .last()
            .expect("the file's own module is never popped")
    }

    fn refer(&mut self, path: Vec<String>) {
        let module = self.current().0.clone();
        self.references.push(Reference {
            file: self.file.clone(),
            module,
            path,
        });
    }
}

impl<'ast> Visit<'ast> for Reader {
    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        let name = item.ident.to_string();
        let (parent, dir) = self.current().clone();
        let mut path = parent;
        path.push(name.clone());
        match &item.content {
            None => {
                let explicit = item.attrs.iter().find_map(|a| {
                    if !a.path().is_ident("path") {
                        return None;
                    }
                    match &a.meta {
                        syn::Meta::NameValue(nv) => match &nv.value {
                            syn::Expr::Lit(syn::ExprLit {
                                lit: syn::Lit::Str(s),
                                ..
                            }) => Some(s.value()),
                            _ => None,
                        },
                        _ => None,
                    }
                });
                let (file, child_dir) = match explicit {
                    Some(p) => {
                        let file = dir.join(p);
                        let child_dir = file.parent().expect("a file has a parent").to_path_buf();
                        (file, child_dir)
                    }
                    None if dir.join(format!("{name}.rs")).is_file() => {
                        (dir.join(format!("{name}.rs")), dir.join(&name))
                    }
                    None => (dir.join(&name).join("mod.rs"), dir.join(&name)),
                };
                self.children.push((path, file, child_dir));
            }
            Some((_, items)) => {
                self.inline.push(path.clone());
                self.stack.push((path, dir.join(&name)));
                for item in items {
                    self.visit_item(item);
                }
                self.stack.pop();
            }
        }
    }

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        let mut paths = Vec::new();
        flatten(&item.tree, Vec::new(), &mut paths);
        for path in paths {
            self.refer(path);
        }
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        if path.leading_colon.is_none() && path.segments.len() >= 2 {
            let segments = path.segments.iter().map(|s| s.ident.to_string()).collect();
            self.refer(segments);
        } else if path.segments.len() == 1 {
            // `crate`, `self`, `super` alone (as in `pub(super)`) name no item.
        }
        syn::visit::visit_path(self, path);
    }

    fn visit_vis_restricted(&mut self, _: &'ast syn::VisRestricted) {
        // `pub(in crate::a)` and `pub(super)` restrict visibility; they import nothing.
    }
}

fn flatten(tree: &syn::UseTree, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    match tree {
        syn::UseTree::Path(p) => {
            let mut prefix = prefix;
            prefix.push(p.ident.to_string());
            flatten(&p.tree, prefix, out);
        }
        syn::UseTree::Name(n) => {
            let mut path = prefix;
            if n.ident != "self" {
                path.push(n.ident.to_string());
            }
            out.push(path);
        }
        syn::UseTree::Rename(r) => {
            let mut path = prefix;
            if r.ident != "self" {
                path.push(r.ident.to_string());
            }
            out.push(path);
        }
        syn::UseTree::Glob(_) => out.push(prefix),
        syn::UseTree::Group(g) => {
            for item in &g.items {
                flatten(item, prefix.clone(), out);
            }
        }
    }
}

/// The file a path written in `reference.module` points into, if it is this crate's.
fn resolve(modules: &BTreeMap<Vec<String>, PathBuf>, reference: &Reference) -> Option<PathBuf> {
    let path = &reference.path;
    let first = path.first()?;
    let mut absolute: Vec<String> = match first.as_str() {
        "crate" => path[1..].to_vec(),
        "self" => {
            let mut a = reference.module.clone();
            a.extend_from_slice(&path[1..]);
            a
        }
        "super" => {
            let mut a = reference.module.clone();
            let mut rest = &path[..];
            while rest.first().is_some_and(|s| s == "super") {
                a.pop();
                rest = &rest[1..];
            }
            a.extend_from_slice(rest);
            a
        }
        _ => {
            // A relative path (`child::Item`) names a child module of the current one;
            // anything else is another crate or a local name.
            let mut a = reference.module.clone();
            a.push(first.clone());
            if !modules.contains_key(&a) {
                return None;
            }
            a.extend_from_slice(&path[1..]);
            a
        }
    };
    loop {
        if let Some(file) = modules.get(&absolute) {
            return Some(file.clone());
        }
        absolute.pop()?;
    }
}
