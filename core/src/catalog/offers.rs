//! The resources, resource templates and prompts of a catalog, as Markdown, JSON and a section
//! of the HTML page: after the tools, when the registry offers any.

use std::fmt::{self, Write as _};

use serde_json::{Value, json};

use super::Catalog;
use super::html::Esc;
use crate::offer::{PromptSpec, ResourceSpec};

fn resource_json(resource: &ResourceSpec, key: &str) -> Value {
    let mut object = json!({
        key: resource.uri(),
        "name": resource.name(),
        "description": resource.description(),
        "permission": resource.permission(),
    });
    if let Some(title) = resource.title() {
        object["title"] = title.into();
    }
    if let Some(mime) = resource.mime_type() {
        object["mime_type"] = mime.into();
    }
    object
}

fn prompt_json(prompt: &PromptSpec) -> Value {
    let arguments: Vec<Value> = (prompt.arguments().iter())
        .map(|a| json!({"name": a.name, "description": a.description, "required": a.required}))
        .collect();
    let mut object = json!({
        "name": prompt.name(),
        "description": prompt.description(),
        "arguments": arguments,
        "permission": prompt.permission(),
    });
    if let Some(title) = prompt.title() {
        object["title"] = title.into();
    }
    object
}

/// A table cell: one line, its pipes escaped.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace(['\n', '\r'], " ")
}

impl Catalog<'_> {
    /// The resources, templates and prompts as JSON fields of the catalog (none when there
    /// are none).
    pub(crate) fn offers_json(&self, into: &mut Value) {
        let offered = &self.offered;
        if !offered.resources.is_empty() {
            into["resources"] = offered
                .resources
                .iter()
                .map(|r| resource_json(r, "uri"))
                .collect();
        }
        if !offered.templates.is_empty() {
            into["resource_templates"] = offered
                .templates
                .iter()
                .map(|r| resource_json(r, "uri_template"))
                .collect();
        }
        if !offered.prompts.is_empty() {
            into["prompts"] = offered.prompts.iter().map(prompt_json).collect();
        }
    }

    /// The resources, templates and prompts as Markdown sections (none when there are none).
    pub(crate) fn offers_markdown(&self, out: &mut String) {
        let offered = &self.offered;
        let resources: Vec<(&ResourceSpec, &str)> = (offered.resources.iter().map(|r| (r, "")))
            .chain(offered.templates.iter().map(|r| (r, " (template)")))
            .collect();
        if !resources.is_empty() {
            let _ = writeln!(out, "# Resources\n");
            let _ = writeln!(out, "| URI | Name | MIME type | Permission | Description |");
            let _ = writeln!(out, "| --- | --- | --- | --- | --- |");
            for (resource, kind) in resources {
                let _ = writeln!(
                    out,
                    "| `{}`{kind} | `{}` | {} | {} | {} |",
                    resource.uri(),
                    resource.name(),
                    resource.mime_type().unwrap_or(""),
                    resource.permission().as_str(),
                    cell(resource.description())
                );
            }
            out.push('\n');
        }
        if !offered.prompts.is_empty() {
            let _ = writeln!(out, "# Prompts\n");
            let _ = writeln!(out, "| Prompt | Arguments | Permission | Description |");
            let _ = writeln!(out, "| --- | --- | --- | --- |");
            for prompt in &offered.prompts {
                let arguments: Vec<String> = (prompt.arguments().iter())
                    .map(|a| {
                        format!(
                            "`{}`{}",
                            a.name,
                            if a.required { "" } else { " (optional)" }
                        )
                    })
                    .collect();
                let _ = writeln!(
                    out,
                    "| `{}` | {} | {} | {} |",
                    prompt.name(),
                    if arguments.is_empty() {
                        "none".to_owned()
                    } else {
                        arguments.join(", ")
                    },
                    prompt.permission().as_str(),
                    cell(prompt.description())
                );
            }
            out.push('\n');
        }
    }
}

impl Catalog<'_> {
    /// The resources, templates and prompts as sections of the HTML page, every string escaped
    /// (none when there are none).
    pub(crate) fn offers_html(&self, out: &mut String) -> fmt::Result {
        let offered = &self.offered;
        let resources: Vec<(&ResourceSpec, &str)> = (offered.resources.iter().map(|r| (r, "")))
            .chain(offered.templates.iter().map(|r| (r, " (template)")))
            .collect();
        if !resources.is_empty() {
            out.push_str(
                "<section class=\"offers\" id=\"resources\">\n<h2>Resources</h2>\n<table>\n\
                 <thead><tr><th>URI</th><th>Name</th><th>MIME type</th><th>Permission</th>\
                 <th>Description</th></tr></thead>\n<tbody>\n",
            );
            for (resource, kind) in resources {
                writeln!(
                    out,
                    "<tr><td><code>{}</code>{kind}</td><td><code>{}</code></td><td>{}</td>\
                     <td>{}</td><td>{}</td></tr>",
                    Esc(resource.uri()),
                    Esc(resource.name()),
                    Esc(resource.mime_type().unwrap_or("")),
                    resource.permission().as_str(),
                    Esc(resource.description())
                )?;
            }
            out.push_str("</tbody>\n</table>\n</section>\n");
        }
        if !offered.prompts.is_empty() {
            out.push_str(
                "<section class=\"offers\" id=\"prompts\">\n<h2>Prompts</h2>\n<table>\n\
                 <thead><tr><th>Prompt</th><th>Arguments</th><th>Permission</th>\
                 <th>Description</th></tr></thead>\n<tbody>\n",
            );
            for prompt in &offered.prompts {
                let mut arguments = String::new();
                for (i, argument) in prompt.arguments().iter().enumerate() {
                    let optional = if argument.required { "" } else { " (optional)" };
                    let comma = if i == 0 { "" } else { ", " };
                    write!(
                        arguments,
                        "{comma}<code>{}</code>{optional}",
                        Esc(&argument.name)
                    )?;
                }
                writeln!(
                    out,
                    "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    Esc(prompt.name()),
                    if arguments.is_empty() {
                        "none"
                    } else {
                        &arguments
                    },
                    prompt.permission().as_str(),
                    Esc(prompt.description())
                )?;
            }
            out.push_str("</tbody>\n</table>\n</section>\n");
        }
        Ok(())
    }
}
