//! [`Snapshot`]: the registry's tools at one moment, indexed (sorted listing, names and aliases,
//! each allow-list resolved to one byte per tool) and immutable once published. Readers share
//! it; a change builds the next one.

use std::borrow::Cow;
use std::sync::OnceLock;
use std::time::Duration;

use rustc_hash::FxHashMap;

use super::writer::Writer;
use crate::def::Tool;
use crate::exec::Policy;
use crate::format::wire_aliases;
use crate::scope::AllowLists;

/// The registry's tools at one moment, indexed: immutable once published.
pub(crate) struct Snapshot {
    /// Every tool, sorted by name.
    pub(crate) tools: Vec<Tool>,
    /// Names and aliases to positions in `tools`.
    pub(crate) by_name: FxHashMap<Cow<'static, str>, usize>,
    /// What this registry decided for each tool.
    pub(crate) slots: Vec<Slot>,
    /// Resolved allow-lists: one byte per tool, whose bit `local + 2 * embedding` says whether
    /// the list holds the tool in that mode.
    pub(crate) allow_sets: FxHashMap<String, Box<[u8]>>,
    /// The tool lists built from this snapshot, per provider and set of tools.
    pub(crate) lists: crate::format::ListCache,
    /// Some tool is marked `defer_loading`: the meta-tools of discovery answer.
    pub(crate) deferred: bool,
    /// The longest timeout of any tool: the meta-tools' own, so that `execute_tool` gives the
    /// tool it runs all of its time.
    pub(crate) longest_timeout: Duration,
    /// The search index of `search_tools`, built on first use.
    pub(crate) search: OnceLock<crate::discovery::search::Index>,
}

/// What one registry decided for one tool.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Slot {
    /// Switched off by name, tag or category.
    pub(crate) disabled: bool,
    /// Its own timeout, the slow timeout for listed tools and modules, or the default.
    pub(crate) timeout: Duration,
    /// Which of the registry's hooks apply to it: bit `i` for the `i`-th registered.
    pub(crate) hooks: u64,
}

impl Snapshot {
    /// Indexes the compiled and run-time tools (whose names do not overlap) under the
    /// registry's switches and policies.
    pub(super) fn build(writer: &Writer, policy: &Policy) -> Self {
        let mut tools = Vec::with_capacity(writer.linked.len() + writer.owned.len());
        let (mut linked, mut owned) = (
            writer.linked.iter().peekable(),
            writer.owned.values().peekable(),
        );
        loop {
            let next = match (linked.peek(), owned.peek()) {
                (Some(a), Some(b)) if a.name() <= b.name() => linked.next(),
                (Some(_), Some(_)) | (None, _) => owned.next(),
                (Some(_), None) => linked.next(),
            };
            let Some(tool) = next else { break };
            tools.push(tool.clone());
        }
        let mut by_name = FxHashMap::with_capacity_and_hasher(tools.len(), Default::default());
        for (i, tool) in tools.iter().enumerate() {
            match tool.definition() {
                Some(def) => {
                    for name in std::iter::once(def.name()).chain(def.aliases().iter().copied()) {
                        by_name.entry(Cow::Borrowed(name)).or_insert(i);
                    }
                }
                None => {
                    by_name.insert(Cow::Owned(tool.name().to_owned()), i);
                }
            }
        }
        // Wire names last: a name or alias always wins (the checks at registration keep them
        // apart anyway).
        for (i, tool) in tools.iter().enumerate() {
            let names = std::iter::once(tool.name()).chain(tool.aliases().iter().copied());
            for wire in names.flat_map(wire_aliases) {
                by_name.entry(Cow::Owned(wire)).or_insert(i);
            }
        }
        let slots: Vec<Slot> = tools
            .iter()
            .map(|tool| Slot {
                disabled: writer.switches.covers(tool),
                timeout: policy.timeouts.of(tool),
                hooks: if policy.hooks.is_empty() {
                    0
                } else {
                    policy.hooks.mask(tool)
                },
            })
            .collect();
        let longest_timeout =
            (slots.iter().map(|slot| slot.timeout)).fold(policy.timeouts.default, Duration::max);
        let mut snapshot = Self {
            deferred: tools.iter().any(Tool::defer_loading),
            longest_timeout,
            tools,
            by_name,
            slots,
            allow_sets: FxHashMap::default(),
            lists: Default::default(),
            search: OnceLock::new(),
        };
        snapshot.allow_sets = snapshot.allow_sets(&policy.allow_lists);
        snapshot
    }

    /// Each allow-list resolved against these tools.
    fn allow_sets(&self, lists: &AllowLists) -> FxHashMap<String, Box<[u8]>> {
        let canonical = |name: &str| self.get(name).map(|(_, tool)| tool.name());
        lists
            .names()
            .map(|list| {
                let mut members = vec![0_u8; self.tools.len()].into_boxed_slice();
                for (local, embedding) in
                    [(false, false), (true, false), (false, true), (true, true)]
                {
                    let tools = self.tools.iter().map(|tool| (tool.name(), tool.category()));
                    let names = lists
                        .resolve(list, tools, canonical, local, embedding)
                        .unwrap_or_default();
                    for name in names {
                        if let Some((i, _)) = self.get(name) {
                            members[i] |= allow_bit(local, embedding);
                        }
                    }
                }
                (list.to_owned(), members)
            })
            .collect()
    }

    /// The position and tool of a name or alias.
    #[inline]
    pub(crate) fn get(&self, name: &str) -> Option<(usize, &Tool)> {
        self.by_name.get(name).map(|&i| (i, &self.tools[i]))
    }
}

/// The bit of an allow-list mode in a member byte.
pub(super) fn allow_bit(local: bool, embedding: bool) -> u8 {
    1 << (usize::from(local) + 2 * usize::from(embedding))
}
