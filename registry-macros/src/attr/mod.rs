//! Parses `#[tool(...)]` and `#[arg(...)]`: each key is read into its slot, which catches a
//! repeated key; `key.rs` holds what is said about keys, `values.rs` reads what they are given.

use proc_macro2::TokenStream;
use syn::parse::Parser;
use syn::{Expr, LitStr, Path};

use crate::ctxt::Ctxt;

mod key;
mod values;

use key::{Key, skip_value};
pub(crate) use values::{BLOCK_KINDS, Sp, Text};
use values::{
    block_kinds, choice, crate_path, daily_limit, duration, flag, groups, names, one_line,
    positive, predicate, string, targets, text, version,
};

/// `#[tool(...)]`, read.
pub(crate) struct ToolAttr {
    pub(crate) krate: Option<Path>,
    pub(crate) name: Option<LitStr>,
    pub(crate) description: Option<Sp<Text>>,
    pub(crate) short_description: Option<LitStr>,
    pub(crate) aliases: Vec<LitStr>,
    pub(crate) version: Option<LitStr>,
    pub(crate) category: Option<LitStr>,
    pub(crate) tags: Vec<LitStr>,
    pub(crate) tier: Option<Sp<String>>,
    pub(crate) cost: Option<Sp<String>>,
    pub(crate) permission: Option<Sp<String>>,
    pub(crate) read_only: Option<Sp<bool>>,
    pub(crate) destructive: Option<Sp<bool>>,
    pub(crate) idempotent: Option<Sp<bool>>,
    pub(crate) open_world: Option<Sp<bool>>,
    pub(crate) requires_confirmation: Option<Sp<bool>>,
    pub(crate) requires_gate: Option<Sp<bool>>,
    pub(crate) defer_loading: Option<Sp<bool>>,
    pub(crate) sequential: Option<Sp<bool>>,
    pub(crate) gate_fail_closed: Option<Sp<bool>>,
    pub(crate) enabled: Option<Path>,
    pub(crate) strip_from_display: Option<Sp<bool>>,
    pub(crate) cooldown_ms: Option<Sp<u64>>,
    pub(crate) timeout_ms: Option<Sp<u64>>,
    pub(crate) daily_limit: Option<Sp<u32>>,
    pub(crate) max_args_bytes: Option<Sp<usize>>,
    pub(crate) blocking: Option<Sp<bool>>,
    pub(crate) output_schema: Option<Sp<bool>>,
    /// `confirm_if = path`: a function of the model arguments, by reference, deciding per call
    /// whether it needs approval.
    pub(crate) confirm_if: Option<Path>,
    pub(crate) cache_ms: Option<Sp<u64>>,
    pub(crate) cache_per_user: Option<Sp<bool>>,
    pub(crate) max_result_bytes: Option<Sp<usize>>,
    /// `task = "optional" | "required"`.
    pub(crate) task: Option<Sp<String>>,
    pub(crate) targets: Vec<Sp<String>>,
    /// `returns(image, file)`: the kinds of blocks the tool returns, for the catalog; `None`:
    /// as the return type says.
    pub(crate) returns: Option<Vec<Sp<String>>>,
    pub(crate) tag: Option<LitStr>,
    pub(crate) pattern: Option<LitStr>,
    pub(crate) groups: Option<Sp<Vec<Sp<String>>>>,
    pub(crate) example: Option<LitStr>,
}

/// Every key `#[tool(...)]` accepts, in the order the unknown-key message lists them. Only that
/// message reads it: a repeated key is caught by its slot.
const TOOL_KEYS: &[&str] = &[
    "crate",
    "name",
    "description",
    "short_description",
    "aliases",
    "version",
    "category",
    "tags",
    "tier",
    "cost",
    "permission",
    "read_only",
    "destructive",
    "idempotent",
    "open_world",
    "requires_confirmation",
    "requires_gate",
    "defer_loading",
    "sequential",
    "gate_fail_closed",
    "enabled",
    "strip_from_display",
    "cooldown",
    "timeout",
    "daily_limit",
    "max_args_bytes",
    "blocking",
    "output_schema",
    "confirm_if",
    "cache",
    "cache_per_user",
    "max_result_bytes",
    "task",
    "targets",
    "returns",
    "tag",
    "pattern",
    "groups",
    "example",
];

