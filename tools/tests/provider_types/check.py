"""Validates result messages against the providers' own published request types.

Reads {"cases": [{"case": ..., "provider": ..., "messages": [...]}, ...]} on stdin, as
tools/tests/provider_types.rs writes it, and checks each message with pydantic against the type
of the provider's SDK that describes it. The SDKs' TypedDicts accept keys they do not declare, so
every key sent is also checked to be one the type declares; the Gemini types are pydantic models
that forbid unknown keys, and their re-dump must give back exactly what was sent. Prints
`ok <provider> <case>` per message list and `all checks passed` at the end. Never touches the
network.
"""

import base64
import collections.abc
import json
import sys
import types
import typing

import pydantic
from anthropic.types import ToolResultBlockParam
from google.genai.types import FunctionResponse, Part
from openai.types.chat import ChatCompletionToolMessageParam, ChatCompletionUserMessageParam
from openai.types.responses.response_input_param import FunctionCallOutput
from typing_extensions import is_typeddict

Required = getattr(typing, "Required", None)
NotRequired = getattr(typing, "NotRequired", None)


def bare(tp):
    """The type under Required[...], NotRequired[...] and Annotated[...]."""
    while True:
        origin = typing.get_origin(tp)
        if origin is typing.Annotated:
            tp = typing.get_args(tp)[0]
        elif origin is not None and getattr(origin, "__name__", "") in ("Required", "NotRequired"):
            tp = typing.get_args(tp)[0]
        else:
            return tp


def declared(tp, value, path):
    """Raises AssertionError unless every key of every object in `value` is declared by the
    TypedDict that `tp` (a TypedDict, a union, a list of them) says it is."""
    tp = bare(tp)
    origin = typing.get_origin(tp)
    if is_typeddict(tp):
        assert isinstance(value, dict), f"{path}: expected an object, got {value!r:.80}"
        hints = typing.get_type_hints(tp, include_extras=True)
        for key, item in value.items():
            assert key in hints, f"{path}: `{key}` is not a field of {tp.__name__} ({sorted(hints)})"
            declared(hints[key], item, f"{path}.{key}")
    elif origin in (typing.Union, types.UnionType):
        failures = []
        for member in typing.get_args(tp):
            try:
                pydantic.TypeAdapter(member).validate_python(value)
                declared(member, value, path)
                return
            except (AssertionError, pydantic.ValidationError) as error:
                failures.append(f"{member}: {error}"[:300])
        raise AssertionError(f"{path}: fits no member of the union:\n  " + "\n  ".join(failures))
    elif origin in (list, collections.abc.Iterable, collections.abc.Sequence):
        assert isinstance(value, list), f"{path}: expected a list, got {value!r:.80}"
        (item_type,) = typing.get_args(tp)
        for index, item in enumerate(value):
            declared(item_type, item, f"{path}[{index}]")


def typed_dict(tp, value, path):
    """`value` validates as the TypedDict `tp` and sends only keys it declares."""
    pydantic.TypeAdapter(tp).validate_python(value, strict=False)
    declared(tp, value, path)


def same_as_sent(sent, dumped, path):
    """The pydantic re-dump (python mode: bytes stay bytes) holds exactly what was sent, base64
    fields decoding to the dumped bytes."""
    if isinstance(dumped, bytes):
        assert isinstance(sent, str), f"{path}: bytes sent as {sent!r:.80}"
        assert base64.b64decode(sent, validate=True) == dumped, f"{path}: base64 differs"
    elif isinstance(dumped, dict):
        assert isinstance(sent, dict) and set(sent) == set(dumped), (
            f"{path}: sent keys {sorted(sent)}, the type kept {sorted(dumped)}"
        )
        for key in sent:
            same_as_sent(sent[key], dumped[key], f"{path}.{key}")
    elif isinstance(dumped, list):
        assert isinstance(sent, list) and len(sent) == len(dumped), f"{path}: list length"
        for index, (a, b) in enumerate(zip(sent, dumped)):
            same_as_sent(a, b, f"{path}[{index}]")
    else:
        assert sent == dumped, f"{path}: sent {sent!r:.80}, the type kept {dumped!r:.80}"


