"""Two `toolreg mcp --http` instances on one Redis, driven by FastMCP's client with
`fastmcp-tasks`: a task started on the first is polled, answered and cancelled through the
second; once the test has killed the first, a task it was running is failed within the lease.

Usage: fleet_tasks.py URL_A URL_B ADMIN_TOKEN LEASE_SECONDS. Prints `TASK <id>` and waits for a
line on standard input (the first instance killed) before the last check.
"""

import asyncio
import sys
import time

import fastmcp_tasks  # noqa: F401  (registers the tasks half of every FastMCP client)
from fastmcp import Client
from fastmcp_tasks import call_tool_task
from fastmcp_tasks.client import _send_cancel, _send_get, _send_update

WAIT = "file_manager.wait_for"
TERMINAL = ("completed", "failed", "cancelled")


def check(condition, what, detail=""):
    if not condition:
        raise SystemExit(f"FAILED: {what} {detail}")


async def until(session, task_id, done, seconds=10):
    deadline = time.monotonic() + seconds
    while True:
        state = await _send_get(session, task_id)
        if done(state):
            return state
        check(time.monotonic() < deadline, "the task got there in time", state)
        await asyncio.sleep(0.1)


async def main(url_a, url_b, token, lease):
    async with Client(url_a, auth=token) as a, Client(url_b, auth=token) as b:
        # Started on A; B sees its question, answers it, and reads its result.
        task = await call_tool_task(a, "file_manager.clear_folder", {"dir": "junk"})
        asking = await until(b.session, task.task_id, lambda s: s.status == "input_required")
        question = asking.input_requests["confirm"]
        check(question["method"] == "elicitation/create", "the question is a form", question)
        check("junk" in question["params"]["message"], "the question shows the call", question)
        await _send_update(
            b.session, task.task_id, {"confirm": {"action": "accept", "content": {"approve": True}}}
        )
        done = await until(b.session, task.task_id, lambda s: s.status in TERMINAL)
        check(done.status == "completed", "the answered task completes", done)
        text = str(done.result)
        check("a.txt" in text and "b.txt" in text, "the result is the tool's", done.result)
        mine = await _send_get(a.session, task.task_id)
        check(mine.status == "completed", "A reads the same end", mine)
        print("a task started on one instance is polled and answered through the other")

        # Started on A, cancelled through B: A sees it cancelled.
        other = await call_tool_task(a, WAIT, {"path": "never.txt", "timeout_seconds": 60})
        await _send_cancel(b.session, other.task_id)
        state = await _send_get(a.session, other.task_id)
        check(state.status == "cancelled", "a cancel through B holds on A", state)
        print("a task started on one instance is cancelled through the other")

        # Started on A, which the test then kills: B reports it failed within the lease.
        third = await call_tool_task(a, WAIT, {"path": "never.txt", "timeout_seconds": 120})
        state = await _send_get(b.session, third.task_id)
        check(state.status == "working", "B sees A's task working", state)
        print(f"TASK {third.task_id}", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
        killed = time.monotonic()
        failed = await until(b.session, third.task_id, lambda s: s.status in TERMINAL, lease + 5)
        took = time.monotonic() - killed
        check(failed.status == "failed", "a task whose instance died is failed", failed)
        check(took <= lease + 1.5, "within the lease", took)
        check(failed.error and failed.error.get("code") == -32603, "with a JSON-RPC error", failed)
        print(f"killing the running instance fails its task within the lease ({took:.1f} s)")
    print("all checks passed")


asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])))
