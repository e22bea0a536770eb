"""Drives `toolreg mcp` with the official MCP Python SDK, in both protocol eras.

    python check.py TOOLREG KB_DIR [HTTP_URL ADMIN_TOKEN]

Run in the folder the servers run in (its `sandbox/` is the file tools' area, its
`.toolreg-switches.json` the switches every `toolreg` there follows). Prints one line per check
and exits non-zero at the first that fails.
"""

import base64
import json
import pathlib
import sys
import time

import anyio
import httpx2
import jsonschema
import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

TOOLREG, KB = sys.argv[1], sys.argv[2]
URL = sys.argv[3] if len(sys.argv) > 3 else None
ADMIN_TOKEN = sys.argv[4] if len(sys.argv) > 4 else None
SANDBOX = pathlib.Path("sandbox")
# Confirmation belongs to a user's call: the file tools need at least the `user` level.
ANN = ("--level", "user", "--user", "ann")
# A fake API key, which `toolreg`'s `RedactSecrets` hook replaces in every result.
KEY = "sk-" + "abcdefghij" * 3
REDACTED = "[redacted secret]"
# `file_manager.list`'s `max_result_bytes`, and a folder whose listing is far longer.
LIST_LIMIT = 16384
MANY = 600


def stdio(*flags, page_size=None):
    paging = ["--page-size", str(page_size)] if page_size else []
    return StdioServerParameters(command=TOOLREG, args=[*flags, "mcp", *paging], env={"TOOLREG_KB": KB})


async def all_pages(client):
    names, cursor, pages = [], None, 0
    while True:
        page = await client.list_tools(cursor=cursor)
        names += [tool.name for tool in page.tools]
        pages += 1
        cursor = page.next_cursor
        if not cursor:
            return names, pages


def http(token=None):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx2.AsyncClient(headers=headers, timeout=30)


async def names(server, mode):
    async with Client(server, mode=mode) as client:
        listed = await client.list_tools()
        return [tool.name for tool in listed.tools], client.protocol_version


async def refusal(client, name):
    try:
        await client.call_tool(name, {})
    except Exception as error:  # the SDK raises its MCPError for a JSON-RPC error
        return getattr(getattr(error, "error", None), "code", None), str(error)
    raise AssertionError(f"calling {name} did not fail")


async def toolreg(*args):
    done = await anyio.run_process([TOOLREG, *args], check=False)
    assert done.returncode == 0, (args, done.stdout, done.stderr)


