//! Switching tools off and on while the registry is in use: by name, tag or category, one
//! change published for each; and a shared store's switches applied to this registry.

use super::Registry;
use super::switches::{Selector, SwitchSet};

impl SwitchSet {
    /// Moves `registry` from this state (the one applied last; empty at first) to `next`:
    /// what `next` adds is switched off, what it drops switched back on, the rest left alone.
    pub fn apply(&self, next: &SwitchSet, registry: &Registry) {
        if self == next {
            return;
        }
        let (was, now) = (self.selectors(), next.selectors());
        for gone in was.difference(&now) {
            registry.enable(gone.clone());
        }
        for added in now.difference(&was) {
            registry.disable(added.clone());
        }
    }
}

impl Registry {
    /// Switches tools off at once, for listing and for calls: one tool by name (or alias), or
    /// every tool with a tag or of a category. Returns how many tools the selector covers (0
    /// for a name no tool has); idempotent. [`registration`](Self::registration) says how a tool is.
    /// Subscribers get one [`RegistryChange::Disabled`](crate::spec::RegistryChange::Disabled) naming the tools that were on.
    pub fn disable(&self, selector: Selector) -> usize {
        self.switch(&selector, true)
    }

    /// Switches tools back on (undoes [`Registry::disable`] with the same selector). A tool
    /// stays off while another switch still covers it. Returns how many tools the selector
    /// covers.
    pub fn enable(&self, selector: Selector) -> usize {
        self.switch(&selector, false)
    }

    fn switch(&self, selector: &Selector, off: bool) -> usize {
        let mut writer = self.write();
        let key = match selector {
            Selector::Name(name) => self
                .lookup(name)
                .map_or(name.clone(), |t| t.name().to_owned()),
            Selector::Tag(tag) => tag.clone(),
            Selector::Category(category) => category.clone(),
        };
        let switches = &mut writer.switches;
        let set = match selector {
            Selector::Name(_) => &mut switches.names,
            Selector::Tag(_) => &mut switches.tags,
            Selector::Category(_) => &mut switches.categories,
        };
        if off {
            set.insert(key.clone());
        } else {
            set.remove(&key);
        }
        let published = self.publish(&writer);
        published
            .tools
            .iter()
            .filter(|tool| match selector {
                Selector::Name(_) => tool.name() == key,
                Selector::Tag(tag) => tool.tags().any(|t| t == tag),
                Selector::Category(category) => tool.category() == Some(category.as_str()),
            })
            .count()
    }
}
