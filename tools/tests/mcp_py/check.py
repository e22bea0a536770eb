"""Drives `toolreg mcp` with the official MCP Python SDK, in both protocol eras.

    python check.py TOOLREG KB_DIR [HTTP_URL]

Prints one line per check and exits non-zero at the first that fails.
"""

import sys

import anyio
from mcp import Client, StdioServerParameters

TOOLREG, KB = sys.argv[1], sys.argv[2]
URL = sys.argv[3] if len(sys.argv) > 3 else None


def stdio(*flags):
    return StdioServerParameters(command=TOOLREG, args=[*flags, "mcp"], env={"TOOLREG_KB": KB})


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


async def check(mode):
    guest, version = await names(stdio("--level", "guest"), mode)
    admin, _ = await names(stdio("--level", "admin", "--user", "ann"), mode)
    expected = "2025-11-25" if mode == "legacy" else "2026-07-28"
    assert version == expected, (mode, version)
    assert "research" in guest and "scheduler.add_job" not in guest, guest
    assert "scheduler.add_job" in admin and set(guest) < set(admin), admin
    print(f"{mode}: stdio lists per scope ({len(guest)} guest, {len(admin)} admin tools)")

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
            for _ in range(2):
                await client.call_tool("research", {"query": "caching"})
            limited = await client.call_tool("research", {"query": "caching"})
            assert limited.is_error and "try again in" in limited.content[0].text, limited
    print(f"{mode}: stdio call, isError for bad arguments and rate limits, -32602 alike for unknown and hidden")

    if URL:
        http_names, version = await names(URL, mode)
        assert version == expected, (mode, version)
        assert http_names == guest, (http_names, guest)
        async with Client(URL, mode=mode) as client:
            done = await client.call_tool("file_manager.list", {})
            assert not done.is_error, done
        print(f"{mode}: streamable HTTP without a token is a guest, and calls")


for mode in ["legacy", "2026-07-28"]:
    anyio.run(check, mode)
print("all checks passed")
