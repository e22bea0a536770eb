//! [`Offers`]: the resources, resource templates and prompts of a registry, sorted, as one
//! immutable value that readers share and a change replaces; the `#[resource]`s and
//! `#[prompt]`s linked into the binary.

use std::sync::Arc;

use super::error::OfferError;
use super::prompt::PromptSpec;
use super::resource::ResourceSpec;

/// Every `#[resource]` in the binary, each as the function that builds its spec.
#[linkme::distributed_slice]
pub static RESOURCES: [fn() -> ResourceSpec];

/// Every `#[prompt]` in the binary, each as the function that builds its spec.
#[linkme::distributed_slice]
pub static PROMPTS: [fn() -> PromptSpec];

/// The resources (plain, then templates) and prompts of a registry, each list sorted by URI or
/// name: the order every listing gives, the same on every call.
#[derive(Clone, Default)]
pub(crate) struct Offers {
    pub(crate) resources: Arc<[ResourceSpec]>,
    pub(crate) templates: Arc<[ResourceSpec]>,
    pub(crate) prompts: Arc<[PromptSpec]>,
}

impl Offers {
    /// The linked ones; a URI or a name declared twice is an error naming it.
    pub(crate) fn linked() -> Result<Self, OfferError> {
        Self::of(
            RESOURCES.iter().map(|make| make()).collect(),
            PROMPTS.iter().map(|make| make()).collect(),
        )
    }

    /// `resources` and `prompts`, sorted and checked for a URI or name given twice.
    pub(crate) fn of(
        resources: Vec<ResourceSpec>,
        mut prompts: Vec<PromptSpec>,
    ) -> Result<Self, OfferError> {
        let (mut templates, mut plain): (Vec<_>, Vec<_>) =
            resources.into_iter().partition(|r| r.template().is_some());
        plain.sort_by(|a, b| a.uri().cmp(b.uri()));
        templates.sort_by(|a, b| a.uri().cmp(b.uri()));
        prompts.sort_by(|a, b| a.name().cmp(b.name()));
        for pair in plain.windows(2).chain(templates.windows(2)) {
            if pair[0].uri() == pair[1].uri() {
                return Err(OfferError::Taken(pair[0].uri().to_owned()));
            }
        }
        for pair in prompts.windows(2) {
            if pair[0].name() == pair[1].name() {
                return Err(OfferError::Taken(pair[0].name().to_owned()));
            }
        }
        Ok(Self {
            resources: plain.into(),
            templates: templates.into(),
            prompts: prompts.into(),
        })
    }

    /// These with `resource` added; its URI must be free.
    pub(crate) fn with_resource(&self, resource: ResourceSpec) -> Result<Self, OfferError> {
        let mut all: Vec<_> = self
            .resources
            .iter()
            .chain(self.templates.iter())
            .cloned()
            .collect();
        all.push(resource);
        Self::of(all, self.prompts.to_vec())
    }

    /// These with `prompt` added; its name must be free.
    pub(crate) fn with_prompt(&self, prompt: PromptSpec) -> Result<Self, OfferError> {
        let mut prompts = self.prompts.to_vec();
        prompts.push(prompt);
        Ok(Self {
            prompts: Self::of(Vec::new(), prompts)?.prompts,
            ..self.clone()
        })
    }

    /// These without the resource or template of URI `uri`; `None` when there is none.
    pub(crate) fn without_resource(&self, uri: &str) -> Option<Self> {
        let keep = |list: &Arc<[ResourceSpec]>| -> Arc<[ResourceSpec]> {
            list.iter().filter(|r| r.uri() != uri).cloned().collect()
        };
        let (resources, templates) = (keep(&self.resources), keep(&self.templates));
        (resources.len() + templates.len() < self.resources.len() + self.templates.len()).then(
            || Self {
                resources,
                templates,
                prompts: self.prompts.clone(),
            },
        )
    }

    /// These without the prompt `name`; `None` when there is none.
    pub(crate) fn without_prompt(&self, name: &str) -> Option<Self> {
        let prompts: Arc<[PromptSpec]> = self
            .prompts
            .iter()
            .filter(|p| p.name() != name)
            .cloned()
            .collect();
        (prompts.len() < self.prompts.len()).then(|| Self {
            prompts,
            ..self.clone()
        })
    }
}