async def lists_and_calls(mode, expected):
    guest, version = await names(stdio("--level", "guest"), mode)
    admin, _ = await names(stdio("--level", "admin", "--user", "ann"), mode)
    assert version == expected, (mode, version)
    assert "research" in guest and "scheduler.add_job" not in guest, guest
    assert "scheduler.add_job" in admin and set(guest) < set(admin), admin
    async with Client(stdio("--level", "admin", "--user", "ann", page_size=5), mode=mode) as client:
        paged, pages = await all_pages(client)
    assert paged == admin and pages == -(-len(admin) // 5), (paged, pages)
    print(f"{mode}: stdio lists per scope ({len(guest)} guest, {len(admin)} admin tools, {pages} pages of 5)")

    async with Client(stdio("--level", "guest"), mode=mode) as client:
        done = await client.call_tool("research", {"query": "caching"})
        assert not done.is_error and "Caching" in done.content[0].text, done
        bad = await client.call_tool("research", {"query": 5})
        assert bad.is_error and "query" in bad.content[0].text, bad
        unknown = await refusal(client, "scheduler.add_jobs")
        hidden = await refusal(client, "scheduler.add_job")
        assert unknown[0] == hidden[0] == -32602, (unknown, hidden)
        assert hidden[1].replace("add_job", "add_jobs") == unknown[1], (unknown, hidden)
        if mode != "legacy":
            # `research` allows three calls a day: the fourth of this run says when to retry.
            # A question asked before is answered from the cache and spends nothing.
            again = await client.call_tool("research", {"query": "caching"})
            assert not again.is_error and again.content[0].text == done.content[0].text, again
            for query in ("caching redis", "rate limits"):
                await client.call_tool("research", {"query": query})
            limited = await client.call_tool("research", {"query": "local models"})
            assert limited.is_error and "try again in" in limited.content[0].text, limited
    print(f"{mode}: stdio call, isError for bad arguments and rate limits, -32602 alike for unknown and hidden")
    return guest, admin


async def progress_and_cancellation(server, mode, label):
    name = f"{mode}-{label}.txt"
    seen = []

    async def progress(done, total, message):
        seen.append(message)

    async def write_later():
        await anyio.sleep(1.6)
        (SANDBOX / name).write_text("ready")

    late = []

    async def stray(message):
        # Progress whose call is gone still reaches the message handler.
        if isinstance(message, types.ProgressNotification):
            late.append(message)

    async with Client(server, mode=mode, message_handler=stray) as client:
        async with anyio.create_task_group() as group:
            group.start_soon(write_later)
            done = await client.call_tool(
                "file_manager.wait_for", {"path": name, "timeout_seconds": 20}, progress_callback=progress
            )
        assert not done.is_error and json.loads(done.content[0].text)["appeared"], done
        assert seen and all(name in message for message in seen), seen

        # Abandoning a call cancels it; the server drops the tool's future, so its progress
        # stops, and it serves the next call at once.
        cancelled = []

        async def count(done, total, message):
            cancelled.append(message)

        started = time.monotonic()
        with anyio.move_on_after(2.5):
            await client.call_tool(
                "file_manager.wait_for", {"path": "never.txt", "timeout_seconds": 60}, progress_callback=count
            )
        assert time.monotonic() - started < 5, "the cancelled call was waited for"
        assert cancelled, "no progress before the cancellation"
        heard = len(cancelled) + len(late)
        await anyio.sleep(2.5)
        assert len(cancelled) + len(late) == heard, ("progress after the cancellation", cancelled, late)
        again = await client.call_tool("file_manager.list", {})
        assert not again.is_error, again
    print(f"{mode}: {label} progress notifications; a cancelled call stops and the server goes on")


async def switch_and_hear(client, mode, heard, verb):
    """Runs `toolreg VERB file_manager.list` and waits for the client to hear list_changed."""
    if mode == "legacy":
        await toolreg(verb, "file_manager.list")
        with anyio.fail_after(10):
            await heard.wait()
        return
    async with client.listen(tools_list_changed=True) as changes:
        await toolreg(verb, "file_manager.list")
        with anyio.fail_after(10):
            async for _event in changes:
                break


async def list_changed(mode):
    heard = [anyio.Event()]

    async def on_message(message):
        if isinstance(message, types.ToolListChangedNotification):
            heard[0].set()

    async with Client(stdio("--level", "guest"), mode=mode, message_handler=on_message) as client:
        before = [tool.name for tool in (await client.list_tools()).tools]
        assert "file_manager.list" in before, before
        await switch_and_hear(client, mode, heard[0], "disable")
        after = [tool.name for tool in (await client.list_tools(cache_mode="refresh")).tools]
        assert "file_manager.list" not in after and set(after) < set(before), after
        gone = await refusal(client, "file_manager.list")
        assert gone[0] == -32602, gone
        heard[0] = anyio.Event()
        await switch_and_hear(client, mode, heard[0], "enable")
        back = [tool.name for tool in (await client.list_tools(cache_mode="refresh")).tools]
        assert back == before, (back, before)
    print(f"{mode}: list_changed after `toolreg disable` in another process, and the tool is gone")


async def confirmation(mode):
    for name in ["a.txt", "b.txt", "c.txt"]:
        (SANDBOX / f"{mode}-{name}").write_text(name)
    a, b, c = (f"{mode}-{name}" for name in ["a.txt", "b.txt", "c.txt"])
    asked = []

    async def approve(context, params):
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"approve": True})

    async with Client(stdio(*ANN), mode=mode, elicitation_callback=approve) as client:
        session = client.session
        # `confirm_if`: a file under `tmp/` is deleted at once, with no question and no token.
        scratch = SANDBOX / "tmp" / f"{mode}-x.txt"
        scratch.parent.mkdir(exist_ok=True)
        scratch.write_text("scratch")
        done = await client.call_tool("file_manager.delete_file", {"path": f"tmp/{scratch.name}"})
        assert not done.is_error and not scratch.exists() and not asked, (done, asked)
        print(f"{mode}: a delete under tmp/ runs at once, without a question")
        if mode == "legacy":
            # No input_required before 2026-07-28: the answer names the approval token, and a
            # retry carrying it in `_meta` runs the call.
            first = await client.call_tool("file_manager.delete_file", {"path": a})
            text = first.content[0].text
            assert first.is_error and "approval" in text and (SANDBOX / a).exists(), first
            token = text.split("approval token `")[1].split("`")[0]
            meta = {"tool-registry/approvalToken": token}
            moved = await session.call_tool("file_manager.delete_file", {"path": b}, meta=meta)
            assert moved.is_error and "different arguments" in moved.content[0].text, moved
            assert (SANDBOX / b).exists()
            done = await session.call_tool("file_manager.delete_file", {"path": a}, meta=meta)
            assert not done.is_error and not (SANDBOX / a).exists(), done
            replay = await session.call_tool("file_manager.delete_file", {"path": a}, meta=meta)
            assert replay.is_error and "already used" in replay.content[0].text, replay
            print(f"{mode}: confirmation by approval token runs once, not on other arguments")
            return

        # The SDK's own driver: the user is asked once about that exact call, which then runs.
        done = await client.call_tool("file_manager.delete_file", {"path": c})
        assert not done.is_error and not (SANDBOX / c).exists(), done
        assert len(asked) == 1 and c in asked[0], asked

        # By hand: the answer to one call, replayed on other arguments, is refused.
        first = await session.call_tool("file_manager.delete_file", {"path": a}, allow_input_required=True)
        assert isinstance(first, types.InputRequiredResult), first
        assert a in first.input_requests["confirm"].params.message
        yes = {"confirm": types.ElicitResult(action="accept", content={"approve": True})}
        state = first.request_state
        moved = await session.call_tool(
            "file_manager.delete_file", {"path": b}, input_responses=yes, request_state=state, allow_input_required=True
        )
        assert moved.is_error and "different arguments" in moved.content[0].text, moved
        assert (SANDBOX / b).exists() and (SANDBOX / a).exists()
        done = await session.call_tool(
            "file_manager.delete_file", {"path": a}, input_responses=yes, request_state=state, allow_input_required=True
        )
        assert not done.is_error and not (SANDBOX / a).exists(), done
        replay = await session.call_tool(
            "file_manager.delete_file", {"path": a}, input_responses=yes, request_state=state, allow_input_required=True
        )
        assert replay.is_error and "already used" in replay.content[0].text, replay

        # A refusal drops the call.
        second = await session.call_tool("file_manager.delete_file", {"path": b}, allow_input_required=True)
        no = {"confirm": types.ElicitResult(action="decline")}
        declined = await session.call_tool(
            "file_manager.delete_file",
            {"path": b},
            input_responses=no,
            request_state=second.request_state,
            allow_input_required=True,
        )
        assert declined.is_error and "declined" in declined.content[0].text, declined
        assert (SANDBOX / b).exists()
    print(f"{mode}: confirmation by input_required runs the call once, refuses it moved or replayed, drops it declined")


