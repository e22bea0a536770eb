//! What a resource and a prompt both are: a name, a title, a description, the least
//! permission that sees it, and the completers of their arguments; their builder methods and
//! getters, written once for both.

use super::complete::{Completer, Completers};
use crate::meta::Permission;

/// The part of a [`ResourceSpec`](super::ResourceSpec) or a [`PromptSpec`](super::PromptSpec)
/// that describes it.
#[derive(Clone)]
pub(crate) struct About {
    pub(crate) name: String,
    pub(crate) title: Option<String>,
    pub(crate) description: String,
    pub(crate) permission: Permission,
    pub(crate) completers: Completers,
}

impl About {
    /// A guest's `name`, with nothing more said of it.
    pub(crate) fn new(name: String) -> Self {
        Self {
            name,
            title: None,
            description: String::new(),
            permission: Permission::Guest,
            completers: Vec::new(),
        }
    }

    /// The completer of the argument `name`.
    pub(crate) fn completer(&self, name: &str) -> Option<&Completer> {
        (self.completers.iter())
            .find(|(argument, _)| argument == name)
            .map(|(_, completer)| completer)
    }
}

/// The builder methods and getters of a type with an `about: About` field; `$what` is what a
/// caller does with it, `$argument` what its completed arguments are called.
macro_rules! about_methods {
    ($ty:ident, $what:literal, $argument:literal) => {
        impl $ty {
            /// A title to show people.
            #[must_use]
            pub fn with_title(mut self, title: impl Into<String>) -> Self {
                self.about.title = Some(title.into());
                self
            }

            /// What it is for, for a model or a person.
            #[must_use]
            pub fn with_description(mut self, description: impl Into<String>) -> Self {
                self.about.description = description.into();
                self
            }

            #[doc = concat!("The least permission a caller needs to see and ", $what, " it (guest unless set).")]
            #[must_use]
            pub fn with_permission(mut self, permission: crate::meta::Permission) -> Self {
                self.about.permission = permission;
                self
            }

            #[doc = concat!("Completes the ", $argument, " `name` with `completer`.")]
            #[must_use]
            pub fn with_completion(
                mut self,
                name: impl Into<String>,
                completer: super::complete::Completer,
            ) -> Self {
                self.about.completers.push((name.into(), completer));
                self
            }

            /// Its name.
            pub fn name(&self) -> &str {
                &self.about.name
            }

            /// Its title.
            pub fn title(&self) -> Option<&str> {
                self.about.title.as_deref()
            }

            /// Its description.
            pub fn description(&self) -> &str {
                &self.about.description
            }

            /// The least permission that sees it.
            pub fn permission(&self) -> crate::meta::Permission {
                self.about.permission
            }

            #[doc = concat!("The completer of the ", $argument, " `name`.")]
            pub fn completer(&self, name: &str) -> Option<&super::complete::Completer> {
                self.about.completer(name)
            }
        }
    };
}

pub(crate) use about_methods;
