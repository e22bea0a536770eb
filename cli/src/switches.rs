//! Switches that hold across processes: `toolreg disable` and `toolreg enable` write the
//! switch file, every command reads it, and the long-running ones (`serve`, `mcp`) follow it,
//! so an operator turns a tool off in a running server (and its MCP clients hear
//! `list_changed`).

use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Weak};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::output::shown;
use tool_registry_core::Registry;
use tool_registry_core::registry::{Selector, SwitchSet};
use tool_registry_core::store::{JsonFile, StoreError};

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
    #[serde(flatten)]
    set: SwitchSet,
    #[serde(flatten)]
    other: serde_json::Map<String, serde_json::Value>,
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
        SwitchSet::default().apply(&doc.set, registry);
        Ok(Applied { file, set: doc.set })
    }

    /// `disable` (`off`) or `enable`: changes the file under its lock, and the registry.
    pub(super) fn switch(
        &self,
        args: &SwitchArgs,
        off: bool,
        registry: &Registry,
        out: &mut dyn Write,
    ) -> Result<(), StoreError> {
        let selector = args.selector(registry);
        self.file().update(|doc: &mut SwitchDoc| {
            doc.set.set(&selector, off);
            Ok::<_, StoreError>(())
        })?;
        let (Selector::Name(value) | Selector::Tag(value) | Selector::Category(value)) =
            selector.clone();
        let covered = if off {
            registry.disable(selector)
        } else {
            registry.enable(selector)
        };
        let verb = if off { "disabled" } else { "enabled" };
        let _ = writeln!(
            out,
            "{verb} {} ({covered} tool{} here)",
            shown(&value),
            if covered == 1 { "" } else { "s" }
        );
        Ok(())
    }
}

impl SwitchArgs {
    /// How many tools of `registry`, on or off, the selector covers.
    pub(super) fn covered(&self, registry: &Registry) -> usize {
        let selector = self.selector(registry);
        let tools = registry.tools(tool_registry_core::Listing::every());
        tools
            .iter()
            .filter(|tool| match &selector {
                Selector::Name(name) => tool.name() == name,
                Selector::Tag(tag) => tool.tags().any(|t| t == tag),
                Selector::Category(category) => tool.category() == Some(category.as_str()),
            })
            .count()
    }

    /// What the selector names, as a person would write it: `nope`, `--tag write`.
    pub(super) fn shown(&self) -> String {
        match (&self.name, &self.tag, &self.category) {
            (Some(name), ..) => format!("`{}`", shown(name)),
            (None, Some(tag), _) => format!("`--tag {}`", shown(tag)),
            (None, None, Some(category)) => format!("`--category {}`", shown(category)),
            (None, None, None) => String::new(),
        }
    }

    /// The selector the flags name; an alias is kept as the tool's own name, as the registry
    /// does.
    pub(super) fn selector(&self, registry: &Registry) -> Selector {
        match (&self.name, &self.tag, &self.category) {
            (Some(name), _, _) => Selector::name(
                registry
                    .get(name, tool_registry_core::Listing::every())
                    .map_or(name.clone(), |t| t.name().to_owned()),
            ),
            (None, Some(tag), _) => Selector::tag(tag.clone()),
            (None, None, Some(category)) => Selector::category(category.clone()),
            (None, None, None) => unreachable!("clap requires one selector"),
        }
    }
}

/// The switch file as last applied to a registry.
pub(super) struct Applied {
    file: JsonFile,
    set: SwitchSet,
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
                        Ok(doc) => {
                            self.set.apply(&doc.set, &registry);
                            self.set = doc.set;
                        }
                        Err(error) => tracing::warn!(%error, "the switch file is unreadable"),
                    }
                }
            })
            .map(drop)
            .unwrap_or_else(|error| tracing::warn!(%error, "cannot follow the switch file"));
    }
}
