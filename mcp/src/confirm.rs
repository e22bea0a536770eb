//! Confirmation over MCP: the 2026-07-28 multi-round-trip request (`input_required`) for a
//! client that can ask its user, the approval token in `_meta` for one that cannot.
//!
//! A call of a tool that needs a person's approval waits in the registry's approval store
//! under a token bound to its tool, its user and its exact arguments
//! ([`Call::approved`](tool_registry_core::registry::Call::approved)). The server asks the client's
//! user to confirm that call with one form input request, `confirm`, and hands the token back
//! as the opaque `requestState`. The retried request carries the answer; an accepted answer
//! runs the call through [`Call::approved`](tool_registry_core::registry::Call::approved), which checks the
//! token against the retried request's tool, caller and arguments and uses it up, so an
//! answer runs once and cannot be moved to another call. `requestState` is a lookup key, never
//! trusted: what runs is what the registry signed when it kept the call.

use rmcp::ErrorData;
use rmcp::model::{
    ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema,
    InputRequest, InputRequests, InputRequiredResult, InputResponses,
};
use serde_json::{Value, json};

use super::request::Request;

/// The `_meta` key of a `tools/call` that redeems the approval token of an earlier answer, for
/// a client that cannot answer `input_required` (the `initialize` era, or no elicitation).
pub const APPROVAL_TOKEN_META: &str = "tool-registry/approvalToken";

/// The name of the input request that asks the user to confirm a call.
pub const CONFIRM_INPUT: &str = "confirm";

/// How `requestState` marks an approval token.
const STATE_PREFIX: &str = "approval.";

/// The longest arguments (as compact JSON) a question shows. A call whose arguments are longer
/// is not asked about at all, since the person must see all of what a "yes" runs: it answers
/// the approval token instead, for a person to approve where the whole call can be read.
pub const MAX_QUESTION_BYTES: usize = 16 * 1024;

/// What the retried request (or the `_meta` of a plain one) says about a waiting call.
pub(super) enum Answer {
    /// No answer: a first call.
    None,
    /// Run the call that waits under this token.
    Approve(String),
    /// The user refused: the call under this token is dropped.
    Decline(String),
    /// The user closed the question without choosing: nothing runs, the token stays.
    Cancel,
}

/// Reads the answer a request carries.
pub(super) fn answer_of(
    request_state: Option<&str>,
    responses: Option<&InputResponses>,
    request: &Request,
) -> Result<Answer, ErrorData> {
    let Some(state) = request_state else {
        return Ok(match request.meta.get(APPROVAL_TOKEN_META) {
            Some(Value::String(token)) => Answer::Approve(token.clone()),
            Some(_) => {
                return Err(ErrorData::invalid_params(
                    format!("`_meta.{APPROVAL_TOKEN_META}` must be the token as a string"),
                    None,
                ));
            }
            None => Answer::None,
        });
    };
    let token = state
        .strip_prefix(STATE_PREFIX)
        .filter(|token| !token.is_empty() && token.len() <= 256)
        .ok_or_else(|| {
            ErrorData::invalid_params(
                "`requestState` is not one this server gave; call the tool again without it",
                None,
            )
        })?
        .to_owned();
    // A retry without an answer is a first call: it waits under a token of its own.
    let Some(response) = responses.and_then(|responses| responses.get(CONFIRM_INPUT)) else {
        return Ok(Answer::None);
    };
    Ok(match approval_of(response)? {
        Some(true) => Answer::Approve(token),
        Some(false) => Answer::Decline(token),
        None => Answer::Cancel,
    })
}

/// A person's answer to the [`CONFIRM_INPUT`] question, an elicitation result: `Some(true)`
/// runs the call, `Some(false)` drops it (declined, or accepted with `approve: false`), `None`
/// closed the question without choosing.
pub(super) fn approval_of(response: &Value) -> Result<Option<bool>, ErrorData> {
    let response: ElicitResult = serde_json::from_value(response.clone()).map_err(|error| {
        ErrorData::invalid_params(
            format!("the answer to `{CONFIRM_INPUT}` is not an elicitation result: {error}"),
            None,
        )
    })?;
    let approved = response
        .content
        .as_ref()
        .and_then(|content| content.get("approve"))
        .and_then(Value::as_bool);
    Ok(match (response.action, approved) {
        (ElicitationAction::Accept, Some(approve)) => Some(approve),
        (ElicitationAction::Decline, _) => Some(false),
        (ElicitationAction::Accept, None) => {
            return Err(ErrorData::invalid_params(
                "an accepted `confirm` answer needs `content.approve`, true or false",
                None,
            ));
        }
        // Cancel, and any action a later revision adds: nothing runs.
        _ => None,
    })
}

/// The approval token of a result that waits for a person, if it is one.
pub(super) use tool_registry_core::task::approval_token as waiting_token;

/// Whether the client can answer an `input_required` result with a form: a 2026-07-28 request
/// from a client that declared form elicitation (an empty `elicitation` object means forms).
pub(super) fn can_ask(request: &Request) -> bool {
    let forms = (request.capabilities())
        .and_then(|capabilities| capabilities.elicitation)
        .is_some_and(|elicitation| elicitation.form.is_some() || elicitation.url.is_none());
    request.modern() && forms
}

