//! Result messages checked against the providers' own published request types: the real tools
//! (`chart.draw`, `chart.export`) and run-time tools (a plain value, audio, a block of every
//! kind) are called through a `Registry`, a failed call gives an error, and every provider's
//! [`Registry::result_message`]'s messages for each goes to `tests/provider_types/check.py`, which
//! validates them with pydantic against the types of the official `openai`, `anthropic` and
//! `google-genai` Python SDKs (versions in `tests/provider_types/requirements.txt`, installed
//! by `scripts/test` into `target/py-providers`). Nothing reaches the network.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::{Value, json};
use tool_registry::content::{Audio, Content, File, Image, Resource, ResourceLink};
use tool_registry::format::Provider;
use tool_registry::spec::ToolHandler;
use tool_registry::{Ctx, Registry, ToolCall, ToolResult, ToolSpec};
use tool_registry_tools as _;

#[path = "common/venv.rs"]
mod venv;

/// The virtualenv's Python: `$TOOLREG_PROVIDERS_PYTHON`, else
/// `target/py-providers/bin/python` at the workspace's root.
fn python() -> PathBuf {
    venv::python(&venv::Venv {
        var: "TOOLREG_PROVIDERS_PYTHON",
        dir: "py-providers",
        imports: "openai, anthropic, google.genai, pydantic",
        install: "-r tools/tests/provider_types/requirements.txt",
        what: "the providers' Python SDKs are",
    })
}

/// A WAV file of no samples: the 44 bytes of its header.
fn silent_wav() -> Vec<u8> {
    let mut wav = b"RIFF".to_vec();
    wav.extend(36u32.to_le_bytes());
    wav.extend(b"WAVEfmt ");
    wav.extend(16u32.to_le_bytes());
    wav.extend(1u16.to_le_bytes()); // PCM
    wav.extend(1u16.to_le_bytes()); // mono
    wav.extend(8000u32.to_le_bytes());
    wav.extend(16000u32.to_le_bytes());
    wav.extend(2u16.to_le_bytes());
    wav.extend(16u16.to_le_bytes());
    wav.extend(b"data");
    wav.extend(0u32.to_le_bytes());
    wav
}

/// The reference tools, and run-time tools answering with a plain value, with audio, and with
/// a block of every kind.
fn registry() -> Registry {
    let registry = Registry::builder().build().expect("the reference tools");
    let spec = |name: &str| {
        ToolSpec::builder(name)
            .version("1.0.0")
            .description("A tool of the provider types test.")
            .input_schema(json!({ "type": "object", "properties": {} }))
            .build()
            .unwrap()
    };
    let plain = ToolHandler::new(|_args: Value, _ctx: Ctx| async move {
        Ok::<_, String>(json!({ "city": "Oslo", "celsius": 4 }))
    });
    registry.register(spec("weather.now"), plain).unwrap();
    let audio = ToolHandler::new(|_args: Value, _ctx: Ctx| async move {
        Ok::<_, String>(Content::value(json!({ "seconds": 0 })).audio(Audio::wav(silent_wav())))
    });
    registry.register(spec("voice.say"), audio).unwrap();
    let every = ToolHandler::new(|_args: Value, _ctx: Ctx| async move {
        let link = ResourceLink::new("https://example.com/q3", "q3")
            .with_mime_type("application/pdf")
            .with_size(512);
        let content = Content::value(json!({ "quarter": 3 }))
            .text("Summary below.")
            .image(Image::png(b"\x89PNG\r\n\x1a\n".to_vec()))
            .image(Image::new("image/gif", b"GIF89a".to_vec()))
            .image(Image::new("image/svg+xml", b"<svg/>".to_vec()))
            .audio(Audio::mp3(b"ID3".to_vec()))
            .audio(Audio::new("audio/ogg", b"OggS".to_vec()))
            .file(File::new("q3.pdf", b"%PDF-1.7".to_vec()))
            .file(File::new("q3.json", b"{\"a\": 1}".to_vec()))
            .file(File::new("q3.zip", b"PK\x03\x04".to_vec()))
            .link(link)
            .resource(Resource::text("kb://notes", "a note"))
            .resource(Resource::blob(
                "kb://logo",
                "image/png",
                b"\x89PNG\r\n\x1a\n".to_vec(),
            ));
        Ok::<_, String>(content)
    });
    registry.register(spec("report.get"), every).unwrap();
    registry
}

/// `name` called with `arguments` as the model would, with an id, and its result for the model.
async fn run(registry: &Registry, name: &str, arguments: Value) -> (ToolCall, ToolResult) {
    let mut call = ToolCall::new(Provider::OpenAi.wire_name(name), arguments);
    call.id = Some("call_1".into());
    let result = registry
        .call(&call.name, call.arguments.clone(), &Ctx::new())
        .for_model()
        .await;
    (call, result)
}

#[tokio::test]
async fn result_messages_validate_against_the_providers_own_types() {
    let python = python();
    let registry = registry();
    let values = json!({ "values": [1, 2, 3] });
    let export = json!({ "name": "q3", "values": [1, 2] });
    let runs = [
        ("chart.draw", run(&registry, "chart.draw", values).await),
        ("chart.export", run(&registry, "chart.export", export).await),
        ("plain", run(&registry, "weather.now", json!({})).await),
        (
            "error",
            run(&registry, "chart.draw", json!({ "values": [-1] })).await,
        ),
        ("audio", run(&registry, "voice.say", json!({})).await),
        ("every kind", run(&registry, "report.get", json!({})).await),
    ];
    let providers = [
        Provider::OpenAi,
        Provider::Responses,
        Provider::Anthropic,
        Provider::Gemini,
    ];
    let mut cases = Vec::new();
    for (case, (call, result)) in &runs {
        assert_eq!(result.success, *case != "error", "{case}: {result:?}");
        assert_eq!(
            result.blocks.is_empty(),
            ["plain", "error"].contains(case),
            "{case}"
        );
        for provider in providers {
            let answer = registry.result_message(provider, call, result);
            let messages = answer.clone().into_messages();
            assert_eq!(
                messages[0], answer.message,
                "{provider}: the first message is the result message"
            );
            cases.push(json!({
                "case": case,
                "provider": provider.as_str(),
                "messages": messages,
                "result": result,
            }));
        }
    }

    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/provider_types/check.py");
    let mut child = Command::new(python)
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let input = serde_json::to_vec(&json!({ "cases": cases })).unwrap();
    child.stdin.take().unwrap().write_all(&input).unwrap();
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.starts_with("the checks refuse broken messages\n"),
        "the checker refuses what breaks the types before it passes anything\n{stdout}"
    );
    for (case, _) in &runs {
        for provider in providers {
            assert!(
                stdout.contains(&format!("ok {provider} {case}\n")),
                "{provider} {case}\n{stdout}"
            );
        }
    }
    assert!(stdout.ends_with("all checks passed\n"), "{stdout}");
}
