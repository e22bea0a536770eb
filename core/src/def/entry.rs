//! What a [`Tool`](super::Tool) handle points at: the tool (a linked definition or a run-time spec) with
//! what the registry derives from it once, and the two ways one is made.

use std::any::Any;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::SystemTime;

use rustc_hash::FxHashMap;
use schemars::Schema;
use serde_json::Value;

use super::{Annotations, Permission, Risk, ToolDef};
use crate::call::{BoxFuture, CallEnv, Ctx, ToolArgs, ToolError, ToolResult};
use crate::scope::Scope;
use crate::spec::{SpecError, ToolHandler, ToolSpec};

/// Which meta-tool an entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Meta {
    Search,
    Describe,
    Execute,
}

/// How many providers a tool is defined for: the length of
/// [`Provider::ALL`](crate::format::Provider::ALL), which format checks at compile time.
pub(crate) const PROVIDERS: usize = 5;

/// A tool with what the registry derives from it once: the risk level, whether calls wait for
/// approval, whether they take the direct path, and the cached schema and provider format.
pub(crate) struct Entry {
    pub(crate) kind: Kind,
    /// The annotations that apply, which every call's audit record carries.
    applied: Annotations,
    pub(crate) risk: Risk,
    /// Calls wait for a person's approval.
    pub(crate) confirm: bool,
    /// No stage that waits applies to the tool: calls go straight from validation to the
    /// handler. The pipeline decides it from its list of stages on the tool's first call (an
    /// entry is made below the stages, which read it).
    pub(crate) direct: OnceLock<bool>,
    /// The module part of the name (the whole name without a `.`), kept apart for the module
    /// rule every call checks.
    pub(crate) module: Box<str>,
    /// Copied out of the definition for the visibility check every call makes: the least
    /// permission level, and the tool's own `enabled = path` predicate.
    pub(crate) permission: Permission,
    pub(crate) predicate: Option<fn(&Scope) -> bool>,
    input_schema: OnceLock<Schema>,
    /// The input schema has an object whose unknown keys [`crate::call::fields`] refuses.
    open_objects: OnceLock<bool>,
    output_schema: OnceLock<Option<Value>>,
    /// The tool's definition for each provider, in the order of
    /// [`Provider::ALL`](crate::format::Provider::ALL), built on first use by
    /// [`format`](crate::format).
    pub(crate) formats: [OnceLock<Value>; PROVIDERS],
    /// The same in strict mode, or why the tool cannot be listed so: an error of format's own
    /// type, which only format reads back.
    pub(crate) strict_formats: [OnceLock<Result<Value, Arc<dyn Any + Send + Sync>>>; PROVIDERS],
}

/// Where a tool comes from: `#[tool]` or a spec registered at run time.
// An entry is made once per tool and read on every call: the owned case stays inline rather
// than behind a second pointer, and the few linked entries carry the unused bytes.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Kind {
    Linked(&'static ToolDef),
    Owned(Owned),
}

/// A tool registered at run time: its spec, its handler if it has one, and the compiled
/// validator of its input schema.
pub(crate) struct Owned {
    pub(crate) spec: ToolSpec,
    pub(crate) handler: Option<ToolHandler>,
    pub(crate) created_at: SystemTime,
    validator: Arc<jsonschema::Validator>,
    /// Which of the registry's meta-tools this is, for the three of
    /// [`discovery`](crate::discovery); their calls are answered by the registry.
    pub(crate) meta: Option<Meta>,
}

impl Entry {
    fn new(kind: Kind) -> Self {
        let mut entry = Self {
            kind,
            applied: Annotations::NONE,
            risk: Risk::Low,
            confirm: false,
            direct: OnceLock::new(),
            module: Box::default(),
            permission: Permission::Guest,
            predicate: None,
            input_schema: OnceLock::new(),
            open_objects: OnceLock::new(),
            output_schema: OnceLock::new(),
            formats: Default::default(),
            strict_formats: Default::default(),
        };
        entry.permission = entry.permission();
        entry.predicate = match &entry.kind {
            Kind::Linked(def) => def.enabled_fn(),
            Kind::Owned(_) => None,
        };
        let annotations =
            crate::meta::effective(entry.name(), entry.category(), entry.annotations());
        entry.applied = annotations;
        entry.risk = crate::meta::risk(&annotations, entry.tier());
        entry.confirm = annotations.requires_confirmation == Some(true);
        entry.module = crate::scope::module_of(entry.name()).into();
        entry
    }

    /// The annotations that apply (see [`Tool::effective_annotations`](super::Tool::effective_annotations)).
    pub(crate) fn effective_annotations(&self) -> Annotations {
        self.applied
    }

