//! The catalog as one HTML page a person browses: a search box and filters (category, module,
//! annotation, permission level), a table of contents, and one card per tool with its
//! arguments, metadata, limits and annotations.
//!
//! The page is self-contained: its style (`page.css`) and script (`page.js`) are inline and
//! nothing is fetched. Every string that comes from a tool is escaped where it is written, and
//! the script reads what it filters on from the cards themselves (`data-*` attributes and the
//! text of the page), so no tool text is ever inside the `<script>` element.

use std::collections::BTreeMap;
use std::fmt::{self, Write as _};

use serde_json::Value;

use super::doc::{annotation_flags, annotation_names};
use super::{ArgDoc, Catalog, ToolDoc};
use crate::call::MAX_ARGS_BYTES;
use crate::def::{Annotations, Permission};

const STYLE: &str = include_str!("page.css");
const SCRIPT: &str = include_str!("page.js");

/// The filter value of a tool without a module or a category: no module or category can be
/// spelled with parentheses.
const NONE: &str = "(none)";

impl Catalog<'_> {
    /// The catalog as one self-contained HTML page: a search box (`/` focuses it, Escape
    /// clears it), filters by category, module, annotation and permission level, a table of
    /// contents, and one card per tool (anchor `#tool-NAME`) with its description, argument
    /// table, metadata, limits, annotations and schema.
    ///
    /// Every string from a tool is HTML-escaped, and the page names no outside resource. The
    /// same registry gives the same bytes.
    ///
    /// ```
    /// # use tool_registry::Registry;
    /// let page = Registry::global().catalog(tool_registry::Listing::every()).html();
    /// assert!(page.starts_with("<!doctype html>"));
    /// ```
    pub fn html(&self) -> String {
        let tools = self.tools();
        let mut out = String::with_capacity(STYLE.len() + SCRIPT.len() + 4096 * tools.len());
        let mut offers = String::new();
        // Writing into a `String` cannot fail.
        let _ = self.offers_html(&mut offers);
        let costs =
            (!self.costs.lists.is_empty()).then(|| super::costs::list_text(&self.costs.lists));
        let _ = page(&mut out, &tools, &offers, costs.as_deref());
        out
    }
}

fn page(out: &mut String, tools: &[ToolDoc], offers: &str, costs: Option<&str>) -> fmt::Result {
    let count = plural(tools.len(), "tool");
    write!(
        out,
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"color-scheme\" content=\"light dark\">\n\
         <title>Tools</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n\
         <div class=\"page\">\n<aside class=\"side\">\n<header class=\"masthead\">\n\
         <h1>Tools</h1>\n<p class=\"lede\">What each tool does, what it takes, and what \
         guards it.</p>\n"
    )?;
    if let Some(costs) = costs {
        writeln!(out, "<p class=\"lede tokens\">{}</p>", Esc(costs))?;
    }
    out.push_str("</header>\n");
    controls(out, tools, &count)?;
    toc(out, tools)?;
    out.push_str("</aside>\n<main id=\"tools\">\n");
    for tool in tools {
        card(out, tool)?;
    }
    out.push_str(
        "<div id=\"empty\" class=\"empty\" hidden>\n<p>No tool matches these filters.</p>\n\
         <button type=\"button\" id=\"reset\">Show every tool</button>\n</div>\n",
    );
    out.push_str(offers);
    out.push_str("</main>\n</div>\n");
    write!(out, "<script>\n{SCRIPT}</script>\n</body>\n</html>\n")
}

