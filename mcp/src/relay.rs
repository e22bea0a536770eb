//! A mounted server's questions (SEP-2322's `input_required` on the 2026-07-28 revision) put to
//! the caller of its tool: an elicitation is the caller's [`Ctx::ask`], a sampling request its
//! [`Ctx::sample`], a roots request its [`Ctx::roots`], each under the server's key, so that a
//! person behind a gateway answers a question of a server the gateway mounted.

use rmcp::model::{InputRequest, InputRequests, InputResponses};
use serde_json::{Value, json};
use tool_registry_core::Ctx;
use tool_registry_core::call::{AskError, Form, FormAnswer, Role, Sampling};

/// The most rounds of questions one call is relayed through before it fails.
pub(super) const MAX_ROUNDS: usize = 16;

/// The caller's answers to a round of the server's questions, or why there are none.
pub(super) async fn answers(requests: InputRequests, ctx: &Ctx) -> Result<InputResponses, String> {
    let mut answers = InputResponses::new();
    for (key, request) in requests {
        let answer = match request {
            InputRequest::Elicitation(request) => ask(&key, &request.params, ctx).await?,
            InputRequest::CreateMessage(request) => sample(&key, &request.params, ctx).await?,
            InputRequest::ListRoots(_) => {
                let roots = ctx
                    .roots_named(Some(&key))
                    .await
                    .map_err(|error| refused(&key, error))?;
                json!({ "roots": roots })
            }
            _ => {
                return Err(format!(
                    "the mounted server asked `{key}` in a way this client does not answer"
                ));
            }
        };
        answers.insert(key, answer);
    }
    Ok(answers)
}

fn refused(key: &str, error: AskError) -> String {
    format!("the mounted server's question `{key}` got no answer: {error}")
}

/// An elicitation: a form asked of the caller; a URL-mode one is declined (the caller's link
/// cannot open a page for it).
async fn ask(key: &str, params: &impl serde::Serialize, ctx: &Ctx) -> Result<Value, String> {
    let params = serde_json::to_value(params).map_err(|error| error.to_string())?;
    let message = params["message"].as_str().unwrap_or_default();
    let Some(schema) = params.get("requestedSchema").cloned() else {
        return Ok(json!({ "action": "decline" }));
    };
    let form = Form::new(message, schema)
        .map_err(|error| refused(key, error))?
        .named(key);
    Ok(
        match ctx.ask(form).await.map_err(|error| refused(key, error))? {
            FormAnswer::Accepted(content) => json!({ "action": "accept", "content": content }),
            FormAnswer::Declined => json!({ "action": "decline" }),
            FormAnswer::Cancelled => json!({ "action": "cancel" }),
        },
    )
}

/// A sampling request's text messages asked of the caller's model.
async fn sample(key: &str, params: &impl serde::Serialize, ctx: &Ctx) -> Result<Value, String> {
    let params = serde_json::to_value(params).map_err(|error| error.to_string())?;
    let mut messages = params["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|message| {
            let role = match message["role"].as_str() {
                Some("assistant") => Role::Assistant,
                _ => Role::User,
            };
            (
                role,
                message["content"]["text"].as_str().unwrap_or_default(),
            )
        });
    let mut sampling = match messages.next() {
        Some((Role::User, text)) => Sampling::new(text),
        Some((role, text)) => Sampling::new("").message(role, text),
        None => {
            return Err(format!(
                "the mounted server's sampling request `{key}` has no message"
            ));
        }
    }
    .named(key);
    for (role, text) in messages {
        sampling = sampling.message(role, text);
    }
    if let Some(system) = params["systemPrompt"].as_str() {
        sampling = sampling.system(system);
    }
    if let Some(tokens) = params["maxTokens"].as_u64() {
        sampling = sampling.max_tokens(u32::try_from(tokens).unwrap_or(u32::MAX));
    }
    let sampled = ctx
        .sample(sampling)
        .await
        .map_err(|error| refused(key, error))?;
    let mut answer = json!({
        "role": "assistant",
        "content": sampled.content,
        "model": sampled.model,
    });
    if let Some(reason) = sampled.stop_reason {
        answer["stopReason"] = json!(reason);
    }
    Ok(answer)
}
