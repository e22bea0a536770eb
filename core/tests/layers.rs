//! The workspace's layers, checked against its source.
//!
//! - The top-level modules of `core/src` depend one way, in the order of the picture in
//!   ARCHITECTURE.md (the block after `<!-- layers -->`): a module names only modules drawn on
//!   rows below its own. A new module must be drawn; a new upward `use` fails here, naming the
//!   file and the path.
//! - No circle runs between the files of `core/src` or of `registry-macros/src`.
//!
//! A file depends on another when it names an item defined there: through a `use`, or a path in
//! its code (`crate::call::dispose(..)`, `super::Entry`), with re-exports followed to the file
//! that defines the item. `mod` declarations are not dependencies; a re-export (`pub use`) is one
//! between modules, but not between files, since it only passes a name on. Test code
//! (`#[cfg(test)]`) is left out: a test may reach anywhere. Paths inside macro calls are read
//! from their tokens; a method call names no path, so what it reaches is not seen here.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use petgraph::algo::tarjan_scc;
use petgraph::graphmap::DiGraphMap;
use proc_macro2::{TokenStream, TokenTree};
use syn::visit_mut::{self, VisitMut};
use syn::{Attribute, Item, UseTree, Visibility};

/// One module of a crate: where it is written, what it declares and what it names.
struct Module {
    /// The path from the crate root (`["exec", "future"]`; empty for the root).
    path: Vec<String>,
    /// The file it is written in, relative to the crate's `src`.
    file: PathBuf,
    parent: Option<usize>,
    children: BTreeMap<String, usize>,
    /// Names brought in by `use` (`name` -> the path written), and whether each is re-exported.
    uses: BTreeMap<String, (Vec<String>, bool)>,
    /// `use path::*`.
    globs: Vec<(Vec<String>, bool)>,
    /// Names of the items defined here.
    items: BTreeSet<String>,
    /// Paths named in the module's code, outside `use` items.
    refs: Vec<Vec<String>>,
    /// Names of the items and modules declared here `#[doc(hidden)]`.
    hidden: BTreeSet<String>,
}

/// A crate's modules, read from its source.
struct Crate {
    src: PathBuf,
    modules: Vec<Module>,
}

/// What a path names: a module, or an item defined in a module.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Target {
    Module(usize),
    Item(usize),
}

impl Crate {
    fn read(src: &Path, root: &str) -> Self {
        let mut krate = Self {
            src: src.to_owned(),
            modules: Vec::new(),
        };
        let file = PathBuf::from(root);
        let items = krate.parse(&file);
        krate.module(Vec::new(), file, None, items);
        krate
    }

    fn parse(&self, file: &Path) -> Vec<Item> {
        let path = self.src.join(file);
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        syn::parse_file(&text)
            .unwrap_or_else(|e| panic!("cannot parse {}: {e}", path.display()))
            .items
    }

    /// Adds the module written as `items` in `file`, and its children.
    fn module(
        &mut self,
        path: Vec<String>,
        file: PathBuf,
        parent: Option<usize>,
        items: Vec<Item>,
    ) -> usize {
        let index = self.modules.len();
        self.modules.push(Module {
            path: path.clone(),
            file: file.clone(),
            parent,
            children: BTreeMap::new(),
            uses: BTreeMap::new(),
            globs: Vec::new(),
            items: BTreeSet::new(),
            refs: Vec::new(),
            hidden: BTreeSet::new(),
        });
        let mut refs = Paths::default();
        for mut item in items {
            if is_test(attributes(&item)) {
                continue;
            }
            if is_hidden(attributes(&item)) {
                let name = match &item {
                    Item::Mod(module) => Some(module.ident.to_string()),
                    other => item_name(other),
                };
                self.modules[index].hidden.extend(name);
            }
            match &mut item {
                Item::Mod(module) => {
                    let name = module.ident.to_string();
                    let mut child_path = path.clone();
                    child_path.push(name.clone());
                    let child = match module.content.take() {
                        Some((_, inline)) => {
                            self.module(child_path, file.clone(), Some(index), inline)
                        }
                        None => {
                            let child_file = self.child_file(&file, &name);
                            let inner = self.parse(&child_file);
                            self.module(child_path, child_file, Some(index), inner)
                        }
                    };
                    self.modules[index].children.insert(name, child);
                }
                Item::Use(item_use) => {
                    let reexport = !matches!(item_use.vis, Visibility::Inherited);
                    let mut flat = Vec::new();
                    flatten(&item_use.tree, &mut Vec::new(), &mut flat);
                    let module = &mut self.modules[index];
                    for (name, path) in flat {
                        match name {
                            Some(name) => {
                                module.uses.insert(name, (path, reexport));
                            }
                            None => module.globs.push((path, reexport)),
                        }
                    }
                }
                other => {
                    if let Some(name) = item_name(other) {
                        self.modules[index].items.insert(name);
                    }
                    refs.visit_item_mut(other);
                }
            }
        }
        self.modules[index].refs = refs.0;
        index
    }