    pub(crate) fn output_schema(&self) -> Option<&Value> {
        self.output_schema
            .get_or_init(|| match &self.kind {
                Kind::Linked(def) => def.build_output_schema().map(|schema| {
                    let mut value = schema.to_value();
                    if let Value::Object(map) = &mut value {
                        map.remove("$schema");
                    }
                    value
                }),
                Kind::Owned(owned) => owned.spec.output_schema().cloned(),
            })
            .as_ref()
    }

    /// The validator of a run-time tool's declared output schema; `None` for a compiled tool,
    /// typed by construction, and for a tool that declares none.
    #[inline]
    pub(crate) fn output_validator(&self) -> Option<&jsonschema::Validator> {
        match &self.kind {
            Kind::Owned(owned) if owned.meta.is_none() => owned.spec.output_validator(),
            _ => None,
        }
    }

    pub(crate) fn input_schema(&self) -> &Schema {
        self.input_schema.get_or_init(|| match &self.kind {
            Kind::Linked(def) => def.build_input_schema(),
            Kind::Owned(owned) => Schema::try_from(owned.spec.input_schema().clone())
                .unwrap_or_else(|_| Schema::default()),
        })
    }
}

/// The interned entry of a linked definition: one per `ToolDef` for the life of the program,
/// like the definition itself, shared by every registry that holds it.
pub(super) fn interned(def: &'static ToolDef) -> &'static Entry {
    type Interned = Mutex<FxHashMap<usize, &'static Entry>>;
    static INTERNED: OnceLock<Interned> = OnceLock::new();
    let mut interned = INTERNED
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    interned
        .entry(std::ptr::from_ref(def) as usize)
        // One allocation per static definition, never per registration: bounded by the
        // number of `ToolDef`s, which are themselves static.
        .or_insert_with(|| Box::leak(Box::new(Entry::new(Kind::Linked(def)))))
}

/// The entry of a run-time tool, built from a checked spec.
pub(super) fn owned(
    spec: ToolSpec,
    handler: Option<ToolHandler>,
    created_at: SystemTime,
) -> Result<Arc<Entry>, SpecError> {
    let validator = spec.validator()?;
    Ok(Arc::new(Entry::new(Kind::Owned(Owned {
        spec,
        handler,
        created_at,
        validator,
        meta: None,
    }))))
}

/// The entry of one of the registry's meta-tools (see [`discovery`](crate::discovery)).
pub(super) fn meta(spec: ToolSpec, meta: Meta) -> Arc<Entry> {
    let validator = spec.validator().expect("a built spec has a validator");
    Arc::new(Entry::new(Kind::Owned(Owned {
        spec,
        handler: None,
        created_at: SystemTime::UNIX_EPOCH,
        validator,
        meta: Some(meta),
    })))
}

impl Entry {
    /// Whether the call with `arguments` (validated JSON text) needs approval by the tool's
    /// `confirm_if`. A predicate that cannot read the arguments or panics asks: it fails
    /// closed.
    pub(crate) fn confirm_if(&self, arguments: &str) -> bool {
        match &self.kind {
            Kind::Linked(def) => def.confirm_if_fn().is_some_and(|confirm_if| {
                std::panic::catch_unwind(|| confirm_if(ToolArgs::Text(arguments)))
                    .map_or(true, |asked| asked.unwrap_or(true))
            }),
            Kind::Owned(owned) => {
                owned.spec.confirm_if().is_some()
                    && serde_json::from_str::<Value>(arguments)
                        .map_or(true, |args| owned.spec.confirms(&args))
            }
        }
    }

    /// Which meta-tool this is, if it is one.
    #[inline]
    pub(crate) fn meta(&self) -> Option<Meta> {
        match &self.kind {
            Kind::Owned(owned) => owned.meta,
            Kind::Linked(_) => None,
        }
    }

    /// Validation: the arguments are read into what the handler takes, and the handler is
    /// returned, not yet started. A compiled tool's shim deserializes into its argument type; a
    /// run-time tool's arguments are checked against its input schema.
    ///
    /// `lenient`: what models send is read as meant first (see [`crate::call::lenient`]). A
    /// compiled tool's text arguments are read as they are, and only when that fails read again
    /// as a [`Value`] through the lenient rules, so a good call pays nothing for them.
    #[inline]
    pub(crate) fn prepare<'a>(
        &self,
        args: ToolArgs<'a>,
        ctx: &'a Ctx,
        state: &'a crate::call::TypeMap,
        lenient: bool,
    ) -> Result<BoxFuture<'a, Result<ToolResult, ToolError>>, ToolError> {
        match &self.kind {
            Kind::Linked(def) if lenient => self.prepare_lenient(def, args, CallEnv { ctx, state }),
            Kind::Linked(def) => self.call_linked(def, args, CallEnv { ctx, state }),
            Kind::Owned(owned) => owned.prepare(args, ctx, lenient.then(|| self.schema_value())),
        }
    }

    fn schema_value(&self) -> &Value {
        self.input_schema().as_value()
    }

    /// A compiled tool's shim, after the unknown keys of nested objects are refused (see
    /// [`crate::call::fields`]; only for a schema that has such objects).
    fn call_linked<'t, 'a>(
        &self,
        def: &ToolDef,
        args: ToolArgs<'t>,
        env: CallEnv<'a>,
    ) -> Result<BoxFuture<'a, Result<ToolResult, ToolError>>, ToolError> {
        let open = *self
            .open_objects
            .get_or_init(|| crate::call::fields::has_open_objects(self.schema_value()));
        if open && let Err(error) = crate::call::fields::check(&args, self.schema_value()) {
            crate::call::dispose_args(args);
            return Err(error);
        }
        (def.call_fn())(args, env)
    }

    /// A compiled tool's call under the lenient rules: the arguments are read as they are, and
    /// only when that fails read again as a [`Value`] through the lenient rules, so a good call
    /// pays nothing for them. A [`Value`] is written out once for the first reading.
    fn prepare_lenient<'a>(
        &self,
        def: &ToolDef,
        args: ToolArgs<'_>,
        env: CallEnv<'a>,
    ) -> Result<BoxFuture<'a, Result<ToolResult, ToolError>>, ToolError> {
        let written;
        let text = match args {
            ToolArgs::Text(text) => text,
            ToolArgs::Value(value @ Value::Object(_)) => {
                written = crate::call::args::args_text(ToolArgs::Value(value))?;
                &*written
            }
            other => return self.call_linked(def, other, env),
        };
        match self.call_linked(def, ToolArgs::Text(text), env) {
            Err(error @ ToolError::InvalidArguments { .. }) => {
                let Ok(mut value) = crate::call::args_value(ToolArgs::Text(text)) else {
                    return Err(error);
                };
                match crate::call::lenient::coerce(&mut value, self.schema_value()) {
                    Ok(true) => self.call_linked(def, ToolArgs::Value(value), env),
                    Ok(false) => {
                        crate::call::dispose(value);
                        Err(error)
                    }
                    Err(costly) => {
                        crate::call::dispose(value);
                        Err(costly.error())
                    }
                }
            }
            other => other,
        }
    }
}

