//! The tag prompt block: the section of a system prompt that teaches a model the response tags
//! (`TAG: argument` lines) of the tools that declare one.

use std::fmt::Write as _;

use crate::def::Tool;
use crate::registry::Registry;
use crate::scope::Scope;

impl Registry {
    /// The instruction section of a prompt that teaches a model the response tags of every
    /// tool that declares one (the knowledge-base bot's `prompt_block`). Empty when no tool
    /// has a tag.
    ///
    /// ```
    /// # use tool_registry::tool;
    /// /// Search the knowledge base for notes on a topic.
    /// #[tool(tag = "RESEARCH", example = "RESEARCH: [search query]")]
    /// fn research(query: String) -> String { query }
    ///
    /// let block = tool_registry::Registry::global().prompt_block();
    /// assert!(block.contains("- `RESEARCH: [search query]`: Search the knowledge base for notes on a topic."));
    /// ```
    pub fn prompt_block(&self) -> String {
        self.prompt_block_where(|_| true)
    }

    /// [`Registry::prompt_block`] for the tools `scope` may see and run.
    pub fn prompt_block_for(&self, scope: &Scope) -> String {
        let snapshot = self.current();
        let visible: Vec<&str> = (snapshot.tools.iter().enumerate())
            .filter(|(i, _)| self.visible(&snapshot, *i, scope))
            .map(|(_, tool)| tool.name())
            .collect();
        self.prompt_block_where(|tool| visible.contains(&tool.name()))
    }

    /// [`Registry::prompt_block`] for the tools `keep` accepts.
    pub fn prompt_block_where(&self, keep: impl Fn(&Tool) -> bool) -> String {
        let tools: Vec<Tool> = self
            .all_tools()
            .filter(|tool| tool.tag().is_some() && keep(tool))
            .collect();
        if tools.is_empty() {
            return String::new();
        }
        let mut out = String::from("## Tools\n\n");
        out.push_str(
            "To use a tool, write its tag at the start of a line of its own, followed by a colon, a space and the argument, exactly as shown. \
             Each such line is one call; write several lines to make several calls. \
             Do not put tag lines in code blocks or quotes.",
        );
        if tools.iter().all(|d| d.strip_from_display()) {
            out.push_str(" The user does not see these lines.");
        }
        out.push_str("\n\n");
        for def in &tools {
            let Some(tag) = def.tag() else { continue };
            let _ = write!(out, "- `{}`: {}", tag.example, def.short_description());
            if !def.strip_from_display() {
                out.push_str(" (the user sees this line)");
            }
            out.push('\n');
        }
        out
    }
}