    /// The file of `mod name;` declared in `file`.
    fn child_file(&self, file: &Path, name: &str) -> PathBuf {
        let stem = file
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default();
        let dir = match stem {
            "lib" | "main" | "mod" => file.parent().map(Path::to_owned).unwrap_or_default(),
            _ => file.with_extension(""),
        };
        let flat = dir.join(format!("{name}.rs"));
        if self.src.join(&flat).exists() {
            flat
        } else {
            dir.join(name).join("mod.rs")
        }
    }

    /// What `path`, written in module `from`, names inside this crate; `None` for what lies
    /// outside it (the standard library, other crates, local names).
    fn resolve(&self, from: usize, path: &[String], depth: usize) -> Option<Target> {
        if depth > 32 {
            return None;
        }
        let (first, rest) = path.split_first()?;
        match first.as_str() {
            "crate" => self.walk(0, rest, depth),
            "self" => self.walk(from, rest, depth),
            "super" => {
                let mut at = self.modules[from].parent?;
                let mut rest = rest;
                while rest.first().is_some_and(|s| s == "super") {
                    at = self.modules[at].parent?;
                    rest = &rest[1..];
                }
                self.walk(at, rest, depth)
            }
            name => {
                let module = &self.modules[from];
                if let Some(&child) = module.children.get(name) {
                    return self.walk(child, rest, depth);
                }
                let (bound, _) = module.uses.get(name)?;
                let mut full = bound.clone();
                full.extend_from_slice(rest);
                // `use serde;` binds a name to itself: outside the crate.
                if full.first() == Some(&first.clone()) && bound.len() == 1 {
                    return None;
                }
                self.resolve(from, &full, depth + 1)
            }
        }
    }

    /// What `rest` names, from module `at`.
    fn walk(&self, at: usize, rest: &[String], depth: usize) -> Option<Target> {
        let Some((name, after)) = rest.split_first() else {
            return Some(Target::Module(at));
        };
        let module = &self.modules[at];
        if let Some(&child) = module.children.get(name) {
            return self.walk(child, after, depth);
        }
        if module.items.contains(name) {
            return Some(Target::Item(at));
        }
        if let Some((bound, _)) = module.uses.get(name) {
            let mut full = bound.clone();
            full.extend_from_slice(after);
            return self.resolve(at, &full, depth + 1);
        }
        for (glob, _) in &module.globs {
            let mut full = glob.clone();
            full.extend_from_slice(rest);
            if let Some(found) = self.resolve(at, &full, depth + 1) {
                return Some(found);
            }
        }
        None
    }

