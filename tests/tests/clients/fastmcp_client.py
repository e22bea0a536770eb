"""The example server (`tests/src/bin/conformance.rs`) driven by FastMCP's client on the
2026-07-28 revision: resources listed and read, a template's resource read, a prompt got with
arguments, an argument completed, and a tool's two questions answered by its elicitation
handler.

Usage: fastmcp_client.py URL. Prints one line per check, then "all checks passed".
"""

import asyncio
import base64
import sys

import mcp_types as types
from fastmcp import Client

URL = sys.argv[1]


def check(condition, what, detail=""):
    if not condition:
        raise SystemExit(f"FAILED: {what}: {detail}")


async def main():
    async def answer(message, response_type, params, context):
        fields = params.requested_schema["properties"]
        if "city" in fields:
            return {"city": "Porto"}
        return {"travellers": 2, "view": False}

    async with Client(URL, elicitation_handler=answer) as client:
        version = client.session.protocol_version if hasattr(client.session, "protocol_version") else None
        version = version or getattr(client, "protocol_version", None)
        check(str(version) == "2026-07-28", "FastMCP's client speaks 2026-07-28", version)

        resources = await client.list_resources()
        uris = [str(resource.uri) for resource in resources]
        check("test://static-text" in uris and uris == sorted(uris), "resources/list", uris)
        text = await client.read_resource("test://static-text")
        check(text[0].text == "This is the content of the static text resource.", "a text resource", text)
        binary = await client.read_resource("test://static-binary")
        check(base64.b64decode(binary[0].blob)[:4] == b"\x89PNG", "a binary resource", binary)
        templates = await client.list_resource_templates()
        check([t.uri_template for t in templates] == ["test://template/{id}/data"], "templates", templates)
        data = await client.read_resource("test://template/9/data")
        check('"id":"9"' in data[0].text, "a template's resource", data)
        print("2026-07-28: resources listed and read, a template's resource read")

        got = await client.get_prompt("test_prompt_with_arguments", {"arg1": "x", "arg2": "y"})
        check(got.messages[0].content.text == "Prompt with arguments: arg1='x', arg2='y'", "a prompt with arguments", got)
        completed = await client.complete(
            types.PromptReference(type="ref/prompt", name="test_prompt_with_arguments"),
            {"name": "arg2", "value": "testValue2"},
        )
        check(completed.values == ["testValue2"], "an argument completed", completed)
        print("2026-07-28: a prompt got with arguments, an argument completed")

        done = await client.call_tool("plan_trip", {})
        check(done.content[0].text == "A trip to Porto for 2 travellers, without a view.", "two questions answered", done)
        print("2026-07-28: a tool's two questions answered")
    print("all checks passed")


asyncio.run(main())