impl ToolAttr {
    pub(crate) fn parse(cx: &mut Ctxt, args: TokenStream) -> Self {
        let mut slots = ToolSlots::default();
        let parser = syn::meta::parser(|meta| {
            let name = meta
                .path
                .get_ident()
                .map(ToString::to_string)
                .unwrap_or_else(|| {
                    meta.path
                        .segments
                        .iter()
                        .map(|s| s.ident.to_string())
                        .collect::<Vec<_>>()
                        .join("::")
                });
            slots.read(cx, &Key::new("tool", &name, &meta))
        });
        if let Err(error) = parser.parse2(args) {
            cx.push(error);
        }
        slots.into_attr()
    }

    /// The names given in `targets(...)`.
    pub(crate) fn target_names(&self) -> impl Iterator<Item = &str> {
        self.targets.iter().map(|t| t.value.as_str())
    }
}

const TIERS: &[&str] = &["low", "medium", "high"];
const COSTS: &[&str] = &["free", "cheap", "expensive"];
const PERMISSIONS: &[&str] = &["guest", "user", "admin", "owner"];
const TASKS: &[&str] = &["forbidden", "optional", "required"];

/// The slots `#[tool(...)]` is read into, one per key.
#[derive(Default)]
struct ToolSlots {
    krate: Attr<Path>,
    name: Attr<LitStr>,
    description: Attr<Sp<Text>>,
    short_description: Attr<LitStr>,
    aliases: Attr<Vec<LitStr>>,
    version: Attr<LitStr>,
    category: Attr<LitStr>,
    tags: Attr<Vec<LitStr>>,
    tier: Attr<Sp<String>>,
    cost: Attr<Sp<String>>,
    permission: Attr<Sp<String>>,
    read_only: BoolAttr,
    destructive: BoolAttr,
    idempotent: BoolAttr,
    open_world: BoolAttr,
    requires_confirmation: BoolAttr,
    requires_gate: BoolAttr,
    defer_loading: BoolAttr,
    sequential: BoolAttr,
    gate_fail_closed: BoolAttr,
    enabled: Attr<Path>,
    strip_from_display: BoolAttr,
    cooldown_ms: Attr<Sp<u64>>,
    timeout_ms: Attr<Sp<u64>>,
    daily_limit: Attr<Sp<u32>>,
    max_args_bytes: Attr<Sp<usize>>,
    blocking: BoolAttr,
    output_schema: BoolAttr,
    confirm_if: Attr<Path>,
    cache_ms: Attr<Sp<u64>>,
    cache_per_user: BoolAttr,
    max_result_bytes: Attr<Sp<usize>>,
    task: Attr<Sp<String>>,
    targets: Attr<Vec<Sp<String>>>,
    returns: Attr<Vec<Sp<String>>>,
    tag: Attr<LitStr>,
    pattern: Attr<LitStr>,
    groups: Attr<Sp<Vec<Sp<String>>>>,
    example: Attr<LitStr>,
}

