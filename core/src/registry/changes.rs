//! What subscribers hear: every change to the tools, from one snapshot to the next.

use super::Snapshot;
use crate::spec::RegistryChange;

/// What changed from one snapshot to the next, in name order; switches in one event each way.
pub(super) fn changes(before: &Snapshot, after: &Snapshot) -> Vec<RegistryChange> {
    let mut changes = Vec::new();
    let (mut enabled, mut disabled) = (Vec::new(), Vec::new());
    let (mut i, mut j) = (0, 0);
    while i < before.tools.len() || j < after.tools.len() {
        let old = before.tools.get(i);
        let new = after.tools.get(j);
        match (old, new) {
            (Some(old), Some(new)) if old.name() == new.name() => {
                if !old.same(new) {
                    changes.push(RegistryChange::Replaced {
                        tool: new.name().to_owned(),
                        from: old.version().map(str::to_owned),
                        to: new.version().map(str::to_owned),
                    });
                } else if before.slots[i].disabled != after.slots[j].disabled {
                    let list = if after.slots[j].disabled {
                        &mut disabled
                    } else {
                        &mut enabled
                    };
                    list.push(new.name().to_owned());
                }
                i += 1;
                j += 1;
            }
            (Some(old), new) if new.is_none_or(|new| old.name() < new.name()) => {
                changes.push(RegistryChange::Removed {
                    tool: old.name().to_owned(),
                });
                i += 1;
            }
            (_, Some(new)) => {
                changes.push(RegistryChange::Registered {
                    tool: new.name().to_owned(),
                    version: new.version().map(str::to_owned),
                });
                j += 1;
            }
            (_, None) => unreachable!("the loop runs while one side has tools"),
        }
    }
    if !enabled.is_empty() {
        changes.push(RegistryChange::Enabled { tools: enabled });
    }
    if !disabled.is_empty() {
        changes.push(RegistryChange::Disabled { tools: disabled });
    }
    changes
}
