"""`toolreg mcp --http` driven by FastMCP's client with `fastmcp-tasks` (the 2026-07-28 tasks
extension, io.modelcontextprotocol/tasks): a 3-second wait runs as a task (handle, polls,
progress, result), another is cancelled, and a caller never reads a task that is not its own.

Usage: tasks.py URL ADMIN_TOKEN. Prints one line per check, then "all checks passed".
"""

import asyncio
import sys
import time

import fastmcp_tasks  # noqa: F401  (registers the tasks half of every FastMCP client)
import mcp_types
from fastmcp import Client
from fastmcp_tasks import call_tool_task
from fastmcp_tasks.client import _send_cancel, _send_get
from mcp.shared.exceptions import MCPError

WAIT = "file_manager.wait_for"


def check(condition, what, detail=""):
    if not condition:
        raise SystemExit(f"FAILED: {what} {detail}")


async def error_of(coroutine):
    try:
        await coroutine
    except MCPError as error:
        return error
    raise SystemExit("FAILED: expected a JSON-RPC error")


async def main(url, token):
    async with Client(url, auth=token) as admin, Client(url) as guest:
        # A 3-second wait: a handle after the first second, progress while it runs, the result.
        started = time.monotonic()
        task = await call_tool_task(admin, WAIT, {"path": "never.txt", "timeout_seconds": 3})
        handed = time.monotonic() - started
        created = task.create_result
        check(created.status == "working", "a task starts working", created)
        check(0.9 <= handed < 2.5, "the handle comes after about a second", handed)
        check(created.ttl_ms and created.ttl_ms > 0, "the task has a TTL", created)
        check(created.poll_interval_ms, "the task says how often to poll", created)
        seen = set()
        messages = []
        while True:
            state = await task.status()
            seen.add(state.status)
            if state.status_message:
                messages.append(state.status_message)
            if state.status in ("completed", "failed", "cancelled"):
                break
            await asyncio.sleep(0.25)
        check(state.status == "completed", "the task completes", state)
        check(any("waited" in m for m in messages), "polls see the progress", messages)
        result = await task.result()
        check(result.data.appeared is False, "the result is the tool's", result)
        check(result.data.waited_seconds == 3, "the wait took 3 s", result)
        check(2.9 <= time.monotonic() - started < 8, "the task ran about 3 s")
        print("a 3-second task: handle, polls, progress, result")

        # Another wait, cancelled: it stays cancelled, and its call is dropped.
        other = await call_tool_task(admin, WAIT, {"path": "never.txt", "timeout_seconds": 60})
        await other.cancel()
        state = await other.status()
        check(state.status == "cancelled", "a cancelled task is cancelled", state)
        await asyncio.sleep(1.2)
        state = await other.status()
        check(state.status == "cancelled", "a cancelled task stays cancelled", state)
        # Cancelling again, or a task that ended, is acknowledged and changes nothing.
        await other.cancel()
        await _send_cancel(admin.session, task.task_id)
        state = await task.status()
        check(state.status == "completed", "a completed task stays completed", state)
        print("a task cancelled")

        # Another caller's task is the same error as a forged id; so is a cancel of it.
        forged = await error_of(_send_get(admin.session, "0" * 32))
        check(forged.code == -32602, "a forged id is -32602", forged)
        theirs = await error_of(_send_get(guest.session, task.task_id))
        check(theirs.code == forged.code, "another caller's task is unknown", theirs)
        check(theirs.message == forged.message, "the same message as a forged id", theirs)
        cancel = await error_of(_send_cancel(guest.session, other.task_id))
        check(cancel.code == -32602, "another caller cannot cancel", cancel)
        print("another caller's task is an unknown one")

        # The transparent path: call_tool follows the task to its result.
        result = await admin.call_tool(WAIT, {"path": "never.txt", "timeout_seconds": 2})
        check(result.data.waited_seconds == 2, "call_tool follows a task", result)
        # A call that ends at once (here refused: a wait of 0 s) answers within its request.
        quick = await call_tool_task_or_result(admin)
        check(quick == "result", "a call shorter than a second is no task", quick)
        print("call_tool follows a task; a short call answers at once")

    # A client of the older era does not follow tasks: the wait answers within the request.
    async with Client(url, auth=token, mode="legacy") as legacy:
        result = await legacy.call_tool(WAIT, {"path": "never.txt", "timeout_seconds": 2})
        check(result.data.waited_seconds == 2, "a legacy client waits in the request", result)
        print("a legacy client gets its answer within the request")
    print("all checks passed")


async def call_tool_task_or_result(client):
    raw = await client.session.call_tool(
        name=WAIT, arguments={"path": "never.txt", "timeout_seconds": 0}, allow_claimed=True
    )
    return "result" if isinstance(raw, mcp_types.CallToolResult) else type(raw).__name__


asyncio.run(main(sys.argv[1], sys.argv[2]))
