//! The tag prompt block: the section of a system prompt that teaches a model the response tags
//! (`TAG: argument` lines) of the tools that declare one.

use std::fmt::Write as _;

use crate::def::Tool;

/// The tag prompt block of `tools` (those with a tag form), in their order.
pub(crate) fn prompt_block(tools: &[Tool]) -> String {
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
    for def in tools {
        let Some(tag) = def.tag() else { continue };
        let _ = write!(out, "- `{}`: {}", tag.example, def.short_description());
        if !def.strip_from_display() {
            out.push_str(" (the user sees this line)");
        }
        out.push('\n');
    }
    out
}