impl ToolSlots {
    fn read(&mut self, cx: &mut Ctxt, key: &Key) -> syn::Result<()> {
        match key.name {
            // #[tool(crate = ::my_renamed_registry)] or #[tool(crate = "::my_renamed_registry")]
            "crate" => self.krate.read(cx, key, crate_path),
            // #[tool(name = "module.tool")]
            "name" => self.name.read(cx, key, string),
            // #[tool(description = "...")] or #[tool(description = include_str!("x.md"))]
            "description" => self.description.read(cx, key, text),
            // #[tool(short_description = "Search the notes.")]
            "short_description" => self.short_description.read(cx, key, one_line),
            // #[tool(aliases(search, find))]
            "aliases" => self.aliases.read(cx, key, names),
            // #[tool(version = "1.0.0")]
            "version" => self.version.read(cx, key, version),
            // #[tool(category = "search")]
            "category" => self.category.read(cx, key, string),
            // #[tool(tags(web, search))]
            "tags" => self.tags.read(cx, key, names),
            // #[tool(tier = "low" | "medium" | "high")]
            "tier" => self.tier.read(cx, key, choice(TIERS)),
            // #[tool(cost = "free" | "cheap" | "expensive")]
            "cost" => self.cost.read(cx, key, choice(COSTS)),
            // #[tool(permission = "guest" | "user" | "admin" | "owner")]
            "permission" => self.permission.read(cx, key, choice(PERMISSIONS)),
            // #[tool(read_only)] or #[tool(read_only = false)], and so for every flag
            "read_only" => self.read_only.read(cx, key),
            "destructive" => self.destructive.read(cx, key),
            "idempotent" => self.idempotent.read(cx, key),
            "open_world" => self.open_world.read(cx, key),
            "requires_confirmation" => self.requires_confirmation.read(cx, key),
            "requires_gate" => self.requires_gate.read(cx, key),
            "defer_loading" => self.defer_loading.read(cx, key),
            "sequential" => self.sequential.read(cx, key),
            // #[tool(gate_fail_closed)]
            "gate_fail_closed" => self.gate_fail_closed.read(cx, key),
            // #[tool(enabled = path::to::predicate)], a `fn(&Scope) -> bool`
            "enabled" => self.enabled.read(cx, key, predicate),
            // #[tool(strip_from_display = false)]
            "strip_from_display" => self.strip_from_display.read(cx, key),
            // #[tool(cooldown = "30s")]
            "cooldown" => self.cooldown_ms.read(cx, key, duration),
            // #[tool(timeout = "2m")]
            "timeout" => self.timeout_ms.read(cx, key, duration),
            // #[tool(daily_limit = 3)]
            "daily_limit" => self.daily_limit.read(cx, key, daily_limit),
            // #[tool(max_args_bytes = 4096)]
            "max_args_bytes" => {
                let wanted = "`max_args_bytes` must be a whole number of bytes, at least 1, e.g. `max_args_bytes = 65536`; leave it out for the default of 1 MiB";
                self.max_args_bytes.read(cx, key, positive(wanted))
            }
            // #[tool(blocking)]
            "blocking" => self.blocking.read(cx, key),
            // #[tool(output_schema)]: the return type's JSON Schema is the tool's output schema
            "output_schema" => self.output_schema.read(cx, key),
            // #[tool(confirm_if = outside_tmp)], a `fn(&A, &B, ...) -> bool` of the model arguments
            "confirm_if" => self.confirm_if.read(cx, key, predicate),
            // #[tool(cache = "5m")], for a `read_only` or `idempotent` tool
            "cache" => self.cache_ms.read(cx, key, duration),
            // #[tool(cache_per_user = false)]
            "cache_per_user" => self.cache_per_user.read(cx, key),
            // #[tool(max_result_bytes = 16384)]
            "max_result_bytes" => {
                let wanted = "`max_result_bytes` must be a whole number of bytes, at least 1, e.g. `max_result_bytes = 16384`";
                self.max_result_bytes.read(cx, key, positive(wanted))
            }
            // #[tool(task = "optional" | "required")]
            "task" => self.task.read(cx, key, choice(TASKS)),
            // #[tool(targets(openai_strict, anthropic_strict, gemini))]
            "targets" => self.targets.read(cx, key, targets),
            // #[tool(returns(image, resource_link))]: what the catalog says the tool returns
            "returns" => self.returns.read(cx, key, block_kinds),
            // #[tool(tag = "RESEARCH")]
            "tag" => self.tag.read(cx, key, string),
            // #[tool(pattern = r"(factual|communication)\s+(.+)")]
            "pattern" => self.pattern.read(cx, key, string),
            // #[tool(groups(category, content))]
            "groups" => self.groups.read(cx, key, groups),
            // #[tool(example = "RESEARCH: [query]")]
            "example" => self.example.read(cx, key, string),
            _ => key.unknown(cx, TOOL_KEYS),
        }
    }

    fn into_attr(self) -> ToolAttr {
        ToolAttr {
            krate: self.krate.get(),
            name: self.name.get(),
            description: self.description.get(),
            short_description: self.short_description.get(),
            aliases: self.aliases.get().unwrap_or_default(),
            version: self.version.get(),
            category: self.category.get(),
            tags: self.tags.get().unwrap_or_default(),
            tier: self.tier.get(),
            cost: self.cost.get(),
            permission: self.permission.get(),
            read_only: self.read_only.get(),
            destructive: self.destructive.get(),
            idempotent: self.idempotent.get(),
            open_world: self.open_world.get(),
            requires_confirmation: self.requires_confirmation.get(),
            requires_gate: self.requires_gate.get(),
            defer_loading: self.defer_loading.get(),
            sequential: self.sequential.get(),
            gate_fail_closed: self.gate_fail_closed.get(),
            enabled: self.enabled.get(),
            strip_from_display: self.strip_from_display.get(),
            cooldown_ms: self.cooldown_ms.get(),
            timeout_ms: self.timeout_ms.get(),
            daily_limit: self.daily_limit.get(),
            max_args_bytes: self.max_args_bytes.get(),
            blocking: self.blocking.get(),
            output_schema: self.output_schema.get(),
            confirm_if: self.confirm_if.get(),
            cache_ms: self.cache_ms.get(),
            cache_per_user: self.cache_per_user.get(),
            max_result_bytes: self.max_result_bytes.get(),
            task: self.task.get(),
            targets: self.targets.get().unwrap_or_default(),
            returns: self.returns.get(),
            tag: self.tag.get(),
            pattern: self.pattern.get(),
            groups: self.groups.get(),
            example: self.example.get(),
        }
    }
}