/// The search box and the filters, hidden until the script shows them (a page read without
/// scripts offers nothing that does not work), then the count of tools shown.
fn controls(out: &mut String, tools: &[ToolDoc], count: &str) -> fmt::Result {
    out.push_str(
        "<div class=\"controls\" role=\"search\" hidden>\n\
         <label class=\"search\"><span class=\"sr-only\">Search tools</span>\
         <input id=\"q\" type=\"search\" placeholder=\"Search tools\" \
         autocomplete=\"off\" spellcheck=\"false\" aria-keyshortcuts=\"/\">\
         <kbd aria-hidden=\"true\">/</kbd></label>\n<div class=\"filters\">\n",
    );
    for filter in FILTERS {
        let options = filter.options(tools);
        // A filter whose one value every tool has would show everything or nothing.
        let useful = if filter.multi() {
            !options.is_empty()
        } else {
            options.len() > 1
        };
        if !useful {
            continue;
        }
        write!(
            out,
            "<label class=\"filter\"><span>{}</span><select id=\"f-{key}\" data-key=\"{key}\"{}>\
             <option value=\"\">Any</option>",
            filter.label(),
            if filter.multi() { " data-multi" } else { "" },
            key = filter.key(),
        )?;
        for (value, n) in options {
            let label = if value == NONE {
                format!("no {}", filter.key())
            } else {
                value.clone()
            };
            write!(
                out,
                "<option value=\"{}\">{} ({n})</option>",
                Esc(&value),
                Esc(&label)
            )?;
        }
        out.push_str("</select></label>\n");
    }
    write!(
        out,
        "</div>\n</div>\n<p id=\"count\" class=\"count\" aria-live=\"polite\">{count}</p>\n"
    )
}

/// The table of contents: one link per tool, with its first sentence as the link's title.
fn toc(out: &mut String, tools: &[ToolDoc]) -> fmt::Result {
    out.push_str(
        "<nav class=\"toc\" aria-label=\"Tools\">\n<details id=\"toc\" open>\
         <summary>Contents</summary>\n<ol>\n",
    );
    for tool in tools {
        writeln!(
            out,
            "<li><a href=\"#tool-{name}\" title=\"{short}\">{name}</a></li>",
            name = Esc(&tool.name),
            short = Esc(&tool.short_description)
        )?;
    }
    out.push_str("</ol>\n</details>\n</nav>\n");
    Ok(())
}

/// One tool's card. Its `data-*` attributes carry what the filters compare.
fn card(out: &mut String, tool: &ToolDoc) -> fmt::Result {
    let name = Esc(&tool.name);
    write!(out, "<article class=\"tool\" id=\"tool-{name}\"")?;
    for filter in FILTERS {
        write!(
            out,
            " data-{}=\"{}\"",
            filter.key(),
            Esc(&filter.values(tool).join(" "))
        )?;
    }
    write!(
        out,
        ">\n<header class=\"tool-head\">\n<h2><a class=\"tool-name\" href=\"#tool-{name}\">\
         {name}</a></h2>\n<p class=\"badges\">"
    )?;
    let permission = text(tool, "permission").unwrap_or_default();
    write!(
        out,
        "<span class=\"badge level-{p}\" title=\"Permission level\">{p}</span>\
         <span class=\"badge risk-{r}\" title=\"Risk of a mistaken call\">{r} risk</span>",
        p = Esc(&permission),
        r = tool.risk
    )?;
    for name in annotation_names(&tool.annotations) {
        write!(
            out,
            "<span class=\"badge note-{name}\" title=\"Annotation\">{name}</span>"
        )?;
    }
    if tool.source.is_none() {
        out.push_str(
            "<span class=\"badge\" title=\"Registered while the program runs\">run time</span>",
        );
    }
    out.push_str("</p>\n</header>\n");
    let tags = tags(tool);
    if !tags.is_empty() {
        out.push_str("<p class=\"tags\">");
        for tag in tags {
            write!(out, "<span class=\"tag\">{}</span> ", Esc(tag))?;
        }
        out.push_str("</p>\n");
    }
    out.push_str("<div class=\"desc\">\n");
    prose(out, &tool.description)?;
    out.push_str("</div>\n");
    if !tool.aliases.is_empty() {
        out.push_str("<p class=\"aliases\">Also called ");
        for (i, alias) in tool.aliases.iter().enumerate() {
            let sep = if i == 0 { "" } else { ", " };
            write!(out, "{sep}<code>{}</code>", Esc(alias))?;
        }
        out.push_str(".</p>\n");
    }
    arguments(out, &tool.arguments)?;
    out.push_str("<div class=\"facts\">\n");
    about(out, tool)?;
    limits(out, tool)?;
    behaviour(out, tool)?;
    out.push_str("</div>\n");
    origin(out, tool)?;
    schema(out, "Input schema", &tool.input_schema)?;
    if let Some(condition) = tool
        .metadata
        .get("confirm_if")
        .filter(|c| **c != Value::Bool(true))
    {
        schema(out, "Confirmation schema", condition)?;
    }
    writeln!(
        out,
        "<p class=\"returns\"><strong>Returns:</strong> {}.</p>",
        Esc(&tool.returns_text())
    )?;
    if !tool.tokens.is_empty() {
        writeln!(
            out,
            "<p class=\"tokens\"><strong>Prompt tokens:</strong> {}.</p>",
            Esc(&super::costs::tool_text(&tool.tokens))
        )?;
    }
    if let Some(output) = &tool.output_schema {
        schema(out, "Output schema", output)?;
    }
    out.push_str("</article>\n");
    Ok(())
}