def gemini_model(model, value, path):
    """`value` validates as the pydantic model `model` (JSON mode: base64 bytes, camelCase
    names) and its re-dump, with the API's names, is what was sent."""
    parsed = model.model_validate_json(json.dumps(value))
    dumped = parsed.model_dump(mode="python", by_alias=True, exclude_none=True)
    same_as_sent(value, dumped, path)
    return parsed


def check_openai(case, messages):
    assert 1 <= len(messages) <= 2, f"one tool message, and a user message with media: {messages}"
    tool = messages[0]
    typed_dict(ChatCompletionToolMessageParam, tool, "tool")
    assert tool["role"] == "tool"
    if len(messages) == 2:
        user = messages[1]
        typed_dict(ChatCompletionUserMessageParam, user, "user")
        assert user["role"] == "user"
        assert isinstance(user["content"], list) and len(user["content"]) >= 2
        # Every media part of the user message is announced in the tool message.
        announced = [p["text"] for p in tool["content"] if p["text"].endswith("after this result]")]
        assert len(announced) == len(user["content"]) - 1, (announced, user["content"])
    return [part for message in messages for part in as_list(message["content"])]


def check_responses(case, messages):
    (item,) = messages
    typed_dict(FunctionCallOutput, item, "function_call_output")
    return as_list(item["output"])


def check_anthropic(case, messages):
    (block,) = messages
    typed_dict(ToolResultBlockParam, block, "tool_result")
    return as_list(block["content"])


def check_gemini(case, messages):
    (part,) = messages
    parsed = gemini_model(Part, part, "part")
    assert parsed.function_response is not None, "a functionResponse part"
    gemini_model(FunctionResponse, part["functionResponse"], "functionResponse")
    response = part["functionResponse"]["response"]
    assert set(response) in ({"output"}, {"error"}), f"response keeps output or error: {response}"
    return part["functionResponse"].get("parts", [])


def as_list(content):
    return content if isinstance(content, list) else [content]


def texts(parts):
    """Every text the model reads in `parts`, whatever the provider's shape."""
    out = []
    for part in parts:
        if isinstance(part, str):
            out.append(part)
        elif "text" in part:
            out.append(part["text"])
        elif part.get("type") == "document" and part["source"]["type"] == "text":
            out.append(part["source"]["data"])
        elif "inlineData" in part and part["inlineData"]["mimeType"] == "text/plain":
            out.append(base64.b64decode(part["inlineData"]["data"]).decode())
    return out


def media(parts):
    """The bytes of every image, clip or file in `parts`, with their MIME types."""
    out = []
    for part in parts:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "image_url":
            out.append(data_url(part["image_url"]["url"]))
        elif part.get("type") == "input_image":
            out.append(data_url(part["image_url"]))
        elif part.get("type") == "input_file":
            out.append(data_url(part["file_data"]))
        elif part.get("type") == "file":
            out.append(data_url(part["file"]["file_data"]))
        elif part.get("type") == "input_audio":
            audio = part["input_audio"]
            out.append((f"audio/{audio['format']}", base64.b64decode(audio["data"])))
        elif part.get("type") in ("image", "document") and part["source"]["type"] == "base64":
            out.append((part["source"]["media_type"], base64.b64decode(part["source"]["data"])))
        elif "inlineData" in part and part["inlineData"]["mimeType"] != "text/plain":
            blob = part["inlineData"]
            out.append((blob["mimeType"], base64.b64decode(blob["data"])))
    return out


def data_url(url):
    head, data = url.split(",", 1)
    assert head.startswith("data:") and head.endswith(";base64"), f"a base64 data URL: {head}"
    return head[len("data:") : -len(";base64")], base64.b64decode(data, validate=True)