    /// Every dependency of a module on another: `(from, to, what names it)`. With
    /// `reexports`, a `pub use` counts too.
    fn dependencies(&self, reexports: bool) -> Vec<(usize, usize, String)> {
        let mut found = Vec::new();
        for (index, module) in self.modules.iter().enumerate() {
            let uses = (module.uses.values())
                .filter(|(_, reexport)| reexports || !reexport)
                .map(|(path, _)| path);
            let globs = (module.globs.iter())
                .filter(|(_, reexport)| reexports || !reexport)
                .map(|(path, _)| path);
            for path in uses.chain(&module.refs) {
                if let Some(Target::Item(to)) = self.resolve(index, path, 0) {
                    found.push((index, to, path.join("::")));
                }
            }
            for path in globs {
                if let Some(Target::Module(to) | Target::Item(to)) = self.resolve(index, path, 0) {
                    found.push((index, to, format!("{}::*", path.join("::"))));
                }
            }
        }
        found
    }

    /// The circles between files: each a list of files that reach one another, with what
    /// each of them names in the others.
    fn file_circles(&self) -> Vec<(Vec<String>, Vec<String>)> {
        let files: Vec<String> = self.modules.iter().map(|m| show(&m.file)).collect();
        let mut graph = DiGraphMap::<&str, ()>::new();
        let mut named: BTreeMap<(&str, &str), BTreeSet<String>> = BTreeMap::new();
        for file in &files {
            graph.add_node(file);
        }
        for (from, to, path) in self.dependencies(false) {
            let (from, to) = (files[from].as_str(), files[to].as_str());
            if from != to {
                graph.add_edge(from, to, ());
                named.entry((from, to)).or_default().insert(path);
            }
        }
        tarjan_scc(&graph)
            .into_iter()
            .filter(|group| group.len() > 1)
            .map(|group| {
                let mut group: Vec<String> = group.into_iter().map(str::to_owned).collect();
                group.sort();
                let mut why = Vec::new();
                for ((from, to), paths) in &named {
                    if group.iter().any(|f| f == from) && group.iter().any(|f| f == to) {
                        let paths: Vec<&str> = paths.iter().map(String::as_str).collect();
                        why.push(format!("  {from} -> {to}: {}", paths.join(", ")));
                    }
                }
                (group, why)
            })
            .collect()
    }
}

