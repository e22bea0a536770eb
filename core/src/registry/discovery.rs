//! The deferred tools' side of the registry: the meta-tools a snapshot answers, what a tool
//! list adds for deferred tools, and the answers of the meta-tools (see
//! [`discovery`](crate::discovery)).

use super::{Registry, Snapshot};
use crate::call::{Ctx, Handler, ToolArgs, ToolError, ToolResult};
use crate::def::Tool;
use crate::discovery::{self, Discovery, Meta, MetaCall, meta_tools};
use crate::format::{Extra, Provider};
use crate::scope::Scope;

impl Registry {
    /// The meta-tool `name` names, when this snapshot answers it: discovery is on, some tool is
    /// deferred, and no tool of the registry takes the name.
    pub(crate) fn meta_tool(&self, snapshot: &Snapshot, name: &str) -> Option<&'static Tool> {
        self.meta_tool_as(snapshot, name, self.policy.discovery)
    }

    /// [`meta_tool`](Self::meta_tool) for `scope`, whose own say on the search flow wins.
    pub(crate) fn meta_tool_for(
        &self,
        snapshot: &Snapshot,
        name: &str,
        scope: &Scope,
    ) -> Option<&'static Tool> {
        self.meta_tool_as(snapshot, name, self.discovery_for(scope))
    }

    fn meta_tool_as(
        &self,
        snapshot: &Snapshot,
        name: &str,
        discovery: Discovery,
    ) -> Option<&'static Tool> {
        if discovery == Discovery::Off || !snapshot.deferred {
            return None;
        }
        let tool = meta_tools().iter().find(|tool| tool.name() == name)?;
        snapshot.get(name).is_none().then_some(tool)
    }

    /// How `scope` finds deferred tools: the registry's way, unless the scope said otherwise
    /// ([`Scope::with_tool_search`]).
    pub(crate) fn discovery_for(&self, scope: &Scope) -> Discovery {
        match (scope.tool_search, self.policy.discovery) {
            (Some(false), _) => Discovery::Off,
            (Some(true), Discovery::Off) => Discovery::MetaTools,
            (_, discovery) => discovery,
        }
    }

    /// What the list of `scope`'s tools for `provider` adds for deferred tools.
    pub(crate) fn extra(&self, snapshot: &Snapshot, provider: Provider, scope: &Scope) -> Extra {
        let discovery = self.discovery_for(scope);
        if discovery == Discovery::Off || !snapshot.deferred || scope.include_deferred {
            return Extra::Nothing;
        }
        let any_deferred = (snapshot.tools.iter().enumerate())
            .any(|(i, tool)| tool.defer_loading() && self.visible(snapshot, i, scope));
        match (any_deferred, discovery, provider) {
            (false, _, _) => Extra::Nothing,
            (true, Discovery::Native, Provider::Anthropic | Provider::Responses) => Extra::Native,
            (true, _, _) => Extra::MetaTools,
        }
    }

    /// The meta-tools this snapshot answers, in list order.
    pub(crate) fn meta_tools_of<'s>(
        &'s self,
        snapshot: &'s Snapshot,
    ) -> impl Iterator<Item = &'static Tool> + 's {
        // The list asks for them once `extra` said so, for the scope: the way is not asked
        // again, only whether a tool of the registry took the name.
        meta_tools().iter().filter(|tool| {
            self.meta_tool_as(snapshot, tool.name(), Discovery::MetaTools)
                .is_some()
        })
    }

    /// Validation of a meta-tool's call: its arguments read, its answer not yet started.
    pub(crate) fn prepare_meta<'a>(
        &'a self,
        meta: Meta,
        args: ToolArgs<'a>,
        ctx: &'a Ctx,
    ) -> Result<Handler<'a>, ToolError> {
        match discovery::read(meta, args)? {
            MetaCall::Search { query, limit } => {
                let answer = self.search_tools(&query, limit, ctx.scope());
                Ok(Box::pin(async move { Ok(ToolResult::ok(answer)) }))
            }
            MetaCall::Describe { name } => {
                let answer = self.describe_tool(&name, ctx.scope());
                Ok(Box::pin(async move { answer.map(ToolResult::ok) }))
            }
            MetaCall::Execute { name, arguments } => Ok(Box::pin(async move {
                self.call(&name, ToolArgs::Value(arguments), ctx).await
            })),
        }
    }

    /// `search_tools`: the best matches among the tools `scope` may see.
    fn search_tools(&self, query: &str, limit: usize, scope: &Scope) -> serde_json::Value {
        let snapshot = self.current();
        let index =
            (snapshot.search).get_or_init(|| discovery::search::Index::build(&snapshot.tools));
        let found = index.search(query, limit, |i| self.visible(&snapshot, i, scope));
        discovery::found(found.into_iter().map(|i| &snapshot.tools[i]))
    }

    /// `describe_tool`: one tool `scope` may see, or the unknown-tool error.
    fn describe_tool(&self, name: &str, scope: &Scope) -> Result<serde_json::Value, ToolError> {
        match self.resolve(name, scope) {
            Some((tool, ..)) => Ok(discovery::described(&tool)),
            None => Err(ToolError::UnknownTool {
                name: name.to_owned(),
                suggestion: self.suggest(name, scope),
                module: self.unknown_module(name, scope),
            }),
        }
    }
}