/// `#[arg(desc = "...", default = expr, rename = "...", max_len = N, min = N, max = N)]` on a
/// parameter.
#[derive(Default)]
pub(crate) struct ArgAttr {
    pub(crate) desc: Option<LitStr>,
    pub(crate) default: Option<Box<Expr>>,
    pub(crate) rename: Option<LitStr>,
    pub(crate) max_len: Option<Sp<usize>>,
    /// The least value the schema states (`minimum`).
    pub(crate) min: Option<Box<Expr>>,
    /// The greatest value the schema states (`maximum`).
    pub(crate) max: Option<Box<Expr>>,
}

/// Every key `#[arg(...)]` accepts, for the unknown-key message.
const ARG_KEYS: &[&str] = &["desc", "default", "rename", "max_len", "min", "max"];

impl ArgAttr {
    pub(crate) fn parse(cx: &mut Ctxt, attr: &syn::Attribute) -> Self {
        if matches!(attr.meta, syn::Meta::Path(_)) {
            return ArgAttr::default();
        }
        let mut slots = ArgSlots::default();
        let result = attr.parse_nested_meta(|meta| {
            let written = meta
                .path
                .get_ident()
                .map(ToString::to_string)
                .unwrap_or_default();
            let name = if written == "description" {
                "desc"
            } else {
                &written
            };
            slots.read(cx, &Key::new("arg", name, &meta))
        });
        if let Err(error) = result {
            cx.push(error);
        }
        slots.into_attr()
    }
}

/// The slots `#[arg(...)]` is read into, one per key.
#[derive(Default)]
struct ArgSlots {
    desc: Attr<LitStr>,
    default: Attr<Box<Expr>>,
    rename: Attr<LitStr>,
    max_len: Attr<Sp<usize>>,
    min: Attr<Box<Expr>>,
    max: Attr<Box<Expr>>,
}

impl ArgSlots {
    fn read(&mut self, cx: &mut Ctxt, key: &Key) -> syn::Result<()> {
        match key.name {
            // #[arg(desc = "What to look for")] or #[arg(description = "...")]
            "desc" => self.desc.read(cx, key, string),
            // #[arg(default = 5)]
            "default" => self.default.read(cx, key, |_, key| {
                Ok(Some(Box::new(key.meta.value()?.parse()?)))
            }),
            // #[arg(rename = "q")]
            "rename" => self.rename.read(cx, key, string),
            // #[arg(max_len = 200)]
            "max_len" => {
                let wanted = "`max_len` must be a whole number of characters, at least 1, e.g. `max_len = 200`";
                self.max_len.read(cx, key, positive(wanted))
            }
            // #[arg(min = 1, max = 50)]: the bounds the schema states
            "min" => self.min.read(cx, key, |_, key| {
                Ok(Some(Box::new(key.meta.value()?.parse()?)))
            }),
            "max" => self.max.read(cx, key, |_, key| {
                Ok(Some(Box::new(key.meta.value()?.parse()?)))
            }),
            _ => key.unknown(cx, ARG_KEYS),
        }
    }

    fn into_attr(self) -> ArgAttr {
        ArgAttr {
            desc: self.desc.get(),
            default: self.default.get(),
            rename: self.rename.get(),
            max_len: self.max_len.get(),
            min: self.min.get(),
            max: self.max.get(),
        }
    }
}

/// The slot of one key: what was read for it, and whether it was written at all.
struct Attr<T> {
    /// Set even when the value was rejected, so that writing the key again is still a duplicate.
    written: bool,
    value: Option<T>,
}

impl<T> Default for Attr<T> {
    fn default() -> Self {
        Self {
            written: false,
            value: None,
        }
    }
}

impl<T> Attr<T> {
    /// Reads the key's value with `parse`, or reports the key as a duplicate if it came before:
    /// the one place where repeated keys are caught. A duplicate's value is skipped unread, so it
    /// yields that one error whatever it holds.
    fn read(
        &mut self,
        cx: &mut Ctxt,
        key: &Key,
        parse: impl FnOnce(&mut Ctxt, &Key) -> syn::Result<Option<T>>,
    ) -> syn::Result<()> {
        if self.written {
            key.duplicate(cx);
            return skip_value(key.meta);
        }
        self.written = true;
        self.value = parse(cx, key)?;
        Ok(())
    }

    fn get(self) -> Option<T> {
        self.value
    }
}

