//! URI templates (RFC 6570, simple `{name}` expansion): what a resource template's URI says,
//! matching a concrete URI against it, and the checks on what a variable may hold.

use std::collections::BTreeMap;

use super::error::OfferError;

/// The longest URI a read or a completion is asked about; anything longer is refused unread.
pub const MAX_URI_BYTES: usize = 4096;

/// A resource template's URI, split into its literal parts and its variables:
/// `test://template/{id}/data` is `test://template/`, `id`, `/data`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriTemplate {
    text: String,
    parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    Variable(String),
}

impl UriTemplate {
    /// Reads `text`: literal characters and `{name}` variables (a name is ASCII letters,
    /// digits and `_`), two variables never side by side. `None` for a URI without variables,
    /// which names one resource rather than a template.
    pub fn parse(text: &str) -> Result<Option<Self>, OfferError> {
        let bad = |reason: &str| OfferError::InvalidTemplate {
            template: text.to_owned(),
            reason: reason.to_owned(),
        };
        let mut parts = Vec::new();
        let mut rest = text;
        while let Some(open) = rest.find('{') {
            if open > 0 {
                parts.push(Part::Literal(rest[..open].to_owned()));
            } else if matches!(parts.last(), Some(Part::Variable(_))) {
                return Err(bad("two variables side by side cannot be told apart"));
            }
            let close = rest[open..]
                .find('}')
                .ok_or_else(|| bad("a `{` is never closed"))?;
            let name = &rest[open + 1..open + close];
            if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
                return Err(bad(
                    "a variable is `{name}`, its name ASCII letters, digits and `_` (operators like `{+name}` are not supported)",
                ));
            }
            parts.push(Part::Variable(name.to_owned()));
            rest = &rest[open + close + 1..];
        }
        if rest.contains('}') {
            return Err(bad("a `}` closes nothing"));
        }
        if !rest.is_empty() {
            parts.push(Part::Literal(rest.to_owned()));
        }
        if !parts.iter().any(|part| matches!(part, Part::Variable(_))) {
            return Ok(None);
        }
        Ok(Some(Self {
            text: text.to_owned(),
            parts,
        }))
    }

    /// The template as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The names of its variables, in order.
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().filter_map(|part| match part {
            Part::Variable(name) => Some(name.as_str()),
            Part::Literal(_) => None,
        })
    }

    /// The variables of `uri` if it is an instance of this template, each percent-decoded and
    /// checked ([`check_variable`]): `Ok(None)` when `uri` is not one of its instances, an
    /// error when it is but a variable holds what no resource may be asked for.
    ///
    /// A variable matches one or more characters up to the next literal part (the last one,
    /// to the end), never a `/`, `?` or `#`, which simple expansion would have encoded.
    pub fn matches(&self, uri: &str) -> Result<Option<BTreeMap<String, String>>, OfferError> {
        let mut variables = BTreeMap::new();
        let mut rest = uri;
        let mut parts = self.parts.iter().peekable();
        while let Some(part) = parts.next() {
            match part {
                Part::Literal(literal) => match rest.strip_prefix(literal.as_str()) {
                    Some(after) => rest = after,
                    None => return Ok(None),
                },
                Part::Variable(name) => {
                    let end = match parts.peek() {
                        Some(Part::Literal(next)) => match rest.find(next.as_str()) {
                            Some(end) => end,
                            None => return Ok(None),
                        },
                        _ => rest.len(),
                    };
                    let raw = &rest[..end];
                    if raw.is_empty() || raw.contains(['/', '?', '#']) {
                        return Ok(None);
                    }
                    let value = check_variable(name, raw)?;
                    variables.insert(name.clone(), value);
                    rest = &rest[end..];
                }
            }
        }
        Ok(rest.is_empty().then_some(variables))
    }
}

/// A template variable's value as the reader gets it: `raw` percent-decoded, refused when it
/// is not UTF-8, holds a `/` or `\` (once decoded), a NUL or another control character, or is
/// `.` or `..`: a variable names one thing, and never a way out of where its reader looks.
pub fn check_variable(name: &str, raw: &str) -> Result<String, OfferError> {
    let refuse = |reason: &str| OfferError::InvalidVariable {
        variable: name.to_owned(),
        reason: reason.to_owned(),
    };
    let mut bytes = Vec::with_capacity(raw.len());
    let mut input = raw.bytes();
    while let Some(byte) = input.next() {
        if byte == b'%' {
            let hex = [input.next(), input.next()];
            let [Some(high), Some(low)] = hex else {
                return Err(refuse("a `%` is not followed by two hex digits"));
            };
            let digit = |b: u8| (b as char).to_digit(16);
            let (Some(high), Some(low)) = (digit(high), digit(low)) else {
                return Err(refuse("a `%` is not followed by two hex digits"));
            };
            bytes.push((high * 16 + low) as u8);
        } else {
            bytes.push(byte);
        }
    }
    let value = String::from_utf8(bytes).map_err(|_| refuse("it is not UTF-8 once decoded"))?;
    if value.chars().any(char::is_control) {
        return Err(refuse(
            "it holds a control character (a NUL, a newline, ...)",
        ));
    }
    if value.contains(['/', '\\']) {
        return Err(refuse(
            "it holds a `/` or `\\`: a variable names one thing, not a path",
        ));
    }
    if value == "." || value == ".." {
        return Err(refuse("`.` and `..` name no resource"));
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn template(text: &str) -> UriTemplate {
        UriTemplate::parse(text).unwrap().unwrap()
    }

    #[test]
    fn a_template_matches_its_instances_and_nothing_else() {
        let t = template("test://template/{id}/data");
        assert_eq!(t.variables().collect::<Vec<_>>(), ["id"]);
        let vars = t.matches("test://template/123/data").unwrap().unwrap();
        assert_eq!(vars["id"], "123");
        assert_eq!(t.matches("test://template//data").unwrap(), None);
        assert_eq!(t.matches("test://template/1/2/data").unwrap(), None);
        assert_eq!(t.matches("test://template/1/data/more").unwrap(), None);
        assert_eq!(t.matches("other://template/1/data").unwrap(), None);
        let two = template("db://{table}/rows/{row}");
        let vars = two.matches("db://users/rows/a%20b").unwrap().unwrap();
        assert_eq!(
            (vars["table"].as_str(), vars["row"].as_str()),
            ("users", "a b")
        );
    }

    #[test]
    fn a_variable_never_holds_a_way_out() {
        let t = template("file:///notes/{name}");
        for hostile in [
            "..", "%2e%2e", "%2E%2E", "a%2fb", "a%5Cb", "a%00b", "%0a", "%zz", "%4", "%ff",
        ] {
            let error = t.matches(&format!("file:///notes/{hostile}")).unwrap_err();
            assert!(
                matches!(error, OfferError::InvalidVariable { .. }),
                "{hostile}: {error}"
            );
        }
        // A raw `/` is no instance at all.
        assert_eq!(t.matches("file:///notes/../etc").unwrap(), None);
        assert_eq!(
            t.matches("file:///notes/a.b").unwrap().unwrap()["name"],
            "a.b"
        );
    }

    #[test]
    fn templates_are_read_strictly() {
        assert_eq!(UriTemplate::parse("test://static").unwrap(), None);
        for bad in [
            "x://{a",
            "x://a}",
            "x://{}",
            "x://{a}{b}",
            "x://{+a}",
            "x://{a b}",
        ] {
            assert!(UriTemplate::parse(bad).is_err(), "{bad}");
        }
    }
}
