"""The example server (`tests/src/bin/conformance.rs`) driven by the official MCP Python SDK 2.3:
in its default mode (the 2026-07-28 revision, questions as `input_required` results) and in the
`initialize` era (questions as server requests), a tool that asks twice gets both typed answers
through one elicitation callback; resources, templates, prompts and completion on both.

Usage: python_sdk.py URL. Prints one line per check, then "all checks passed".
"""

import base64
import sys

import anyio
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

URL = sys.argv[1]
PNG_START = b"\x89PNG\r\n\x1a\n"


def check(condition, what, detail=""):
    if not condition:
        raise SystemExit(f"FAILED: {what}: {detail}")


async def run(mode):
    asked = []

    async def answer(context, params):
        asked.append(params.message)
        fields = params.requested_schema["properties"]
        if "city" in fields:
            return types.ElicitResult(action="accept", content={"city": "Lisbon"})
        return types.ElicitResult(action="accept", content={"travellers": 3, "view": True})

    async with httpx2.AsyncClient(timeout=30) as http:
        transport = streamable_http_client(URL, http_client=http)
        kwargs = {} if mode == "default" else {"mode": "legacy"}
        async with Client(transport, elicitation_callback=answer, **kwargs) as client:
            version = client.protocol_version
            if mode == "default":
                check(version == "2026-07-28", "the default mode speaks 2026-07-28", version)
            else:
                check(version == "2025-11-25", "legacy speaks 2025-11-25", version)

            done = await client.call_tool("plan_trip", {})
            text = done.content[0].text
            check(not done.is_error, "plan_trip succeeds", done)
            check(text == "A trip to Lisbon for 3 travellers, with a view.", "both typed answers arrive", text)
            check(asked == ["Where to?", "Who travels?"], "two questions, in order", asked)
            print(f"{mode}: a tool that asks twice gets its typed answers ({version})")

            listed = await client.list_resources()
            uris = [resource.uri for resource in listed.resources]
            check(uris == sorted(uris) and "test://static-text" in uris, "resources/list, sorted", uris)
            text = await client.read_resource("test://static-text")
            check(text.contents[0].text == "This is the content of the static text resource.", "a text resource", text)
            binary = await client.read_resource("test://static-binary")
            check(base64.b64decode(binary.contents[0].blob).startswith(PNG_START), "a binary resource", binary)
            templates = await client.list_resource_templates()
            check([t.uri_template for t in templates.resource_templates] == ["test://template/{id}/data"], "templates", templates)
            data = await client.read_resource("test://template/42/data")
            check('"id":"42"' in data.contents[0].text, "a template's resource", data)
            try:
                await client.read_resource("test://template/%2e%2e/data")
                check(False, "a variable holding %2e%2e is refused")
            except Exception as error:  # the SDK's MCPError
                check("refused" in str(error), "a variable holding %2e%2e is refused", error)
            print(f"{mode}: resources, templates, a hostile variable refused")

            prompts = await client.list_prompts()
            names = [prompt.name for prompt in prompts.prompts]
            check("test_prompt_with_arguments" in names and names == sorted(names), "prompts/list, sorted", names)
            got = await client.get_prompt("test_prompt_with_arguments", {"arg1": "one", "arg2": "two"})
            check(got.messages[0].content.text == "Prompt with arguments: arg1='one', arg2='two'", "a prompt with arguments", got)
            completed = await client.complete(
                types.PromptReference(type="ref/prompt", name="test_prompt_with_arguments"),
                {"name": "arg1", "value": "testV"},
            )
            check(completed.completion.values == ["testValue1", "testValue2"], "completion of a prompt's argument", completed)
            by_template = await client.complete(
                types.ResourceTemplateReference(type="ref/resource", uri="test://template/{id}/data"),
                {"name": "id", "value": "12"},
            )
            check(by_template.completion.values == ["123", "124"], "completion of a template's variable", by_template)
            print(f"{mode}: prompts and completion")


async def main():
    await run("default")
    await run("legacy")
    print("all checks passed")


anyio.run(main)