/// The argument table; on a narrow screen each row becomes a block whose cells carry their
/// column's name (`data-label`).
fn arguments(out: &mut String, arguments: &[ArgDoc]) -> fmt::Result {
    out.push_str("<h3>Arguments</h3>\n");
    if arguments.is_empty() {
        out.push_str("<p class=\"quiet\">No arguments.</p>\n");
        return Ok(());
    }
    out.push_str(
        "<table class=\"args\">\n<thead><tr><th scope=\"col\">Name</th><th scope=\"col\">Type</th>\
         <th scope=\"col\">Required</th><th scope=\"col\">Default</th>\
         <th scope=\"col\">Description</th></tr></thead>\n<tbody>\n",
    );
    for arg in arguments {
        write!(
            out,
            "<tr><td data-label=\"Name\"><code class=\"arg\">{}</code></td>",
            Esc(&arg.name)
        )?;
        match &arg.rust_type {
            Some(rust) => write!(
                out,
                "<td data-label=\"Type\"><span class=\"type\" title=\"Rust: {}\">{}</span></td>",
                Esc(rust),
                Esc(&arg.ty)
            )?,
            None => write!(
                out,
                "<td data-label=\"Type\"><span class=\"type\">{}</span></td>",
                Esc(&arg.ty)
            )?,
        }
        write!(
            out,
            "<td data-label=\"Required\">{}</td><td data-label=\"Default\">",
            if arg.required {
                "<span class=\"req\">required</span>"
            } else {
                "<span class=\"quiet\">optional</span>"
            }
        )?;
        if let Some(default) = &arg.default {
            write!(out, "<code>{}</code>", Esc(&default.to_string()))?;
        }
        out.push_str("</td><td data-label=\"Description\">");
        inline(out, arg.description.as_deref().unwrap_or(""))?;
        out.push_str("</td></tr>\n");
    }
    out.push_str("</tbody>\n</table>\n");
    Ok(())
}

/// Module, category, version, permission, tier and cost.
fn about(out: &mut String, tool: &ToolDoc) -> fmt::Result {
    out.push_str("<section>\n<h3>About</h3>\n<dl>\n");
    for (key, label) in [
        ("module", "Module"),
        ("category", "Category"),
        ("version", "Version"),
        ("permission", "Permission"),
        ("tier", "Tier"),
        ("cost", "Cost"),
    ] {
        if let Some(value) = text(tool, key) {
            row(out, label, &Esc(&value))?;
        }
    }
    out.push_str("</dl>\n</section>\n");
    Ok(())
}