def hook_fixtures():
    """A file holding KEY, and MANY files with long names in `many/`."""
    (SANDBOX / "notes").mkdir(exist_ok=True)
    (SANDBOX / "notes" / "secret.txt").write_text(f"OPENAI_API_KEY={KEY}\nkeep this line\n")
    (SANDBOX / "many").mkdir(exist_ok=True)
    for i in range(MANY):
        (SANDBOX / "many" / f"a-rather-long-file-name-for-the-listing-to-be-cut-{i:04}.txt").touch()


def texts(result):
    return [block.text for block in result.content if isinstance(block, types.TextContent)]


async def hooks(server, mode, label):
    async with Client(server, mode=mode) as client:
        schemas = {tool.name: tool.output_schema for tool in (await client.list_tools()).tools}
        # RedactSecrets: the key is gone from the text and the structured content alike.
        read = await client.call_tool("file_manager.read", {"path": "notes/secret.txt"})
        assert not read.is_error, read
        assert read.structured_content["content"] == f"OPENAI_API_KEY={REDACTED}\nkeep this line\n", read
        assert json.loads(texts(read)[0]) == read.structured_content, read
        assert KEY not in read.model_dump_json(), read

        # max_result_bytes: the listing cut to the limit, the note last, the structured content
        # still JSON that fits the listed output schema.
        listed = await client.call_tool("file_manager.list", {"dir": "many"})
        assert not listed.is_error, listed
        shown = texts(listed)
        assert sum(len(text.encode()) for text in shown) <= LIST_LIMIT, [len(text) for text in shown]
        assert len(shown) == 2 and shown[-1].startswith("[cut: the full result was"), shown[-1:]
        structured = listed.structured_content
        assert json.loads(shown[0]) == structured, shown[0][:200]
        validates(structured, schemas["file_manager.list"])
        entries = structured["entries"]
        assert structured["dir"] == "many" and 10 < len(entries) < MANY, len(entries)
        assert all(entry["path"] == f"many/{entry['name']}" for entry in entries[:-1]), entries[:3]
    print(f"{mode}: {label} hooks: a key redacted in text and structuredContent, a long listing cut with its note")