/// The slot of a flag: `key`, `key = true` or `key = false`.
#[derive(Default)]
struct BoolAttr(Attr<Sp<bool>>);

impl BoolAttr {
    fn read(&mut self, cx: &mut Ctxt, key: &Key) -> syn::Result<()> {
        self.0.read(cx, key, flag)
    }

    fn get(self) -> Option<Sp<bool>> {
        self.0.get()
    }
}

#[cfg(test)]
mod tests {
    use syn::parse::Parser;

    use super::{ARG_KEYS, ArgAttr, TOOL_KEYS, ToolAttr};
    use crate::ctxt::Ctxt;

    fn messages(cx: Ctxt) -> Vec<String> {
        cx.finish()
            .map_or_else(Vec::new, |e| e.into_iter().map(|e| e.to_string()).collect())
    }

    fn tool_errors(args: &str) -> Vec<String> {
        let mut cx = Ctxt::new();
        ToolAttr::parse(&mut cx, args.parse().unwrap());
        messages(cx)
    }

    fn arg_errors(args: &str) -> Vec<String> {
        let attrs = syn::Attribute::parse_outer
            .parse_str(&format!("#[arg({args})]"))
            .unwrap();
        let mut cx = Ctxt::new();
        ArgAttr::parse(&mut cx, &attrs[0]);
        messages(cx)
    }

    #[test]
    fn every_tool_key_has_a_slot_that_catches_a_repeat() {
        for key in TOOL_KEYS {
            let errors = tool_errors(&format!("{key} = x, {key} = x"));
            let duplicate = format!("duplicate tool attribute `{key}`; keep one of them");
            assert_eq!(
                errors.iter().filter(|e| **e == duplicate).count(),
                1,
                "{errors:?}"
            );
            assert!(
                !errors.iter().any(|e| e.starts_with("unknown")),
                "{errors:?}"
            );
        }
    }

    #[test]
    fn the_documentation_table_names_every_tool_key() {
        let readme = include_str!("../../../registry/README.md");
        let start = readme
            .find("## Attribute keys")
            .expect("the table's heading");
        let table: String = readme[start..]
            .lines()
            .skip(1)
            .skip_while(|line| !line.starts_with('|'))
            .take_while(|line| line.starts_with('|'))
            .map(|line| line.split('|').nth(1).unwrap_or_default())
            .collect::<Vec<_>>()
            .join(" ");
        let missing: Vec<&str> = TOOL_KEYS
            .iter()
            .copied()
            .filter(|key| {
                !table
                    .split(['`', ',', ' ', '(', '='])
                    .any(|word| word == *key)
            })
            .collect();
        assert!(missing.is_empty(), "keys the table leaves out: {missing:?}");
    }

    #[test]
    fn every_arg_key_has_a_slot_that_catches_a_repeat() {
        for key in ARG_KEYS {
            let errors = arg_errors(&format!("{key} = x, {key} = x"));
            let duplicate = format!("duplicate arg attribute `{key}`; keep one of them");
            assert_eq!(
                errors.iter().filter(|e| **e == duplicate).count(),
                1,
                "{errors:?}"
            );
            assert!(
                !errors.iter().any(|e| e.starts_with("unknown")),
                "{errors:?}"
            );
        }
    }

    #[test]
    fn description_and_desc_share_one_slot() {
        assert_eq!(
            arg_errors(r#"desc = "a", description = "b""#),
            ["duplicate arg attribute `description` (the same as `desc`); keep one of them"],
        );
        assert_eq!(
            arg_errors(r#"description = "a", desc = "b""#),
            ["duplicate arg attribute `desc`; keep one of them"],
        );
    }

    #[test]
    fn a_rejected_value_still_fills_its_slot() {
        assert_eq!(
            tool_errors(r#"tier = "extreme", tier = "low""#),
            [
                r#"`tier` must be one of "low", "medium", "high"; found "extreme""#,
                "duplicate tool attribute `tier`; keep one of them",
            ],
        );
    }

    #[test]
    fn a_repeated_value_is_not_read() {
        assert_eq!(
            tool_errors("daily_limit = 3, daily_limit = 0, tags = 1, tags = 2"),
            [
                "duplicate tool attribute `daily_limit`; keep one of them",
                "`tags` expects a list, e.g. `tags(a, b)`",
                "duplicate tool attribute `tags`; keep one of them",
            ],
        );
    }

    #[test]
    fn unknown_keys_are_never_duplicates() {
        assert_eq!(
            tool_errors("dayly_limit = 3, dayly_limit = 3"),
            ["unknown tool attribute `dayly_limit`; did you mean `daily_limit`?"; 2],
        );
    }
}