/// Cooldown, daily limit, timeout, the size of the argument text, the cache and the size of
/// the result's text.
fn limits(out: &mut String, tool: &ToolDoc) -> fmt::Result {
    out.push_str("<section>\n<h3>Limits</h3>\n<dl>\n");
    if let Some(cooldown) = text(tool, "cooldown") {
        row(
            out,
            "Cooldown",
            &format_args!("{} per user", Esc(&cooldown)),
        )?;
    }
    if let Some(limit) = text(tool, "daily_limit") {
        row(
            out,
            "Daily limit",
            &format_args!("{} calls per user", Esc(&limit)),
        )?;
    }
    if let Some(timeout) = text(tool, "timeout") {
        row(out, "Timeout", &Esc(&timeout))?;
    }
    match tool.metadata.get("max_args_bytes").and_then(Value::as_u64) {
        Some(bytes) => row(out, "Arguments", &format_args!("up to {}", Bytes(bytes)))?,
        None => row(
            out,
            "Arguments",
            &format_args!(
                "up to {} <span class=\"quiet\">(default)</span>",
                Bytes(MAX_ARGS_BYTES as u64)
            ),
        )?,
    }
    if let Some(cache) = tool.cache_text() {
        row(out, "Cache", &Esc(&cache))?;
    }
    if let Some(task) = tool.metadata.get("task").and_then(Value::as_str) {
        row(out, "Task", &super::markdown::task_text(task))?;
    }
    if let Some(bytes) = tool
        .metadata
        .get("max_result_bytes")
        .and_then(Value::as_u64)
    {
        row(
            out,
            "Results",
            &format_args!(
                "up to {} of text; longer ones are shortened with a note",
                Bytes(bytes)
            ),
        )?;
    }
    out.push_str("</dl>\n</section>\n");
    Ok(())
}

/// Each annotation, yes or no, then conditional confirmation and the switches the tool sets.
fn behaviour(out: &mut String, tool: &ToolDoc) -> fmt::Result {
    out.push_str("<section>\n<h3>Annotations</h3>\n<dl>\n");
    for (name, holds) in annotation_flags(&tool.annotations) {
        let value = if holds {
            "<span class=\"yes\">yes</span>"
        } else {
            "<span class=\"quiet\">no</span>"
        };
        row(out, name, &value)?;
    }
    match tool.metadata.get("confirm_if") {
        Some(Value::Bool(true)) => row(
            out,
            "confirm_if",
            &"Asked per call, depending on the arguments",
        )?,
        Some(_) => row(
            out,
            "confirm_if",
            &"Asked per call, when the arguments match the confirmation schema",
        )?,
        None => {}
    }
    for (key, label) in [
        ("requires_gate", "An evaluation gate decides each call"),
        ("gate_fail_closed", "Refused when the gate fails"),
        ("sequential", "Never runs alongside other calls"),
        ("defer_loading", "Offered through discovery"),
    ] {
        if tool.metadata.get(key) == Some(&Value::Bool(true)) {
            row(out, key, &label)?;
        }
    }
    out.push_str("</dl>\n</section>\n");
    Ok(())
}

/// The response-tag form, then where a compiled tool is declared or when a run-time tool was
/// registered.
fn origin(out: &mut String, tool: &ToolDoc) -> fmt::Result {
    if let Some(tag) = &tool.tag {
        let field = |key: &str| tag.get(key).and_then(Value::as_str).unwrap_or_default();
        writeln!(
            out,
            "<p class=\"origin\">Response tag <code>{}</code>, pattern <code>{}</code>.</p>",
            Esc(field("example")),
            Esc(field("pattern"))
        )?;
    }
    match (&tool.source, &tool.registered_at) {
        (Some(source), _) => writeln!(
            out,
            "<p class=\"origin\">Declared in <code>{}:{}</code> (crate <code>{}</code>).</p>",
            Esc(source.file),
            source.line,
            Esc(source.crate_name)
        ),
        (None, Some(at)) => writeln!(
            out,
            "<p class=\"origin\">Registered at run time, {}.</p>",
            Esc(at)
        ),
        (None, None) => Ok(()),
    }
}

/// A schema, folded, as indented JSON.
fn schema(out: &mut String, title: &str, schema: &Value) -> fmt::Result {
    let json = serde_json::to_string_pretty(schema).unwrap_or_default();
    writeln!(
        out,
        "<details class=\"schema\"><summary>{title}</summary><pre><code>{}</code></pre></details>",
        Esc(&json)
    )
}

fn row(out: &mut String, label: &str, value: &dyn fmt::Display) -> fmt::Result {
    writeln!(out, "<dt>{label}</dt><dd>{value}</dd>")
}