CHECKS = {
    "openai": check_openai,
    "responses": check_responses,
    "anthropic": check_anthropic,
    "gemini": check_gemini,
}

# What each provider can carry of a WAV clip: only Chat Completions' user message takes audio.
CARRIES_AUDIO = {"openai"}


def check_case(case, provider, messages, result):
    parts = CHECKS[provider](case, messages)
    said = "\n".join(texts(parts))
    found = media(parts)
    if case == "chart.draw":
        pngs = [data for mime, data in found if mime == "image/png"]
        assert len(pngs) == 1 and pngs[0].startswith(b"\x89PNG\r\n\x1a\n"), found
        if provider != "gemini":
            assert '"bars":3' in said, said
    elif case == "chart.export":
        assert "index,value\n0,1\n1,2\n" in said or any(
            data.startswith(b"index,value") for _, data in found
        ), (said, found)
        assert "chart://q3.png" in said and "carry no resource links" in said, said
    elif case == "plain":
        assert not found
    elif case == "error":
        if provider == "anthropic":
            assert messages[0]["is_error"] is True
        if provider == "gemini":
            assert "error" in messages[0]["functionResponse"]["response"]
        else:
            assert "invalid_arguments" in said, said
    elif case == "audio":
        clips = [data for mime, data in found if mime.startswith("audio/")]
        if provider in CARRIES_AUDIO:
            assert len(clips) == 1 and clips[0].startswith(b"RIFF"), found
        else:
            assert not clips and "audio/wav, 44 bytes:" in said and "no audio" in said, said
    elif case == "every kind":
        assert result["blocks"], "the case has blocks"
    else:
        raise AssertionError(f"unknown case {case}")


def refuses(check, case, messages):
    """Whether `check` refuses `messages`: the checker is not satisfied by anything."""
    try:
        check(case, messages)
    except (AssertionError, pydantic.ValidationError):
        return True
    return False


def self_test():
    """Messages that break each provider's types, one fault each, which the checks must refuse."""
    png = "data:image/png;base64,iVBORw0KGgo="
    blob = {"mimeType": "image/png", "data": "iVBORw0KGgo="}
    gemini = lambda blob: [{"functionResponse": {"name": "f", "response": {}, "parts": [
        {"inlineData": blob}]}}]
    anthropic = lambda block: [{"type": "tool_result", "tool_use_id": "c", "content": [block]}]
    wrong = [
        ("openai", "an image in a tool message", [{"role": "tool", "tool_call_id": "c", "content": [
            {"type": "image_url", "image_url": {"url": png}}]}]),
        ("responses", "a key input_file does not declare", [{
            "type": "function_call_output", "call_id": "c",
            "output": [{"type": "input_image", "image_url": png, "name": "a.png"}]}]),
        ("anthropic", "an image of an audio type", anthropic(
            {"type": "image", "source": {"type": "base64", "media_type": "audio/wav", "data": "AA=="}})),
        ("anthropic", "a key a text block does not declare", anthropic(
            {"type": "text", "text": "x", "name": "a"})),
        ("gemini", "a key inline data does not declare", gemini({**blob, "name": "a.png"})),
        ("gemini", "data that is not base64", gemini({**blob, "data": "not base64!"})),
    ]
    for provider, fault, messages in wrong:
        assert refuses(CHECKS[provider], "self-test", messages), f"{provider} took {fault}"
    print("the checks refuse broken messages")


def main():
    self_test()
    data = json.load(sys.stdin)
    failed = 0
    for entry in data["cases"]:
        case, provider = entry["case"], entry["provider"]
        try:
            check_case(case, provider, entry["messages"], entry["result"])
            print(f"ok {provider} {case}")
        except Exception as error:  # every failure is reported, then the run fails
            failed += 1
            print(f"FAILED {provider} {case}: {type(error).__name__}: {error}")
    if failed:
        sys.exit(f"{failed} checks failed")
    print("all checks passed")


if __name__ == "__main__":
    main()
