//! Application state: values registered once on the registry and injected into tools that
//! take a `State<T>` parameter, kept by type.

use std::any::{Any, TypeId, type_name};
use std::collections::HashMap;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

/// A map of values keyed by their type.
#[derive(Clone, Default)]
pub(crate) struct TypeMap {
    map: HashMap<TypeId, Arc<dyn Any + Send + Sync>>,
}

impl TypeMap {
    pub(crate) fn insert<T: Send + Sync + 'static>(&mut self, value: T) {
        self.map.insert(TypeId::of::<T>(), Arc::new(value));
    }

    pub(crate) fn insert_arc<T: Send + Sync + 'static>(&mut self, value: Arc<T>) {
        self.map.insert(TypeId::of::<T>(), value);
    }

    pub(crate) fn get<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.map.get(&TypeId::of::<T>())?.downcast_ref()
    }

    pub(crate) fn get_arc<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        self.map.get(&TypeId::of::<T>())?.clone().downcast().ok()
    }
}

impl fmt::Debug for TypeMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TypeMap({} values)", self.map.len())
    }
}

/// Application state registered once on the registry, injected into tools that take a
/// `State<T>` parameter.
///
/// ```
/// use tool_registry::{tool, Ctx, Registry, State};
///
/// struct Greeting(String);
///
/// /// Greets someone with the configured greeting.
/// #[tool]
/// fn greet(name: String, greeting: State<Greeting>) -> String {
///     format!("{}, {name}!", greeting.0)
/// }
///
/// # tokio_test_block_on(async {
/// let registry = Registry::builder().state(Greeting("Hello".into())).build()?;
/// let result = registry.call("greet", r#"{"name": "Ada"}"#, &Ctx::new()).await?;
/// assert_eq!(result.content, "Hello, Ada!");
/// # Ok::<(), Box<dyn std::error::Error>>(()) });
/// # fn tokio_test_block_on<F: std::future::Future>(f: F) -> F::Output {
/// #     tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f) }
/// ```
pub struct State<T: ?Sized>(Arc<T>);

impl<T: ?Sized> State<T> {
    /// The shared value itself.
    pub fn arc(&self) -> &Arc<T> {
        &self.0
    }
}

impl<T> State<T> {
    pub(crate) fn from_arc(value: Arc<T>) -> Self {
        Self(value)
    }
}

impl<T: ?Sized> Deref for State<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: ?Sized> Clone for State<T> {
    fn clone(&self) -> Self {
        Self(Arc::clone(&self.0))
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for State<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("State").field(&&*self.0).finish()
    }
}

pub(crate) fn missing_state<T: ?Sized>() -> String {
    format!(
        "no state of type `{}` is registered; add it with `Registry::builder().state(value)`",
        type_name::<T>()
    )
}
