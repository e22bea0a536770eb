//! The module rule, in one place: which modules a scope may use. Listing, execution,
//! approvals and [`Scope::allows_module`] all ask it.

use super::Scope;
use crate::meta::Permission;

impl Scope {
    /// Whether the module rule admits the tool `name` for this scope: the scope's own modules
    /// if it has a list; else, for a guest, `guest_modules` (the registry's default, see
    /// [`RegistryBuilder::guest_modules`](crate::RegistryBuilder::guest_modules)); else every
    /// module. The registry's visibility check applies exactly this rule.
    pub fn allows_module(&self, name: &str, guest_modules: Option<&[String]>) -> bool {
        self.admits_module(module_of(name), guest_modules)
    }

    /// [`Scope::allows_module`] for a module name already split off: the one module rule.
    pub(crate) fn admits_module(&self, module: &str, guest_modules: Option<&[String]>) -> bool {
        let modules = match (&self.modules, guest_modules) {
            (Some(modules), _) => Some(&**modules),
            (None, Some(guest)) if self.level == Permission::Guest => Some(guest),
            (None, _) => None,
        };
        modules.is_none_or(|modules| modules.iter().any(|m| m == module))
    }
}

/// The module of a tool name: the part before the first `.`, or the whole name.
pub(crate) fn module_of(name: &str) -> &str {
    name.split_once('.').map_or(name, |(module, _)| module)
}
