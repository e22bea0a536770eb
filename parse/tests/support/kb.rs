//! The knowledge-base tools the case files call, as a tool list: the schemas a registry gives
//! the `#[tool]` functions of tool-registry's `tests/parse.rs` (`cases/kb_tools.json`) and their
//! response tags. That test checks the registry still gives exactly these, and reads every case
//! as this list does.

use std::path::Path;
use std::sync::LazyLock;

use tool_registry_parse::{TagForm, TagSet, TagTool, ToolList};

/// Each tag tool: its name, its tag form, and whether its lines leave the content.
pub const KB_TAGS: [(&str, TagForm, bool); 6] = [
    (
        "claim",
        tag(
            "CLAIM",
            "(.+)",
            &["assertion"],
            "CLAIM: [specific assertion]",
        ),
        true,
    ),
    (
        "learning",
        tag(
            "LEARNING",
            r"(factual|communication|structured_data)\s+(.+)",
            &["category", "content"],
            "LEARNING: [category] [what was learned]",
        ),
        true,
    ),
    (
        "note",
        tag("NOTE", "(.+)", &["text"], "NOTE: [text]"),
        false,
    ),
    (
        "rate",
        tag(
            "RATE",
            r"(\d+)\s+(.+)",
            &["stars", "comment"],
            "RATE: [stars] [comment]",
        ),
        true,
    ),
    (
        "research",
        tag("RESEARCH", "(.+)", &["query"], "RESEARCH: [search query]"),
        true,
    ),
    (
        "source",
        tag("SOURCE", "(.+)", &["description"], "SOURCE: [description]"),
        true,
    ),
];

const fn tag(
    prefix: &'static str,
    pattern: &'static str,
    groups: &'static [&'static str],
    example: &'static str,
) -> TagForm {
    TagForm {
        prefix,
        pattern,
        groups,
        example,
    }
}

/// A file of the case folder.
pub fn case_file(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../parse/tests/cases")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The tools of `cases/kb_tools.json`, each typed by its schema, with the tags of [`KB_TAGS`].
pub fn kb_tools() -> &'static ToolList {
    static LIST: LazyLock<ToolList> = LazyLock::new(|| {
        let list = ToolList::from_json_str(&case_file("kb_tools.json")).expect("kb_tools.json");
        let schemas: Vec<_> = KB_TAGS
            .iter()
            .map(|(name, _, _)| {
                use tool_registry_parse::ToolSet;
                list.schema(name).map(|schema| schema.into_owned())
            })
            .collect();
        let tags = KB_TAGS
            .iter()
            .zip(&schemas)
            .map(|((name, form, strip), schema)| {
                let tool = TagTool::new(name, form).strip_from_display(*strip);
                match schema {
                    Some(schema) => tool.schema(schema),
                    None => tool,
                }
            });
        list.with_tags(TagSet::new(tags).expect("the tags compile"))
    });
    &LIST
}

/// The OpenAI-format tool list the `tools=openai` cases are parsed with (`cases/tools.json`).
pub fn openai_tools() -> ToolList {
    ToolList::from_json_str(&case_file("tools.json")).expect("a tool list")
}
