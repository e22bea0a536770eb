//! Switches that hold across processes: `toolreg disable` and `toolreg enable` write the
//! switch file, every command reads it, and the long-running ones (`serve`, `mcp`) follow it,
//! so an operator turns a tool off in a running server (and its MCP clients hear
//! `list_changed`).

use std::collections::BTreeSet;
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Weak};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::Registry;
use crate::registry::Selector;
use crate::store::{JsonFile, StoreError};

/// The file switches are kept in, so that a `disable` in one process holds in every other.
pub const SWITCHES_ENV: &str = "TOOLREG_SWITCHES";
const SWITCHES_DEFAULT: &str = ".toolreg-switches.json";

/// How often a running server reads the switch file again.
const FOLLOW_EVERY: Duration = Duration::from_millis(250);

/// The switch file's flags.
#[derive(clap::Args)]
pub(super) struct SwitchFileArgs {
    /// Where tools switched off are kept [default: $TOOLREG_SWITCHES or ./.toolreg-switches.json].
    #[arg(long, global = true, value_name = "FILE")]
    switches: Option<PathBuf>,
}

/// `disable` and `enable`: which tools.
#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("selector").required(true)))]
pub(super) struct SwitchArgs {
    /// One tool, by name or alias.
    #[arg(group = "selector")]
    name: Option<String>,
    /// Every tool with this tag.
    #[arg(long, group = "selector")]
    tag: Option<String>,
    /// Every tool of this category.
    #[arg(long, group = "selector")]
    category: Option<String>,
}

/// The switch file: what is off, by name, tag and category.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
struct SwitchDoc {
    #[serde(default)]
    names: BTreeSet<String>,
    #[serde(default)]
    tags: BTreeSet<String>,
    #[serde(default)]
    categories: BTreeSet<String>,
    #[serde(flatten)]
    other: serde_json::Map<String, serde_json::Value>,
}

/// What a switch selects by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Name,
    Tag,
    Category,
}

impl SwitchDoc {
    fn selectors(&self) -> BTreeSet<(Kind, &str)> {
        let names = self.names.iter().map(|n| (Kind::Name, n.as_str()));
        let tags = self.tags.iter().map(|t| (Kind::Tag, t.as_str()));
        let categories = self.categories.iter().map(|c| (Kind::Category, c.as_str()));
        names.chain(tags).chain(categories).collect()
    }

    fn set(&mut self, kind: Kind) -> &mut BTreeSet<String> {
        match kind {
            Kind::Name => &mut self.names,
            Kind::Tag => &mut self.tags,
            Kind::Category => &mut self.categories,
        }
    }
}

fn selector((kind, value): (Kind, &str)) -> Selector {
    match kind {
        Kind::Name => Selector::name(value),
        Kind::Tag => Selector::tag(value),
        Kind::Category => Selector::category(value),
    }
}

impl SwitchFileArgs {
    fn file(&self) -> JsonFile {
        let path = self
            .switches
            .clone()
            .or_else(|| std::env::var_os(SWITCHES_ENV).map(PathBuf::from))
            .unwrap_or_else(|| PathBuf::from(SWITCHES_DEFAULT));
        JsonFile::new(path, "switch file")
    }

    /// Applies the file to `registry`; the state to follow from.
    pub(super) fn apply(&self, registry: &Registry) -> Result<Applied, StoreError> {
        let file = self.file();
        let doc: SwitchDoc = file.read()?;
        for each in doc.selectors() {
            registry.disable(selector(each));
        }
        Ok(Applied { file, doc })
    }

    /// `disable` (`off`) or `enable`: changes the file under its lock, and the registry.
    pub(super) fn switch(
        &self,
        args: &SwitchArgs,
        off: bool,
        registry: &Registry,
        out: &mut dyn Write,
    ) -> Result<(), StoreError> {
        let (kind, value) = match (&args.name, &args.tag, &args.category) {
            (Some(name), _, _) => {
                // An alias is kept as the tool's own name, as the registry does.
                let name = registry
                    .get(name)
                    .map_or(name.clone(), |t| t.name().to_owned());
                (Kind::Name, name)
            }
            (None, Some(tag), _) => (Kind::Tag, tag.clone()),
            (None, None, Some(category)) => (Kind::Category, category.clone()),
            (None, None, None) => unreachable!("clap requires one selector"),
        };
        self.file().update(|doc: &mut SwitchDoc| {
            let set = doc.set(kind);
            if off {
                set.insert(value.clone());
            } else {
                set.remove(&value);
            }
            Ok::<_, StoreError>(())
        })?;
        let covered = if off {
            registry.disable(selector((kind, &value)))
        } else {
            registry.enable(selector((kind, &value)))
        };
        let verb = if off { "disabled" } else { "enabled" };
        let _ = writeln!(
            out,
            "{verb} {} ({covered} tool{} here)",
            super::shown(&value),
            if covered == 1 { "" } else { "s" }
        );
        Ok(())
    }
}

/// The switch file as last applied to a registry.
pub(super) struct Applied {
    file: JsonFile,
    doc: SwitchDoc,
}

impl Applied {
    /// Follows the file from a thread of its own for as long as the registry lives: each
    /// change to it switches the registry's tools off and on, so its change channel (and MCP's
    /// `list_changed`) fires. A file that cannot be read is logged and the last state kept.
    pub(super) fn follow(mut self, registry: &Arc<Registry>) {
        let registry: Weak<Registry> = Arc::downgrade(registry);
        std::thread::Builder::new()
            .name("toolreg-switches".to_owned())
            .spawn(move || {
                loop {
                    std::thread::sleep(FOLLOW_EVERY);
                    let Some(registry) = registry.upgrade() else {
                        return;
                    };
                    match self.file.read::<SwitchDoc>() {
                        Ok(doc) => self.step(&registry, doc),
                        Err(error) => tracing::warn!(%error, "the switch file is unreadable"),
                    }
                }
            })
            .map(drop)
            .unwrap_or_else(|error| tracing::warn!(%error, "cannot follow the switch file"));
    }

    /// Moves the registry from the last state to `doc`'s.
    fn step(&mut self, registry: &Registry, doc: SwitchDoc) {
        if doc == self.doc {
            return;
        }
        let (was, now) = (self.doc.selectors(), doc.selectors());
        for gone in was.difference(&now) {
            registry.enable(selector(*gone));
        }
        for added in now.difference(&was) {
            registry.disable(selector(*added));
        }
        self.doc = doc;
    }
}