async def over_http(mode, expected, guest):
    async with http() as anonymous, http(ADMIN_TOKEN) as admin:
        # The server follows the switch file within a second of the `enable` above.
        with anyio.fail_after(5):
            while True:
                as_guest, version = await names(streamable_http_client(URL, http_client=anonymous), mode)
                if as_guest == guest:
                    break
                await anyio.sleep(0.2)
        as_admin, _ = await names(streamable_http_client(URL, http_client=admin), mode)
    assert version == expected, (mode, version)
    assert as_guest == guest, (as_guest, guest)
    assert "scheduler.add_job" in as_admin and set(as_guest) < set(as_admin), as_admin
    async with http() as anonymous:
        async with Client(streamable_http_client(URL, http_client=anonymous), mode=mode) as client:
            done = await client.call_tool("file_manager.list", {})
            assert not done.is_error, done
            hidden = await refusal(client, "scheduler.add_job")
            assert hidden[0] == -32602, hidden
    async with http(ADMIN_TOKEN) as admin:
        async with Client(streamable_http_client(URL, http_client=admin), mode=mode) as client:
            jobs = await client.call_tool("scheduler.list_jobs", {})
            assert not jobs.is_error, jobs
    print(f"{mode}: streamable HTTP: no token is a guest, the admin token sees and calls more")
    async with http() as anonymous:
        await media(streamable_http_client(URL, http_client=anonymous), mode, "HTTP")
    async with http() as anonymous:
        await hooks(streamable_http_client(URL, http_client=anonymous), mode, "HTTP")
    async with http() as anonymous:
        await progress_and_cancellation(streamable_http_client(URL, http_client=anonymous), mode, "HTTP")


VALUES = [3, 1, 4, 1, 5, 9, 2, 6]


async def direct(tool, arguments):
    """What the registry itself answers, `toolreg call --save`: the printed result and the bytes
    of each binary block it saved."""
    saved = pathlib.Path(f"saved-{tool}")
    done = await anyio.run_process([TOOLREG, "call", tool, json.dumps(arguments), "--save", str(saved)])
    printed = json.loads(done.stdout)
    return printed, [pathlib.Path(block["saved"]).read_bytes() for block in printed.get("blocks", []) if block.get("saved")]


def validates(value, schema):
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(value)


async def media(server, mode, label):
    drawn, (png,) = await direct("chart.draw", {"values": VALUES})
    exported, (csv,) = await direct("chart.export", {"name": "q3", "values": VALUES})
    async with Client(server, mode=mode) as client:
        schemas = {tool.name: tool.output_schema for tool in (await client.list_tools()).tools}
        # The SDK checks `structuredContent` against the listed schema itself; so does this.
        draw = await client.call_tool("chart.draw", {"values": VALUES})
        assert not draw.is_error, draw
        text, image = draw.content
        assert isinstance(image, types.ImageContent) and image.mime_type == "image/png", draw
        assert base64.b64decode(image.data, validate=True) == png, "the PNG the registry returns"
        assert json.loads(text.text) == draw.structured_content == drawn["content"], draw
        validates(draw.structured_content, schemas["chart.draw"])

        export = await client.call_tool("chart.export", {"name": "q3", "values": VALUES})
        assert not export.is_error, export
        text, file, link = export.content
        assert isinstance(file, types.EmbeddedResource), export
        assert isinstance(file.resource, types.BlobResourceContents), export
        assert (file.resource.uri, file.resource.mime_type) == ("attachment:q3.csv", "text/csv"), file
        assert base64.b64decode(file.resource.blob, validate=True) == csv
        assert isinstance(link, types.ResourceLink), export
        assert (link.uri, link.name, link.mime_type) == ("chart://q3.png", "q3.png", "image/png"), link
        assert export.structured_content == exported["content"] == json.loads(text.text), export
        validates(export.structured_content, schemas["chart.export"])
    print(f"{mode}: {label} media: the image, file and link byte for byte, structuredContent fits outputSchema")


async def wrapped(mode):
    async with Client(stdio("--level", "admin", "--user", "ann"), mode=mode) as client:
        schema = {tool.name: tool.output_schema for tool in (await client.list_tools()).tools}["scheduler.list_jobs"]
        assert schema["type"] == "object" and schema["x-tool-registry-wrapped"] == "result", schema
        assert schema["properties"]["result"]["type"] == "array", schema
        jobs = await client.call_tool("scheduler.list_jobs", {})
        assert not jobs.is_error and jobs.structured_content == {"result": json.loads(jobs.content[0].text)}, jobs
        validates(jobs.structured_content, schema)
    print(f"{mode}: a list answers structuredContent {{result}} under a wrapped outputSchema")


async def check(mode):
    expected = "2025-11-25" if mode == "legacy" else "2026-07-28"
    guest, _ = await lists_and_calls(mode, expected)
    await media(stdio("--level", "guest"), mode, "stdio")
    await hooks(stdio("--level", "guest"), mode, "stdio")
    await wrapped(mode)
    await progress_and_cancellation(stdio("--level", "guest"), mode, "stdio")
    await list_changed(mode)
    await confirmation(mode)
    if URL:
        await over_http(mode, expected, guest)


SANDBOX.mkdir(exist_ok=True)
hook_fixtures()
for mode in ["legacy", "2026-07-28"]:
    anyio.run(check, mode)
print("all checks passed")