/// The circles as a failure message: each circle, then what each file names in another.
fn circles_message(circles: &[(Vec<String>, Vec<String>)]) -> String {
    let mut out = String::new();
    for (group, why) in circles {
        out.push_str(&group.join(" <-> "));
        out.push('\n');
        for line in why {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

fn show(path: &Path) -> String {
    path.to_string_lossy().replace('\\', "/")
}

/// The paths a piece of code names, outside `use` items and test code.
#[derive(Default)]
struct Paths(Vec<Vec<String>>);

impl VisitMut for Paths {
    fn visit_path_mut(&mut self, path: &mut syn::Path) {
        self.0.push(
            (path.segments.iter())
                .map(|segment| segment.ident.to_string())
                .collect(),
        );
        visit_mut::visit_path_mut(self, path);
    }

    fn visit_item_use_mut(&mut self, item: &mut syn::ItemUse) {
        // A `use` inside a function: what it brings in is named there.
        let mut flat = Vec::new();
        flatten(&item.tree, &mut Vec::new(), &mut flat);
        self.0.extend(flat.into_iter().map(|(_, path)| path));
    }

    fn visit_item_mut(&mut self, item: &mut Item) {
        if !is_test(attributes(item)) {
            visit_mut::visit_item_mut(self, item);
        }
    }

    fn visit_impl_item_fn_mut(&mut self, item: &mut syn::ImplItemFn) {
        if !is_test(&item.attrs) {
            visit_mut::visit_impl_item_fn_mut(self, item);
        }
    }

    fn visit_attribute_mut(&mut self, _: &mut Attribute) {}

    fn visit_macro_mut(&mut self, mac: &mut syn::Macro) {
        visit_mut::visit_macro_mut(self, mac);
        tokens_paths(mac.tokens.clone(), &mut self.0);
    }
}

/// The paths that start with `crate`, `self` or `super` in a macro's tokens.
fn tokens_paths(tokens: TokenStream, out: &mut Vec<Vec<String>>) {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    let mut i = 0;
    while i < tokens.len() {
        if let TokenTree::Group(group) = &tokens[i] {
            tokens_paths(group.stream(), out);
        }
        let starts = matches!(&tokens[i], TokenTree::Ident(id) if id == "crate" || id == "super" || id == "self");
        if !starts {
            i += 1;
            continue;
        }
        let mut path = vec![tokens[i].to_string()];
        let mut j = i + 1;
        while j + 2 < tokens.len() {
            let colons = matches!((&tokens[j], &tokens[j + 1]), (TokenTree::Punct(a), TokenTree::Punct(b)) if a.as_char() == ':' && b.as_char() == ':');
            match (&tokens[j + 2], colons) {
                (TokenTree::Ident(id), true) => {
                    path.push(id.to_string());
                    j += 3;
                }
                _ => break,
            }
        }
        if path.len() > 1 {
            out.push(path);
        }
        i = j.max(i + 1);
    }
}

/// Each name a `use` tree binds (`None` for a glob) with the path it binds.
fn flatten(tree: &UseTree, prefix: &mut Vec<String>, out: &mut Vec<(Option<String>, Vec<String>)>) {
    match tree {
        UseTree::Path(path) => {
            prefix.push(path.ident.to_string());
            flatten(&path.tree, prefix, out);
            prefix.pop();
        }
        UseTree::Name(name) => {
            let mut path = prefix.clone();
            let ident = name.ident.to_string();
            if ident == "self" {
                out.push((prefix.last().cloned(), path));
            } else {
                path.push(ident.clone());
                out.push((Some(ident), path));
            }
        }
        UseTree::Rename(rename) => {
            let mut path = prefix.clone();
            path.push(rename.ident.to_string());
            let name = rename.rename.to_string();
            // `use x as _;` brings a trait in, under no name.
            out.push((Some(name), path));
        }
        UseTree::Glob(_) => out.push((None, prefix.clone())),
        UseTree::Group(group) => {
            for tree in &group.items {
                flatten(tree, prefix, out);
            }
        }
    }
}

fn attributes(item: &Item) -> &[Attribute] {
    match item {
        Item::Const(i) => &i.attrs,
        Item::Enum(i) => &i.attrs,
        Item::ExternCrate(i) => &i.attrs,
        Item::Fn(i) => &i.attrs,
        Item::ForeignMod(i) => &i.attrs,
        Item::Impl(i) => &i.attrs,
        Item::Macro(i) => &i.attrs,
        Item::Mod(i) => &i.attrs,
        Item::Static(i) => &i.attrs,
        Item::Struct(i) => &i.attrs,
        Item::Trait(i) => &i.attrs,
        Item::TraitAlias(i) => &i.attrs,
        Item::Type(i) => &i.attrs,
        Item::Union(i) => &i.attrs,
        Item::Use(i) => &i.attrs,
        _ => &[],
    }
}

fn item_name(item: &Item) -> Option<String> {
    let ident = match item {
        Item::Const(i) => &i.ident,
        Item::Enum(i) => &i.ident,
        Item::Fn(i) => &i.sig.ident,
        Item::Static(i) => &i.ident,
        Item::Struct(i) => &i.ident,
        Item::Trait(i) => &i.ident,
        Item::TraitAlias(i) => &i.ident,
        Item::Type(i) => &i.ident,
        Item::Union(i) => &i.ident,
        Item::Macro(i) => i.ident.as_ref()?,
        _ => return None,
    };
    Some(ident.to_string())
}

/// `#[doc(hidden)]`.
fn is_hidden(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|attr| {
        attr.path().is_ident("doc")
            && attr
                .parse_args::<syn::Ident>()
                .is_ok_and(|ident| ident == "hidden")
    })
}

/// `#[cfg(test)]`.
fn is_test(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|attr| {
        attr.path().is_ident("cfg")
            && attr
                .parse_args::<syn::Ident>()
                .is_ok_and(|ident| ident == "test")
    })
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the crate sits in the workspace")
        .to_owned()
}

/// The rows of the picture in ARCHITECTURE.md, top (the front ends) first: each row's modules.
fn layers() -> Vec<Vec<String>> {
    let path = workspace().join("ARCHITECTURE.md");
    let text = std::fs::read_to_string(&path).expect("ARCHITECTURE.md");
    let start = text
        .find("<!-- layers -->")
        .expect("ARCHITECTURE.md draws the layers after a `<!-- layers -->` line");
    let block = &text[start..];
    let open = block.find("```").expect("the picture is a fenced block");
    let body = &block[open + 3..];
    let body = &body[body.find('\n').expect("a fence line") + 1..];
    let body = &body[..body.find("```").expect("the picture's block ends")];
    body.lines()
        .filter_map(|line| line.split_once('│').map(|(_, modules)| modules))
        .map(|modules| modules.split_whitespace().map(str::to_owned).collect())
        .collect()
}

#[test]
fn the_top_level_modules_depend_one_way_as_the_architecture_draws_them() {
    let krate = Crate::read(&workspace().join("core/src"), "lib.rs");
    let rows = layers();
    let mut row_of: BTreeMap<&str, usize> = BTreeMap::new();
    for (row, modules) in rows.iter().enumerate() {
        for module in modules {
            assert!(
                row_of.insert(module, row).is_none(),
                "ARCHITECTURE.md draws `{module}` twice"
            );
        }
    }
    let top: BTreeSet<&str> = krate.modules[0]
        .children
        .keys()
        .map(String::as_str)
        .collect();
    for module in &top {
        assert!(
            row_of.contains_key(module),
            "the module `{module}` is not in the picture of the layers in ARCHITECTURE.md: draw it on the row of what it is for"
        );
    }
    for module in row_of.keys() {
        assert!(
            top.contains(module),
            "ARCHITECTURE.md draws `{module}`, which is not a top-level module of core/src"
        );
    }
    let mut upward = Vec::new();
    for (from, to, named) in krate.dependencies(true) {
        let (Some(a), Some(b)) = (
            krate.modules[from].path.first(),
            krate.modules[to].path.first(),
        ) else {
            continue;
        };
        if a == b {
            continue;
        }
        // Rows are listed top first: a lower layer has a greater row.
        if row_of[a.as_str()] >= row_of[b.as_str()] {
            upward.push(format!(
                "{} names `{named}`: `{a}` may only use the modules drawn below it, and `{b}` is not",
                show(&krate.modules[from].file)
            ));
        }
    }
    upward.sort();
    upward.dedup();
    assert!(
        upward.is_empty(),
        "dependencies against the layers of ARCHITECTURE.md:\n{}",
        upward.join("\n")
    );
}

/// The source folders of the workspace's library crates.
const CRATES: [&str; 12] = [
    "core/src",
    "http/src",
    "mcp/src",
    "redis/src",
    "telemetry/src",
    "testing/src",
    "cli/src",
    "registry/src",
    "registry-macros/src",
    "rules/src",
    "parse/src",
    "json/src",
];

/// The front ends, each a crate on the core's public API.
const FRONT_ENDS: [&str; 6] = [
    "http/src",
    "mcp/src",
    "redis/src",
    "telemetry/src",
    "testing/src",
    "cli/src",
];

impl Crate {
    /// What of the hidden API (`#[doc(hidden)]`, `__private`, a `__name`) `path`, written in
    /// another crate as `tool_registry_core::…`, names: the hidden name, if any.
    fn hidden_in(&self, path: &[String]) -> Option<String> {
        let (first, rest) = path.split_first()?;
        if first != "tool_registry_core" {
            return None;
        }
        if let Some(name) = rest.iter().find(|name| name.starts_with("__")) {
            return Some(name.clone());
        }
        let mut prefix = vec!["crate".to_owned()];
        for name in rest {
            prefix.push(name.clone());
            let hidden_at = |module: usize| self.modules[module].hidden.contains(name);
            match self.resolve(0, &prefix, 0) {
                Some(Target::Module(module)) => {
                    let parent = self.modules[module].parent;
                    if parent.is_some_and(|parent| {
                        self.modules[parent].hidden.contains(
                            self.modules[module]
                                .path
                                .last()
                                .expect("a child has a name"),
                        )
                    }) {
                        return Some(name.clone());
                    }
                }
                Some(Target::Item(module)) if hidden_at(module) => return Some(name.clone()),
                Some(Target::Item(_)) => return None,
                _ => {}
            }
        }
        None
    }

    /// Every path written in the crate's code and `use` items, with its file.
    fn paths(&self) -> impl Iterator<Item = (&Path, &Vec<String>)> {
        self.modules.iter().flat_map(|module| {
            (module.uses.values().map(|(path, _)| path))
                .chain(module.globs.iter().map(|(path, _)| path))
                .chain(&module.refs)
                .map(|path| (module.file.as_path(), path))
        })
    }
}

/// A front end uses the core as any user's crate does: nothing of it that is `#[doc(hidden)]`,
/// under `__private`, or named `__…` (what `#[tool]` expands to). The compiler already keeps
/// them to the core's `pub` items; this keeps them off the part that is not API. A method called
/// as `value.method()` names no path and is not seen here.
#[test]
fn no_front_end_names_a_hidden_item_of_the_core() {
    let core = Crate::read(&workspace().join("core/src"), "lib.rs");
    let path = |text: &str| -> Vec<String> { text.split("::").map(str::to_owned).collect() };
    // The check finds what it is for, and passes the public API.
    assert_eq!(
        core.hidden_in(&path("tool_registry_core::__private::parse_args")),
        Some("__private".to_owned())
    );
    assert_eq!(
        core.hidden_in(&path("tool_registry_core::call::args::parse_args")),
        Some("parse_args".to_owned())
    );
    assert_eq!(
        core.hidden_in(&path("tool_registry_core::def::ToolDef::__new")),
        Some("__new".to_owned())
    );
    assert_eq!(
        core.hidden_in(&path("tool_registry_core::task::millis")),
        None
    );
    assert_eq!(core.hidden_in(&path("tool_registry_core::Registry")), None);
    let mut found = Vec::new();
    for src in FRONT_ENDS {
        let krate = Crate::read(&workspace().join(src), "lib.rs");
        for (file, path) in krate.paths() {
            if let Some(name) = core.hidden_in(path) {
                found.push(format!(
                    "{src}/{}: `{}` names `{name}`",
                    show(file),
                    path.join("::")
                ));
            }
        }
    }
    found.sort();
    found.dedup();
    assert!(
        found.is_empty(),
        "front ends naming what the core does not offer as API (make it public with docs, or move the work into the front end):\n{}",
        found.join("\n")
    );
}

#[test]
fn no_circle_runs_between_the_files_of_any_crate() {
    for src in CRATES {
        let circles = Crate::read(&workspace().join(src), "lib.rs").file_circles();
        assert!(
            circles.is_empty(),
            "files of {src} that depend on one another in a circle:\n{}",
            circles_message(&circles)
        );
    }
}

/// The check itself: a circle and an upward use, written as source, are found.
#[test]
fn the_check_finds_a_circle_and_follows_reexports() {
    let dir = tempfile::tempdir().unwrap();
    let write = |file: &str, text: &str| {
        let path = dir.path().join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("lib.rs", "mod a;\nmod b;\npub use a::A;\n");
    write(
        "a/mod.rs",
        "mod inner;\npub use inner::A;\npub(crate) fn helper() {}\n",
    );
    write("a/inner.rs", "pub struct A;\nfn f() { crate::b::g(); }\n");
    write(
        "b.rs",
        "use crate::A;\npub(crate) fn g() { let _ = A; }\n#[cfg(test)]\nmod tests { fn t() { crate::a::helper(); } }\n",
    );
    let krate = Crate::read(dir.path(), "lib.rs");
    let circles: Vec<Vec<String>> = (krate.file_circles().into_iter())
        .map(|(group, _)| group)
        .collect();
    assert_eq!(
        circles,
        vec![vec!["a/inner.rs".to_owned(), "b.rs".to_owned()]]
    );
    let named: BTreeSet<(String, String)> = (krate.dependencies(false).into_iter())
        .map(|(from, to, _)| {
            (
                show(&krate.modules[from].file),
                show(&krate.modules[to].file),
            )
        })
        .collect();
    assert!(
        !named.contains(&("b.rs".to_owned(), "a/mod.rs".to_owned())),
        "test code is left out"
    );
}

/// The `.rs` files a text names, each as `` `name.rs` `` or `` `dir/name.rs` `` within a line.
fn files_named(text: &str) -> BTreeSet<String> {
    (text.lines())
        .flat_map(|line| line.split('`').skip(1).step_by(2))
        .filter(|name| name.ends_with(".rs") && !name.contains(' '))
        .map(str::to_owned)
        .collect()
}

/// A module's own documentation: its `//!` lines.
fn module_doc(source: &str) -> String {
    (source.lines())
        .filter_map(|line| line.trim_start().strip_prefix("//!"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Each folder's `mod.rs` says what its files do: it names every file of the folder, and every
/// file it names without a folder is one of them.
#[test]
fn each_folder_map_names_its_files_and_only_them() {
    let mut wrong = Vec::new();
    for root in CRATES {
        let mut dirs = vec![workspace().join(root)];
        while let Some(dir) = dirs.pop() {
            let mut files = BTreeSet::new();
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|ext| ext == "rs") {
                    files.insert(path.file_name().unwrap().to_string_lossy().into_owned());
                }
            }
            let map = ["mod.rs", "lib.rs"]
                .into_iter()
                .find(|f| files.contains(*f));
            let Some(map) = map else { continue };
            let source = std::fs::read_to_string(dir.join(map)).unwrap();
            let named = files_named(&module_doc(&source));
            let mut mapped = named.clone();
            if source.contains("include_str!(\"../README.md\")") {
                // A crate root whose documentation is its README: ARCHITECTURE.md maps it.
                let architecture =
                    std::fs::read_to_string(workspace().join("ARCHITECTURE.md")).unwrap();
                mapped.extend(files_named(&architecture));
            }
            let shown = show(dir.strip_prefix(workspace()).unwrap());
            for file in &files {
                // The map itself, and the test modules of a folder, need no line.
                if file == map || file == "tests.rs" || mapped.contains(file) {
                    continue;
                }
                wrong.push(format!("{shown}/{map} does not say what `{file}` does"));
            }
            for name in named.iter().filter(|name| !name.contains('/')) {
                if !files.contains(name) && !dir.join(name.trim_end_matches(".rs")).is_dir() {
                    wrong.push(format!(
                        "{shown}/{map} names `{name}`, which is not in the folder"
                    ));
                }
            }
        }
    }
    wrong.sort();
    assert!(
        wrong.is_empty(),
        "folder maps out of date:\n{}",
        wrong.join("\n")
    );
}

/// Every file ARCHITECTURE.md names by its path is there: under a library crate's or the tools'
/// `src`, or the workspace.
#[test]
fn every_file_the_architecture_names_exists() {
    let text = std::fs::read_to_string(workspace().join("ARCHITECTURE.md")).unwrap();
    let roots = CRATES.iter().chain(&["tools/src", "tools", "tests", ""]);
    let mut missing = Vec::new();
    for name in files_named(&text) {
        if !name.contains('/') || name.contains('*') {
            continue;
        }
        if !roots
            .clone()
            .any(|root| workspace().join(root).join(&name).exists())
        {
            missing.push(name);
        }
    }
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md names files that are not there: {missing:?}"
    );
}
