// `toolreg mcp --http` driven by the official TypeScript SDK's client (@modelcontextprotocol/sdk,
// the 2025-11-25 revision's tasks): a 3-second wait as a task (handle, polls, progress, result),
// another cancelled, the caller's tasks listed, another caller's task and a forged id refused.
//
// Usage: node tasks.mjs URL ADMIN_TOKEN (with NODE_PATH naming the SDK's node_modules). Prints
// one line per check, then "all checks passed".

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const WAIT = "file_manager.wait_for";
const [url, token] = process.argv.slice(2);

function check(condition, what, detail) {
  if (!condition) {
    console.log(`FAILED: ${what} ${JSON.stringify(detail ?? "")}`);
    process.exit(1);
  }
}

async function connect(bearer) {
  const headers = bearer ? { Authorization: `Bearer ${bearer}` } : {};
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  const client = new Client({ name: "tasks-check", version: "1.0.0" }, { capabilities: {} });
  await client.connect(transport);
  return client;
}

async function refusal(promise) {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  check(false, "expected an error");
}

const admin = await connect(token);
const guest = await connect(undefined);
check(admin.getServerVersion().name === "tool-registry", "connected");
check(admin.getServerCapabilities().tasks?.requests?.tools?.call, "the server declares tasks",
  admin.getServerCapabilities());
const { tools } = await admin.listTools();
const wait = tools.find((tool) => tool.name === WAIT);
check(wait?.execution?.taskSupport === "optional", "wait_for says it may be a task", wait);
const clear = tools.find((tool) => tool.name === "file_manager.clear_folder");
check(clear?.execution?.taskSupport === "required", "clear_folder says it is a task", clear);
const list = tools.find((tool) => tool.name === "file_manager.list");
check(list && !list.execution, "a tool that is never a task says nothing", list);
console.log("tools/list says which tools are tasks");

// A 3-second wait: the handle at once, polls, progress, the result.
const started = Date.now();
const statuses = [];
let created, result;
const stream = admin.experimental.tasks.callToolStream(
  { name: WAIT, arguments: { path: "never.txt", timeout_seconds: 3 } },
  undefined,
  { task: { ttl: 60000 } },
);
for await (const message of stream) {
  if (message.type === "taskCreated") {
    created = message.task;
    check(Date.now() - started < 1500, "the handle comes at once", Date.now() - started);
  } else if (message.type === "taskStatus") {
    statuses.push(message.task);
  } else if (message.type === "result") {
    result = message.result;
  } else if (message.type === "error") {
    check(false, "the task streams no error", String(message.error));
  }
}
check(created?.status === "working" && created.taskId, "a task starts working", created);
check(typeof created.ttl === "number" && created.pollInterval > 0, "it has a TTL and a poll interval", created);
check(statuses.some((task) => (task.statusMessage ?? "").includes("waited")), "polls see the progress", statuses);
check(statuses.at(-1).status === "completed", "the task completes", statuses.at(-1));
const value = JSON.parse(result.content[0].text);
check(value.waited_seconds === 3 && value.appeared === false, "the result is the tool's", result);
check(result._meta?.["io.modelcontextprotocol/related-task"]?.taskId === created.taskId,
  "the result names its task", result._meta);
check(Date.now() - started >= 2900, "the task ran about 3 s", Date.now() - started);
console.log("a 3-second task: handle, polls, progress, result");

// Another wait, cancelled.
const other = admin.experimental.tasks.callToolStream(
  { name: WAIT, arguments: { path: "never.txt", timeout_seconds: 60 } },
  undefined,
  { task: {} },
);
const first = await other.next();
check(first.value?.type === "taskCreated", "a second task", first.value);
const otherId = first.value.task.taskId;
await other.return();
const cancelled = await admin.experimental.tasks.cancelTask(otherId);
check(cancelled.status === "cancelled", "cancel answers the cancelled task", cancelled);
await new Promise((resolve) => setTimeout(resolve, 1200));
check((await admin.experimental.tasks.getTask(otherId)).status === "cancelled", "it stays cancelled");
const again = await refusal(admin.experimental.tasks.cancelTask(otherId));
check(again.code === -32602, "an ended task cannot be cancelled", String(again));
console.log("a task cancelled");

// The caller's tasks, listed; nobody else's.
const mine = await admin.experimental.tasks.listTasks();
const ids = mine.tasks.map((task) => task.taskId);
check(ids.includes(created.taskId) && ids.includes(otherId), "the caller's tasks are listed", mine);
check((await guest.experimental.tasks.listTasks()).tasks.length === 0, "a guest lists none of them");
const forged = await refusal(admin.experimental.tasks.getTask("0".repeat(32)));
const theirs = await refusal(guest.experimental.tasks.getTask(created.taskId));
check(forged.code === -32602 && theirs.code === forged.code, "another caller's task is unknown", String(theirs));
check(theirs.message === forged.message, "with the same message as a forged id", theirs.message);
const stolen = await refusal(guest.experimental.tasks.getTaskResult(created.taskId));
check(stolen.code === -32602, "nor its result", String(stolen));
console.log("another caller's task is an unknown one");

// A tool that is always a task, called without one: the revision's error.
const plain = await refusal(admin.callTool({ name: "file_manager.clear_folder", arguments: { dir: "x" } }));
check(plain.code === -32601 || plain.code === -32600, "a required task refuses a plain call", String(plain));
console.log("a tool that is always a task refuses a plain call");

await admin.close();
await guest.close();
console.log("all checks passed");