impl Owned {
    fn prepare(
        &self,
        args: ToolArgs<'_>,
        ctx: &Ctx,
        lenient: Option<&Value>,
    ) -> Result<BoxFuture<'static, Result<ToolResult, ToolError>>, ToolError> {
        let Some(handler) = &self.handler else {
            crate::call::dispose_args(args);
            return Err(ToolError::NoHandler {
                tool: self.spec.tool_name().to_owned(),
            });
        };
        let mut value = crate::call::args_value(args)?;
        if let Some(schema) = lenient
            && let Err(costly) = crate::call::lenient::coerce(&mut value, schema)
        {
            crate::call::dispose(value);
            return Err(costly.error());
        }
        let error =
            self.validator
                .iter_errors(&value)
                .next()
                .map(|error| ToolError::InvalidArguments {
                    tool: String::new(),
                    path: json_path(&error.instance_path().to_string()),
                    message: error.to_string(),
                });
        if let Some(error) = error {
            crate::call::dispose(value);
            return Err(error);
        }
        Ok(handler.start(value, ctx.clone()))
    }
}

/// A JSON Pointer (`/items/2/name`) as the path a compiled tool's error names (`items[2].name`).
pub(crate) fn json_path(pointer: &str) -> String {
    let mut path = String::new();
    for segment in pointer.split('/').skip(1) {
        let segment = segment.replace("~1", "/").replace("~0", "~");
        if !segment.is_empty() && segment.bytes().all(|b| b.is_ascii_digit()) {
            path.push('[');
            path.push_str(&segment);
            path.push(']');
        } else {
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(&segment);
        }
    }
    path
}

#[cfg(test)]
mod tests {
    use super::json_path;

    #[test]
    fn json_pointers_read_as_paths() {
        assert_eq!(json_path(""), "");
        assert_eq!(json_path("/limit"), "limit");
        assert_eq!(json_path("/items/2/name"), "items[2].name");
        assert_eq!(json_path("/a~1b/0"), "a/b[0]");
    }
}
