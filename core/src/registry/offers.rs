//! The resources, resource templates and prompts of a registry ([`offer`](crate::offer)): who
//! sees which, reading and getting them through the registry's checks, completion, and
//! registering them at run time.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use futures::FutureExt;

use super::Registry;
use crate::audit::{AuditRecord, Tick};
use crate::media::{Block, Resource, check_blocks};
use crate::meta::Permission;
use crate::offer::set::Offers;
use crate::offer::{
    Completion, CompletionRequest, CompletionTarget, GetRequest, MAX_URI_BYTES, OfferError,
    PromptMessage, PromptSpec, ReadRequest, ResourceSpec,
};
use crate::scope::modules::module_of;
use crate::spec::RegistryChange;
use crate::{Ctx, Scope, ToolError};

impl Registry {
    /// Whether `scope` sees an offer of `permission` named `name`: its level, and the module
    /// rule on the part of `name` before the first `.`, as for a tool.
    fn sees(&self, scope: &Scope, permission: Permission, name: &str) -> bool {
        scope.level >= permission
            && scope.admits_module(module_of(name), self.policy.guest_modules.as_deref())
    }

    /// The resources (one URI each) `scope` may see, sorted by URI.
    ///
    /// ```
    /// # use tool_registry::{Registry, Scope, resource};
    /// /// The message of the day.
    /// #[resource(uri = "notes://motd")]
    /// async fn motd() -> String { "Deploys are frozen.".into() }
    ///
    /// let listed = Registry::global().resources(&Scope::guest());
    /// assert!(listed.iter().any(|r| r.uri() == "notes://motd"));
    /// ```
    pub fn resources(&self, scope: &Scope) -> Vec<ResourceSpec> {
        let offers = self.offers.load();
        (offers.resources.iter())
            .filter(|r| self.sees(scope, r.permission(), r.name()))
            .cloned()
            .collect()
    }

    /// The resource templates `scope` may see, sorted by URI template.
    pub fn resource_templates(&self, scope: &Scope) -> Vec<ResourceSpec> {
        let offers = self.offers.load();
        (offers.templates.iter())
            .filter(|r| self.sees(scope, r.permission(), r.name()))
            .cloned()
            .collect()
    }

    /// The prompts `scope` may see, sorted by name.
    pub fn prompts(&self, scope: &Scope) -> Vec<PromptSpec> {
        let offers = self.offers.load();
        (offers.prompts.iter())
            .filter(|p| self.sees(scope, p.permission(), p.name()))
            .cloned()
            .collect()
    }

    /// The prompt `name` when `scope` may see it.
    pub fn prompt(&self, name: &str, scope: &Scope) -> Option<PromptSpec> {
        self.find_prompt(name, scope).ok()
    }

    /// The resource at `uri` (or the template `uri` is an instance of) that `scope` may see,
    /// with the template's variables. A URI no resource has and one the caller may not see
    /// are the same [`OfferError::UnknownResource`].
    fn find_resource(
        &self,
        uri: &str,
        scope: &Scope,
    ) -> Result<(ResourceSpec, BTreeMap<String, String>), OfferError> {
        let unknown = || OfferError::UnknownResource {
            uri: cut(uri, MAX_URI_BYTES).to_owned(),
        };
        if uri.len() > MAX_URI_BYTES {
            return Err(unknown());
        }
        let offers = self.offers.load();
        if let Ok(i) = offers.resources.binary_search_by(|r| r.uri().cmp(uri)) {
            let found = &offers.resources[i];
            return if self.sees(scope, found.permission(), found.name()) {
                Ok((found.clone(), BTreeMap::new()))
            } else {
                Err(unknown())
            };
        }
        for template in offers.templates.iter() {
            if !self.sees(scope, template.permission(), template.name()) {
                continue;
            }
            if let Some(variables) = template.template().map_or(Ok(None), |t| t.matches(uri))? {
                return Ok((template.clone(), variables));
            }
        }
        Err(unknown())
    }

