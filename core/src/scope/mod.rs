//! Who is asking: the user, their level, modules, allow-list and modes, which decide what a
//! caller may list and run.
//!
//! | file | what |
//! | --- | --- |
//! | `who.rs` | [`Scope`]: the user, their level, modules, allow-list and modes |
//! | `modules.rs` | the module rule, the one place that decides which modules a scope may use |
//! | `allowlist.rs` | named allow-lists ([`AllowLists`]), in code or TOML |

mod allowlist;
pub(crate) mod modules;
pub(crate) mod who;

pub use allowlist::{AllowList, AllowListError, AllowLists};
pub(crate) use modules::module_of;
pub(crate) use who::Scope;
pub use who::{ANONYMOUS, EMBEDDING_FLAG, NETWORK_GUEST};
