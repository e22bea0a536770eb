#!/usr/bin/env python3
"""Seeds fuzz/corpus/<target>/ for every target: the model outputs of parse/tests/cases/*.txt
for the parser's targets, and a few well-formed and hostile inputs of each other surface.
A seed's file name is its SHA-1, so seeding twice adds nothing. `scripts/fuzz` runs this for a
target whose corpus is empty; the corpus libFuzzer grows from the seeds is kept in git."""
import hashlib
import json
import pathlib

root = pathlib.Path(__file__).resolve().parent


def case_inputs():
    cases = root.parent / "parse" / "tests" / "cases"
    inputs = []
    for path in sorted(cases.glob("*.txt")):
        for block in path.read_text().split("\n=== ")[1:]:
            lines, body, on = block.split("\n")[1:], [], False
            for line in lines:
                if line.startswith("--- "):
                    on = line == "--- input"
                    continue
                if on:
                    body.append(line)
            inputs.append("\n".join(body).encode())
    return inputs


def j(value):
    return json.dumps(value, separators=(",", ":")).encode()


def deep(depth):
    return b"[" * depth + b"]" * depth


SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "description": "A city", "maxLength": 40},
        "days": {"type": ["integer", "null"], "minimum": 1, "maximum": 7},
        "units": {"enum": ["metric", "imperial"]},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 4},
        "where": {"$ref": "#/$defs/place"},
    },
    "required": ["city"],
    "$defs": {"place": {"type": "object", "properties": {"lat": {"type": "number"}, "next": {"$ref": "#/$defs/place"}}}},
}

SPEC = {
    "tool_name": "weather.get",
    "version": "1.2.0",
    "description": "The weather of a city.",
    "input_schema": SCHEMA,
    "output_schema": {"type": "object", "properties": {"temp": {"type": "number"}}},
    "tags": ["weather"],
    "permission": "user",
}

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8/5+hHgAHggJ/PchI7wAAAABJRU5ErkJggg=="

BLOCKS = [
    {"type": "text", "text": "hello"},
    {"type": "image", "mimeType": "image/png", "data": PNG},
    {"type": "audio", "mimeType": "audio/wav", "data": "UklGRiQAAABXQVZFZm10IA=="},
    {"type": "file", "name": "a.pdf", "mimeType": "application/pdf", "data": "JVBERi0xLjcK"},
    {"type": "resource_link", "uri": "https://example.com/a", "name": "a", "title": "A", "size": 3},
    {"type": "resource_link", "uri": "jar:file:///etc/passwd!/", "name": "x"},
    {"type": "resource", "resource": {"uri": "mem://a", "mimeType": "text/plain; charset=utf-8", "text": "x"}},
    {"type": "resource", "resource": {"uri": "mem://b", "blob": "AAEC"}},
    {"type": "image", "mimeType": "image/png; a=\r\nX: 1", "data": PNG},
    {"type": "image", "mimeType": "image/jpeg", "data": PNG},
]

RESULTS = [
    {"success": True, "content": {"temp": 21}, "blocks": BLOCKS[:8]},
    {"success": True, "content": "ok", "blocks": [BLOCKS[0]] * 20},
    {"success": False, "content": None, "message": "failed", "blocks": BLOCKS[8:]},
    {"success": True, "content": None, "blocks": [], "side_effects": ["wrote a.txt"]},
]