    /// Reads the resource at `uri` for the caller of `ctx`: found among what it may see (a
    /// template's variables checked), read within the registry's timeout with a panic caught,
    /// its contents checked against the content limits, and audited as `resource:URI`.
    ///
    /// ```
    /// # use tool_registry::{Ctx, Registry, Scope, resource};
    /// /// A greeting for someone.
    /// #[resource(uri = "greet://{name}")]
    /// async fn greeting(name: String) -> String { format!("Hello, {name}!") }
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let registry = Registry::global();
    /// let contents = registry.read_resource("greet://Ada", &Ctx::for_scope(Scope::guest())).await.unwrap();
    /// assert_eq!(contents[0].uri, "greet://Ada");
    /// assert!(registry.read_resource("greet://%2e%2e", &Ctx::new()).await.is_err());
    /// # });
    /// ```
    pub async fn read_resource(&self, uri: &str, ctx: &Ctx) -> Result<Vec<Resource>, OfferError> {
        let started = Tick::now();
        let outcome = async {
            let (spec, variables) = self.find_resource(uri, ctx.scope())?;
            let request = ReadRequest {
                uri: uri.to_owned(),
                variables,
                ctx: ctx.clone(),
            };
            let contents = self.guarded(spec.read(request)).await?;
            let blocks: Vec<Block> = contents.iter().cloned().map(Block::from).collect();
            check_blocks(&blocks, &self.policy.content_limits).map_err(|refused| {
                ToolError::InvalidOutput {
                    tool: String::new(),
                    path: format!("contents[{}]", refused.index),
                    message: refused.message,
                }
            })?;
            Ok(contents)
        }
        .await;
        self.audit_offer("resource:", uri, ctx, started, outcome.as_ref().err());
        outcome
    }