fn tags(tool: &ToolDoc) -> Vec<&str> {
    match tool.metadata.get("tags") {
        Some(Value::Array(tags)) => tags.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// A metadata value as text (strings bare, numbers written out).
fn text(tool: &ToolDoc, key: &str) -> Option<String> {
    match tool.metadata.get(key)? {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}

/// A description as HTML: paragraphs at blank lines, a paragraph of `- ` lines as a list, and
/// `code` spans; the rest is text.
fn prose(out: &mut String, text: &str) -> fmt::Result {
    for block in text.split("\n\n").map(str::trim).filter(|b| !b.is_empty()) {
        if let Some(items) = block.strip_prefix("- ") {
            out.push_str("<ul>");
            for item in items.split("\n- ") {
                out.push_str("<li>");
                inline(out, item)?;
                out.push_str("</li>");
            }
            out.push_str("</ul>\n");
        } else {
            out.push_str("<p>");
            inline(out, block)?;
            out.push_str("</p>\n");
        }
    }
    Ok(())
}

/// One line of text with its `code` spans; a lone backtick stays a backtick.
fn inline(out: &mut String, text: &str) -> fmt::Result {
    let mut rest = text;
    while let Some(open) = rest.find('`') {
        let Some(len) = rest[open + 1..].find('`') else {
            break;
        };
        write!(
            out,
            "{}<code>{}</code>",
            Esc(&rest[..open]),
            Esc(&rest[open + 1..open + 1 + len])
        )?;
        rest = &rest[open + 2 + len..];
    }
    write!(out, "{}", Esc(rest))
}

/// A filter of the page: the select, and the `data-*` attribute of each card it compares.
#[derive(Clone, Copy)]
enum Filter {
    Category,
    Module,
    Permission,
    /// A tool has any number of these (space-separated), not exactly one.
    Annotations,
}

const FILTERS: [Filter; 4] = [
    Filter::Category,
    Filter::Module,
    Filter::Permission,
    Filter::Annotations,
];

impl Filter {
    fn key(self) -> &'static str {
        match self {
            Self::Category => "category",
            Self::Module => "module",
            Self::Permission => "permission",
            Self::Annotations => "annotations",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Self::Category => "Category",
            Self::Module => "Module",
            Self::Permission => "Permission",
            Self::Annotations => "Annotation",
        }
    }

    fn multi(self) -> bool {
        matches!(self, Self::Annotations)
    }

    /// The tool's values for this filter.
    fn values(self, tool: &ToolDoc) -> Vec<String> {
        match self {
            Self::Annotations => annotation_names(&tool.annotations)
                .map(str::to_owned)
                .collect(),
            _ => vec![text(tool, self.key()).unwrap_or_else(|| NONE.to_owned())],
        }
    }

    /// Where a value goes among the options: permission levels and annotations in their own
    /// order, the rest by name with "none" last.
    fn rank(self, value: &str) -> usize {
        match self {
            Self::Permission => Permission::from_name(value) as usize,
            Self::Annotations => annotation_flags(&Annotations::NONE)
                .iter()
                .position(|(name, _)| *name == value)
                .unwrap_or(usize::MAX),
            _ => usize::from(value == NONE),
        }
    }

    /// Every value some tool has, in order, with how many tools have it.
    fn options(self, tools: &[ToolDoc]) -> Vec<(String, usize)> {
        let mut counts: BTreeMap<(usize, String), usize> = BTreeMap::new();
        for value in tools.iter().flat_map(|tool| self.values(tool)) {
            *counts.entry((self.rank(&value), value)).or_default() += 1;
        }
        counts
            .into_iter()
            .map(|((_, value), n)| (value, n))
            .collect()
    }
}

/// A byte count in the largest binary unit that divides it.
struct Bytes(u64);

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            n if n >= 1 << 20 && n % (1 << 20) == 0 => write!(f, "{} MiB", n >> 20),
            n if n >= 1 << 10 && n % (1 << 10) == 0 => write!(f, "{} KiB", n >> 10),
            1 => f.write_str("1 byte"),
            n => write!(f, "{n} bytes"),
        }
    }
}

fn plural(n: usize, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

/// Text made safe in HTML content and in a quoted attribute value.
pub(super) struct Esc<'a>(pub(super) &'a str);