def seeds():
    cases = case_inputs()
    out = {
        "tags": cases,
        "text": [b"\x00" + c for c in cases],
        "stream": [b"\x00\x03" + c for c in cases],
    }

    arguments = [
        b"",
        b"null",
        b"{}",
        j({"city": "Oslo", "days": 3, "metric": True}),
        j({"query": "rust"}),
        j({"title": "Sync", "attendees": ["a", "b"], "extra": {"x": 1.5}}),
        j({"count": 3, "word": "hi", "tags": ["a"]}),
        j({"count": 9, "word": "far too long a word"}),
        j({"value": {"a": [1, 2, {"b": None}]}}),
        j({"n": 4, "items": ["a", "bb"], "any": {"x": [1]}}),
        j({"n": 11, "extra": 1}),
        b'{"city": "a", "city": "b"}',
        b'{"value": ' + deep(200) + b"}",
        b'{"value": 1e400}',
        b'{"city": "\\ud800"}',
        b"[1, 2]",
        b'"text"',
    ]
    out["call"] = [bytes([pick]) + a for pick in range(8) for a in arguments]

    definitions = [
        SPEC,
        {"tool_name": "plain", "input_schema": {"type": "object"}},
        {"tool_name": "bad name!", "input_schema": {"type": "object"}},
        {"tool_name": "x", "input_schema": {"type": "object"}, "unknown": 1},
        {"type": "function", "function": {"name": "get_weather", "description": "Weather.", "parameters": SCHEMA, "strict": True}},
        {"type": "function", "name": "get_weather", "description": "Weather.", "parameters": SCHEMA, "strict": False},
        {"name": "get_weather", "description": "Weather.", "input_schema": SCHEMA, "cache_control": {"type": "ephemeral"}, "defer_loading": True},
        {"name": "get_weather", "description": "Weather.", "parameters": {"type": "OBJECT", "properties": {"city": {"type": "STRING", "nullable": True}}}},
        {"functionDeclarations": [{"name": "a", "parametersJsonSchema": SCHEMA}]},
        {"name": "notes.delete", "title": "Delete", "inputSchema": SCHEMA, "outputSchema": {"type": "object"},
         "annotations": {"destructiveHint": True, "title": "D"}, "execution": {"taskSupport": "optional"}, "_meta": {"v/x": 1}},
    ]
    out["spec"] = [j(d) for d in definitions]

    handshake = (
        b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
        b'"capabilities":{},"clientInfo":{"name":"c","version":"1"}}}\n'
        b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
    )
    requests = [
        b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
        b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_weather","arguments":{"city":"Oslo"}}}',
        b'{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"bounded","arguments":{"count":9}}}',
        b'{"jsonrpc":"2.0","id":3,"method":"ping"}',
        b'{"jsonrpc":"2.0","id":4,"method":"resources/list"}',
        b'{"jsonrpc":"2.0","id":5,"method":"prompts/list"}',
        b'{"jsonrpc":"2.0","id":6,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":"b"}}}',
        b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"keep","arguments":{"value":' + deep(150) + b"}}}",
        b'[{"jsonrpc":"2.0","id":8,"method":"ping"}]',
        b"not json",
        b'{"jsonrpc":"2.0","id":9,"method":"nope"}',
        b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}',
    ]
    out["mcp"] = [b"\x01" + b"\n".join(requests) + b"\n", b"\x00" + handshake + requests[0] + b"\n"]
    out["mcp"] += [b"\x01" + r + b"\n" for r in requests]

    bodies = [
        j({"tool_name": "get_weather", "arguments": {"city": "Oslo"}}),
        j({"tool_name": "bounded", "arguments": {"count": 2, "word": "w"}, "user_id": "u", "level": "admin", "call_id": "c1"}),
        j({"tool_name": "keep", "arguments": {"value": [1]}, "task": True}),
        j({"tool_name": "nope", "arguments": {}}),
        j({"tool_name": "get_weather", "arguments": "not an object"}),
        j({"task_id": "t-1"}),
        b"{",
        b"",
    ]
    out["module"] = [bytes([pick]) + b for pick in range(3) for b in bodies]

    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
    posts = [
        j({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "get_weather", "arguments": {"city": "Oslo"}, "_meta": meta}}),
        j({"jsonrpc": "2.0", "id": "a", "method": "tools/call", "params": {"name": "get_weather", "arguments": {"city": "Oslo"}}}),
        j({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "bounded", "arguments": {"count": 9}, "_meta": meta}}),
        j({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "keep", "arguments": {"value": [1, {"a": None}]}, "_meta": dict(meta, progressToken=1)}}),
        b'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"search","arguments":{"query":"a","query":"b"},"_meta":' + j(meta) + b"}}",
        j({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "search", "arguments": [1], "_meta": meta}}),
        j({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "nope", "_meta": meta}}),
        j({"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {"_meta": meta}}),
        j({"jsonrpc": "2.0", "id": 8, "method": "tools/list", "params": {"cursor": "p1", "_meta": meta}}),
        j({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "search", "arguments": {"query": "q"}, "task": {"ttl": 1}}}),
        j({"jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": {"name": "keep", "arguments": {"value": 1}, "_meta": {"io.modelcontextprotocol/protocolVersion": "2025-11-25"}}}),
        j({"jsonrpc": "2.0", "id": 11, "result": {}}),
        j({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}),
        b'{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"keep","arguments":{"value":' + deep(150) + b"}}}",
        b"{",
        b"",
    ]
    out["mcp_http"] = [bytes([pick]) + b for pick in range(3) for b in posts]

    manifest = j({"name": "m", "version": "1.0.0", "tools": [SPEC, {"tool_name": "plain", "input_schema": {"type": "object"}}]})
    answers = [j(r) for r in RESULTS] + [
        j({"error": {"code": "invalid_arguments", "message": "bad", "tool": "plain", "path": "city"}}),
        j({"task": {"id": "t1", "status": "completed", "result": RESULTS[0], "poll_interval_ms": 0}}),
        j({"task": {"id": "t1", "status": "working", "poll_interval_ms": 0}}),
        b"not json",
    ]
    out["gateway"] = [bytes([pick]) + manifest + b"\xff" + a for pick in range(6) for a in answers]
    out["gateway"] += [b"\x00" + j({"name": "m", "tools": [{"tool_name": "x"}, 3, None]}) + b"\xff{}"]

    out["blocks"] = [bytes([first]) + j(r) for first in (0x00, 0x3F, 0xF4) for r in RESULTS]
    out["blocks"] += [b"\x02" + b'{"bl\\u006fcks":[1,2,3]}', b"\x01" + b'{"blocks":[' + b"{}," * 30 + b"{}]}"]

    texts = [
        j(SCHEMA),
        j(SPEC),
        b'{"a":1,"a":2}',
        deep(130),
        b'{"$ref":"#"}',
        j({"$defs": {f"d{i}": {"anyOf": [{"$ref": f"#/$defs/d{i + 1}"}] * 4} for i in range(12)}, "$ref": "#/$defs/d0"}),
        b'"\\u0000"',
        b"1e999",
        b"[1,[2,[3,{\"x\":[4]}]]]",
    ]
    out["json"] = [bytes([first]) + t for first in (0x00, 0x09, 0xFF) for t in texts]
    return out


def main():
    import sys

    wanted = sys.argv[1:]
    for target, inputs in seeds().items():
        if wanted and target not in wanted:
            continue
        folder = root / "corpus" / target
        folder.mkdir(parents=True, exist_ok=True)
        for data in inputs:
            (folder / hashlib.sha1(data).hexdigest()).write_bytes(data)
        print(f"{target}: {len(inputs)} seeds")


if __name__ == "__main__":
    main()