/// The question for the user: run `tool` with `arguments`, yes or no; the token rides along as
/// `requestState`. `None` when the arguments are too long to show in full
/// ([`MAX_QUESTION_BYTES`]): the user is never asked about a part of a call.
pub(super) fn ask(
    tool: &str,
    arguments: &Value,
    token: &str,
) -> Result<Option<InputRequiredResult>, ErrorData> {
    let Some(requests) = question(tool, arguments)? else {
        return Ok(None);
    };
    Ok(Some(InputRequiredResult::new(
        Some(requests),
        Some(format!("{STATE_PREFIX}{token}")),
    )))
}

/// The question about running `tool` with `arguments`, under the key [`CONFIRM_INPUT`]: for
/// an `input_required` result, or a task's `inputRequests`. `None` when the arguments are too
/// long to show in full.
pub(super) fn question(tool: &str, arguments: &Value) -> Result<Option<InputRequests>, ErrorData> {
    let shown = shown(arguments);
    if shown.len() > MAX_QUESTION_BYTES {
        tracing::info!(
            tool,
            bytes = shown.len(),
            "a call awaiting approval is too long to ask about in full; its token is answered instead"
        );
        return Ok(None);
    }
    let schema = json!({
        "type": "object",
        "properties": {
            "approve": {
                "type": "boolean",
                "title": "Run this call",
                "description": "Yes runs the call once, exactly as shown; no drops it.",
            }
        },
        "required": ["approve"],
    });
    let requested_schema: ElicitationSchema = serde_json::from_value(schema)
        .map_err(|error| ErrorData::internal_error(error.to_string(), None))?;
    let question = ElicitRequest::new(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: format!("Allow the tool `{tool}` to run with these arguments?\n{shown}"),
        requested_schema,
    });
    Ok(Some(InputRequests::from([(
        CONFIRM_INPUT.to_owned(),
        InputRequest::Elicitation(question),
    )])))
}

/// The arguments exactly as they run: compact JSON, with every character that shows nothing
/// (zero-width, direction marks and overrides, tags, variation selectors, soft hyphens)
/// written as its `\u` escape, which JSON reads back as the same character.
fn shown(arguments: &Value) -> String {
    let text = arguments.to_string();
    if !text.chars().any(invisible) {
        return text;
    }
    let mut shown = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if invisible(c) {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                shown.push_str(&format!("\\u{unit:04x}"));
            }
        } else {
            shown.push(c);
        }
    }
    shown
}

/// Whether `c` is a character that a person reading the question would not see.
fn invisible(c: char) -> bool {
    matches!(
        c,
        '\u{00ad}'
            | '\u{034f}'
            | '\u{061c}'
            | '\u{115f}'
            | '\u{1160}'
            | '\u{17b4}'
            | '\u{17b5}'
            | '\u{180b}'..='\u{180f}'
            | '\u{200b}'..='\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2060}'..='\u{206f}'
            | '\u{3164}'
            | '\u{fe00}'..='\u{fe0f}'
            | '\u{feff}'
            | '\u{ffa0}'
            | '\u{fff9}'..='\u{fffb}'
            | '\u{1d173}'..='\u{1d17a}'
            | '\u{e0000}'..='\u{e0fff}'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(question: &InputRequiredResult) -> String {
        let requests = serde_json::to_value(&question.input_requests).unwrap();
        requests[CONFIRM_INPUT]["params"]["message"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    #[test]
    fn the_question_shows_the_whole_call_or_is_not_asked() {
        let path = format!("{}important.md", "./".repeat(1_100));
        let arguments = json!({ "path": path });
        let question = ask("file_manager.delete_file", &arguments, "t")
            .unwrap()
            .unwrap();
        let message = message(&question);
        assert!(message.ends_with(&arguments.to_string()), "{message}");
        assert!(message.contains("important.md"));

        let just_fits = json!({ "path": "a".repeat(MAX_QUESTION_BYTES - 11) });
        assert_eq!(just_fits.to_string().len(), MAX_QUESTION_BYTES);
        assert!(ask("t", &just_fits, "t").unwrap().is_some());
        let too_long = json!({ "path": "a".repeat(MAX_QUESTION_BYTES - 10) });
        assert!(ask("t", &too_long, "t").unwrap().is_none());
    }

    #[test]
    fn characters_that_show_nothing_are_shown_as_escapes_that_read_back_the_same() {
        let arguments = json!({ "path": "notes\u{202e}dm.txt\u{200b}", "ok": "é ü 漢" });
        let question = ask("t", &arguments, "t").unwrap().unwrap();
        let message = message(&question);
        let json = message.lines().last().unwrap();
        assert!(
            json.contains("\\u202e") && json.contains("\\u200b"),
            "{json}"
        );
        assert!(
            !json.contains('\u{202e}') && json.contains("é ü 漢"),
            "{json}"
        );
        assert_eq!(serde_json::from_str::<Value>(json).unwrap(), arguments);
    }
}