    /// The messages of the prompt `name` with `arguments`, for the caller of `ctx`: found among
    /// what it may see, its required arguments present and no unknown one, written within the
    /// registry's timeout with a panic caught, its blocks checked against the content limits,
    /// and audited as `prompt:NAME`.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: BTreeMap<String, String>,
        ctx: &Ctx,
    ) -> Result<Vec<PromptMessage>, OfferError> {
        let started = Tick::now();
        let outcome = async {
            let spec = self.find_prompt(name, ctx.scope())?;
            for argument in spec.arguments() {
                if argument.required && !arguments.contains_key(&argument.name) {
                    return Err(OfferError::MissingArgument {
                        prompt: spec.name().to_owned(),
                        argument: argument.name.clone(),
                    });
                }
            }
            if let Some(extra) =
                (arguments.keys()).find(|given| !spec.arguments().iter().any(|a| &a.name == *given))
            {
                let takes: Vec<&str> = spec.arguments().iter().map(|a| a.name.as_str()).collect();
                return Err(OfferError::UnknownArgument {
                    prompt: spec.name().to_owned(),
                    argument: cut(extra, 128).to_owned(),
                    takes: if takes.is_empty() {
                        "none".into()
                    } else {
                        takes.join(", ")
                    },
                });
            }
            let request = GetRequest {
                arguments,
                ctx: ctx.clone(),
            };
            let messages = self.guarded(spec.get(request)).await?;
            let blocks: Vec<Block> = messages.iter().map(|m| m.content.clone()).collect();
            check_blocks(&blocks, &self.policy.content_limits).map_err(|refused| {
                ToolError::InvalidOutput {
                    tool: String::new(),
                    path: format!("messages[{}]", refused.index),
                    message: refused.message,
                }
            })?;
            Ok(messages)
        }
        .await;
        self.audit_offer("prompt:", name, ctx, started, outcome.as_ref().err());
        outcome
    }

    fn find_prompt(&self, name: &str, scope: &Scope) -> Result<PromptSpec, OfferError> {
        let offers = self.offers.load();
        offers
            .prompts
            .binary_search_by(|p| p.name().cmp(name))
            .ok()
            .map(|i| &offers.prompts[i])
            .filter(|p| self.sees(scope, p.permission(), p.name()))
            .cloned()
            .ok_or_else(|| OfferError::UnknownPrompt {
                name: cut(name, 256).to_owned(),
            })
    }

    /// The values that complete `argument` of `target` (a prompt's argument, a template's
    /// variable) from what was typed so far, for a caller with `scope`; what it may not see is
    /// unknown, as for a read. An argument without a completer completes to nothing.
    pub fn complete(
        &self,
        target: &CompletionTarget,
        argument: &str,
        request: &CompletionRequest,
        scope: &Scope,
    ) -> Result<Completion, OfferError> {
        let completer = match target {
            CompletionTarget::Prompt(name) => {
                self.find_prompt(name, scope)?.completer(argument).cloned()
            }
            CompletionTarget::Resource(uri) => {
                let offers = self.offers.load();
                let found = offers
                    .templates
                    .iter()
                    .chain(offers.resources.iter())
                    .find(|r| r.uri() == uri && self.sees(scope, r.permission(), r.name()))
                    .ok_or_else(|| OfferError::UnknownResource {
                        uri: cut(uri, MAX_URI_BYTES).to_owned(),
                    })?;
                found.completer(argument).cloned()
            }
        };
        let Some(completer) = completer else {
            return Ok(Completion::default());
        };
        let values = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| completer(request)))
            .map_err(|payload| OfferError::Failed(crate::call::guard::panicked(payload)))?;
        Ok(Completion::of(values))
    }

    /// `Ok` when the caller of `scope` may read `uri` (a resource's, or an instance of a
    /// template's), the error a read would give otherwise: what `resources/subscribe` asks.
    pub fn resource_exists(&self, uri: &str, scope: &Scope) -> Result<(), OfferError> {
        self.find_resource(uri, scope).map(|_| ())
    }

    /// Tells subscribers that the contents of the resource at `uri` changed
    /// ([`RegistryChange::ResourceUpdated`]): an MCP client that subscribed to it hears
    /// `notifications/resources/updated`.
    pub fn resource_updated(&self, uri: &str) {
        let _ = self.changes.send(RegistryChange::ResourceUpdated {
            uri: uri.to_owned(),
        });
    }

    /// Adds a resource or a resource template at run time; its URI must be free. Subscribers
    /// hear [`RegistryChange::Resources`].
    pub fn register_resource(&self, resource: ResourceSpec) -> Result<(), OfferError> {
        self.change_offers(RegistryChange::Resources, |offers| {
            offers.with_resource(resource).map(Some)
        })
        .map(|_| ())
    }

    /// Removes the resource or template of URI `uri`; `false` when there was none.
    pub fn remove_resource(&self, uri: &str) -> bool {
        self.change_offers(RegistryChange::Resources, |offers| {
            Ok(offers.without_resource(uri))
        })
        .unwrap_or(false)
    }

    /// Adds a prompt at run time; its name must be free. Subscribers hear
    /// [`RegistryChange::Prompts`].
    pub fn register_prompt(&self, prompt: PromptSpec) -> Result<(), OfferError> {
        self.change_offers(RegistryChange::Prompts, |offers| {
            offers.with_prompt(prompt).map(Some)
        })
        .map(|_| ())
    }

    /// Removes the prompt `name`; `false` when there was none.
    pub fn remove_prompt(&self, name: &str) -> bool {
        self.change_offers(RegistryChange::Prompts, |offers| {
            Ok(offers.without_prompt(name))
        })
        .unwrap_or(false)
    }

    /// Publishes what `change` makes of the offers, under the writer's lock, and tells
    /// subscribers `told`; `false` when it changed nothing.
    fn change_offers(
        &self,
        told: RegistryChange,
        change: impl FnOnce(&Offers) -> Result<Option<Offers>, OfferError>,
    ) -> Result<bool, OfferError> {
        let _writer = self.write();
        let Some(next) = change(&self.offers.load())? else {
            return Ok(false);
        };
        self.offers.store(Arc::new(next));
        let _ = self.changes.send(told);
        Ok(true)
    }

    /// `future` within the registry's default timeout, a panic caught: the failure a call's
    /// handler would have.
    async fn guarded<T>(
        &self,
        future: futures::future::BoxFuture<'static, Result<T, ToolError>>,
    ) -> Result<T, ToolError> {
        let limit = self.policy.timeouts.default;
        match tokio::time::timeout(limit, std::panic::AssertUnwindSafe(future).catch_unwind()).await
        {
            Ok(Ok(outcome)) => outcome,
            Ok(Err(payload)) => Err(crate::call::guard::panicked(payload)),
            Err(_) => Err(ToolError::TimedOut {
                tool: String::new(),
                after: limit,
            }),
        }
    }

    /// The audit record of a read or a prompt: `KIND` and its URI or name as the tool.
    fn audit_offer(
        &self,
        kind: &str,
        what: &str,
        ctx: &Ctx,
        started: Tick,
        error: Option<&OfferError>,
    ) {
        let now = Tick::now();
        let record = AuditRecord {
            tool: Cow::Owned(format!("{kind}{}", cut(what, 256))),
            version: None,
            user: ctx.user().map(Cow::Borrowed),
            level: Some(ctx.scope().level()),
            chat_id: ctx.chat_id(),
            ts: now.wall_time(),
            duration_ms: (now.millis_since(started) * 1000.0).round() / 1000.0,
            outcome: Cow::Borrowed(error.map_or("ok", OfferError::code)),
            gate: None,
            risk: None,
            annotations: None,
            cache: None,
            approval: None,
            hooks: Cow::Borrowed(&[]),
        };
        self.policy.audit.record(&record);
    }
}

/// `text` cut to at most `max` bytes, on a character boundary.
fn cut(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}