impl fmt::Display for Esc<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut rest = self.0;
        while let Some(at) = rest.find(['&', '<', '>', '"', '\'']) {
            f.write_str(&rest[..at])?;
            f.write_str(match rest.as_bytes()[at] {
                b'&' => "&amp;",
                b'<' => "&lt;",
                b'>' => "&gt;",
                b'"' => "&quot;",
                _ => "&#39;",
            })?;
            rest = &rest[at + 1..];
        }
        f.write_str(rest)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::registry::{Listing, Registry};
    use crate::spec::ToolSpec;

    const SCRIPT: &str = "</script><script>alert(1)</script>";
    const ATTRIBUTE: &str = "\"><img src=x onerror=alert(1)>";

    fn registry_of(spec: ToolSpec) -> Registry {
        let registry = Registry::builder().without_linked().build().unwrap();
        registry.register(spec, None).unwrap();
        registry
    }

    fn hostile() -> Registry {
        registry_of(
            ToolSpec::builder("evil.tool")
                .description(format!(
                    "{SCRIPT} then {ATTRIBUTE} <!-- `{SCRIPT}` '\n\n- {ATTRIBUTE}\n- `x"
                ))
                .category(ATTRIBUTE)
                .tags([SCRIPT, "<!--", "'"])
                .input_schema(json!({
                    "type": "object",
                    "properties": {
                        "x": { "type": "string", "description": ATTRIBUTE, "default": SCRIPT },
                        ATTRIBUTE: { "enum": [SCRIPT] },
                    },
                }))
                .build()
                .unwrap(),
        )
    }

    #[test]
    fn text_from_a_tool_is_escaped_everywhere() {
        let page = hostile().catalog(Listing::every()).html();
        // The page's own script is the only one, and tool text adds no element or comment.
        assert_eq!(page.matches("<script").count(), 1, "{page}");
        assert_eq!(page.matches("</script").count(), 1, "{page}");
        assert!(!page.contains("<img"), "{page}");
        assert!(!page.contains("<!--"), "{page}");
        // What was written is still there to read, escaped: in text, attributes and code.
        assert!(page.contains("&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt; then"));
        assert!(page.contains("<code>&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;</code>"));
        assert!(page.contains("<li>&quot;&gt;&lt;img src=x onerror=alert(1)&gt;</li>"));
        assert!(page.contains("<li>`x</li>"), "a lone backtick stays text");
        assert!(page.contains(" data-category=\"&quot;&gt;&lt;img src=x onerror=alert(1)&gt;\""));
        assert!(page.contains("<span class=\"tag\">&lt;!--</span>"));
        assert!(page.contains("<span class=\"tag\">&#39;</span>"));
        assert!(page.contains(
            "<code>&quot;&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;&quot;</code>"
        ));
    }

    #[test]
    fn the_page_is_self_contained_and_the_same_every_time() {
        let registry = registry_of(
            ToolSpec::builder("weather.lookup")
                .description("Look up the weather of a city.")
                .input_schema(json!({
                    "type": "object",
                    "properties": { "city": { "type": "string" } },
                    "required": ["city"],
                }))
                .build()
                .unwrap(),
        );
        let page = registry.catalog(Listing::every()).html();
        assert_eq!(page, registry.catalog(Listing::every()).html());
        assert!(page.starts_with("<!doctype html>\n<html lang=\"en\">"));
        assert!(page.ends_with("</html>\n"));
        // Nothing names or fetches anything outside the page.
        for outside in [
            "http:", "https:", "src=", "<link", "@import", "url(", "fetch(",
        ] {
            assert!(!page.contains(outside), "{outside}");
        }
        assert!(page.contains("<article class=\"tool\" id=\"tool-weather.lookup\""));
        assert!(page.contains("data-module=\"weather\""));
        assert!(page.contains("<li><a href=\"#tool-weather.lookup\""));
        assert!(page.contains("<p id=\"count\" class=\"count\" aria-live=\"polite\">1 tool</p>"));
        assert!(page.contains("Registered at run time"));
        assert!(page.contains("<span class=\"req\">required</span>"));
    }
}
