//! The rules a tool meets twice: when `#[tool]` expands (`tool-registry-macros`, a compile
//! error on the attribute) and when a run-time `ToolSpec` is built (`tool-registry-core`, a
//! `SpecError`). One definition, so that a name the macro accepts is one the registry accepts,
//! and the reverse. A support crate of the workspace, no stable API of its own.

#![warn(missing_docs)]

/// The longest tool name, in bytes.
pub const MAX_NAME_LEN: usize = 64;

/// Whether `name` may name a tool: 1 to [`MAX_NAME_LEN`] bytes of ASCII letters, digits, `_`
/// and `-`, in parts joined by single `.`s (`module.tool`). The error says what is wrong, in
/// words that follow "the name `…` is not valid: ".
///
/// ```
/// use tool_registry_rules::check_name;
/// assert!(check_name("kb.search-notes_2").is_ok());
/// assert_eq!(check_name("").unwrap_err(), "it is empty");
/// assert!(check_name("kb..search").unwrap_err().contains("non-empty parts"));
/// assert!(check_name("kb search").unwrap_err().starts_with("` ` is not allowed"));
/// assert!(check_name(&"x".repeat(65)).unwrap_err().contains("the limit is 64"));
/// ```
pub fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("it is empty".into());
    }
    if name.len() > MAX_NAME_LEN {
        return Err(format!(
            "it has {} characters; the limit is {MAX_NAME_LEN}",
            name.len()
        ));
    }
    for segment in name.split('.') {
        if segment.is_empty() {
            return Err("a `.` must separate two non-empty parts, as in `module.tool`".into());
        }
        if let Some(bad) = segment
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
        {
            return Err(format!(
                "`{}` is not allowed; use letters, digits, `_` and `-`, with `.` between module and tool",
                bad.escape_debug()
            ));
        }
    }
    Ok(())
}
