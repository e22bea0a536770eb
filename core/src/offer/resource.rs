//! [`ResourceSpec`]: a resource (one URI) or a resource template (a URI template) and the
//! function that reads it; [`IntoContents`], what a reader may return.

use std::collections::BTreeMap;
use std::sync::Arc;

use futures::future::BoxFuture;

use super::about::{About, about_methods};
use super::error::OfferError;
use super::template::UriTemplate;
use crate::media::Resource;
use crate::{Ctx, ToolError};

/// What a reader is given: the URI asked for, its template variables (percent-decoded and
/// checked, empty for a plain resource) and the caller's context.
#[derive(Clone)]
pub struct ReadRequest {
    /// The URI asked for.
    pub uri: String,
    /// The template's variables, by name.
    pub variables: BTreeMap<String, String>,
    /// The caller: its scope, its client link.
    pub ctx: Ctx,
}

impl ReadRequest {
    /// The variable `name`, or `""`.
    pub fn variable(&self, name: &str) -> &str {
        self.variables.get(name).map_or("", String::as_str)
    }
}

/// The future a reader returns.
pub type ReadFuture = BoxFuture<'static, Result<Vec<Resource>, ToolError>>;

type Reader = Arc<dyn Fn(ReadRequest) -> ReadFuture + Send + Sync>;

/// A resource or a resource template: what a client lists (`resources/list`,
/// `resources/templates/list`) and reads (`resources/read`). Declared with `#[resource]` on a
/// function, or built here and given to [`Registry::register_resource`](crate::Registry::register_resource).
///
/// ```
/// use tool_registry::content::Resource;
/// use tool_registry::offer::ResourceSpec;
///
/// let motd = ResourceSpec::new("notes://motd", "motd", |request| async move {
///     Ok(vec![Resource::text(request.uri, "Deploys are frozen until Monday.")])
/// })
/// .unwrap()
/// .with_description("The message of the day.")
/// .with_mime_type("text/plain");
/// assert!(motd.template().is_none());
/// ```
#[derive(Clone)]
pub struct ResourceSpec {
    uri: String,
    template: Option<UriTemplate>,
    about: About,
    mime_type: Option<String>,
    reader: Reader,
}

about_methods!(ResourceSpec, "read", "template variable");

impl std::fmt::Debug for ResourceSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceSpec")
            .field("uri", &self.uri)
            .field("name", &self.about.name)
            .field("permission", &self.about.permission)
            .finish_non_exhaustive()
    }
}

impl ResourceSpec {
    /// A resource at `uri` named `name`, read by `read`. A `uri` with `{variables}` makes a
    /// template ([`UriTemplate`]); one that cannot be read as either is an error.
    pub fn new<F, Fut>(
        uri: impl Into<String>,
        name: impl Into<String>,
        read: F,
    ) -> Result<Self, OfferError>
    where
        F: Fn(ReadRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<Resource>, ToolError>> + Send + 'static,
    {
        let uri = uri.into();
        Ok(Self {
            template: UriTemplate::parse(&uri)?,
            uri,
            about: About::new(name.into()),
            mime_type: None,
            reader: Arc::new(move |request| Box::pin(read(request))),
        })
    }

    /// The MIME type of what it holds.
    #[must_use]
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// Its URI, or its URI template as written.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// Its template, when its URI has variables.
    pub fn template(&self) -> Option<&UriTemplate> {
        self.template.as_ref()
    }

    /// Its MIME type.
    pub fn mime_type(&self) -> Option<&str> {
        self.mime_type.as_deref()
    }

    /// Reads it, as the registry does after its checks.
    pub(crate) fn read(&self, request: ReadRequest) -> ReadFuture {
        (self.reader)(request)
    }
}

/// What a `#[resource]` function may return: its contents, given the URI read and the
/// resource's MIME type.
///
/// - `String` and `&'static str`: one text content;
/// - `Vec<u8>`, `&'static [u8]` and [`bytes::Bytes`]: one binary content (base64 on the wire);
/// - [`Resource`]: one content as built; `Vec<Resource>`: several;
/// - `Result<T, E>` of any of these, `E: Display`: the error is the read's failure.
pub trait IntoContents {
    /// The contents.
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Result<Vec<Resource>, ToolError>;
}

fn typed(resource: Resource, mime_type: Option<&str>) -> Resource {
    match mime_type {
        Some(mime) => resource.with_mime_type(mime),
        None => resource,
    }
}

impl IntoContents for String {
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Result<Vec<Resource>, ToolError> {
        Ok(vec![typed(Resource::text(uri, self), mime_type)])
    }
}

impl IntoContents for &'static str {
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Result<Vec<Resource>, ToolError> {
        self.to_owned().into_contents(uri, mime_type)
    }
}

impl IntoContents for bytes::Bytes {
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Result<Vec<Resource>, ToolError> {
        let mime = mime_type.unwrap_or("application/octet-stream");
        Ok(vec![Resource::blob(uri, mime, self)])
    }
}

impl IntoContents for &'static [u8] {
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Result<Vec<Resource>, ToolError> {
        bytes::Bytes::from_static(self).into_contents(uri, mime_type)
    }
}

impl IntoContents for Vec<u8> {
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Result<Vec<Resource>, ToolError> {
        bytes::Bytes::from(self).into_contents(uri, mime_type)
    }
}

impl IntoContents for Resource {
    fn into_contents(self, _: &str, _: Option<&str>) -> Result<Vec<Resource>, ToolError> {
        Ok(vec![self])
    }
}

impl IntoContents for Vec<Resource> {
    fn into_contents(self, _: &str, _: Option<&str>) -> Result<Vec<Resource>, ToolError> {
        Ok(self)
    }
}

impl<T: IntoContents, E: std::fmt::Display> IntoContents for Result<T, E> {
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Result<Vec<Resource>, ToolError> {
        match self {
            Ok(value) => value.into_contents(uri, mime_type),
            Err(error) => Err(ToolError::failed(error.to_string())),
        }
    }
}
