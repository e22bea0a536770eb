// The example server (`tests/src/bin/conformance.rs`) driven by the official TypeScript SDK's
// client (@modelcontextprotocol/sdk 1.32, the 2025-11-25 revision): resources listed and read,
// a template's resource read, a prompt got with arguments, an argument completed, a resource
// subscribed to and unsubscribed from, an unknown resource refused with its URI.
//
// Usage: node typescript_sdk.mjs URL (beside the SDK's node_modules). Prints one line per
// check, then "all checks passed".

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url] = process.argv.slice(2);

function check(condition, what, detail) {
  if (!condition) {
    console.log(`FAILED: ${what} ${JSON.stringify(detail ?? "")}`);
    process.exit(1);
  }
}

const client = new Client({ name: "offers-check", version: "1.0.0" }, { capabilities: {} });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
const capabilities = client.getServerCapabilities();
check(
  capabilities.resources?.subscribe && capabilities.prompts && capabilities.completions,
  "the server declares resources, prompts and completion",
  capabilities,
);

const { resources } = await client.listResources();
const uris = resources.map((resource) => resource.uri);
check(uris.includes("test://static-text") && uris.includes("test://static-binary"), "resources/list", uris);
check(resources.every((resource) => resource.description), "each resource is described", resources);
const text = await client.readResource({ uri: "test://static-text" });
check(
  text.contents[0].text === "This is the content of the static text resource." &&
    text.contents[0].mimeType === "text/plain",
  "a text resource",
  text,
);
const binary = await client.readResource({ uri: "test://static-binary" });
check(Buffer.from(binary.contents[0].blob, "base64").subarray(0, 4).toString("latin1") === "\x89PNG", "a binary resource", binary);
const { resourceTemplates } = await client.listResourceTemplates();
check(resourceTemplates[0]?.uriTemplate === "test://template/{id}/data", "resources/templates/list", resourceTemplates);
const data = await client.readResource({ uri: "test://template/7/data" });
check(JSON.parse(data.contents[0].text).id === "7", "a template's resource", data);
console.log("resources listed and read, a template's resource read");

let refused;
try {
  await client.readResource({ uri: "test://nowhere" });
} catch (error) {
  refused = error;
}
check(refused && refused.data?.uri === "test://nowhere", "an unknown resource is refused with its URI", refused);
await client.subscribeResource({ uri: "test://watched-resource" });
await client.unsubscribeResource({ uri: "test://watched-resource" });
console.log("an unknown resource refused; a subscription made and ended");

const prompt = await client.getPrompt({
  name: "test_prompt_with_arguments",
  arguments: { arg1: "alpha", arg2: "beta" },
});
check(
  prompt.messages[0].content.text === "Prompt with arguments: arg1='alpha', arg2='beta'",
  "a prompt with arguments",
  prompt,
);
const image = await client.getPrompt({ name: "test_prompt_with_image" });
check(image.messages[0].content.type === "image" && image.messages[0].content.mimeType === "image/png", "a prompt's image", image);
const completed = await client.complete({
  ref: { type: "ref/prompt", name: "test_prompt_with_arguments" },
  argument: { name: "arg1", value: "testValue" },
});
check(
  JSON.stringify(completed.completion.values) === JSON.stringify(["testValue1", "testValue2"]),
  "an argument completed",
  completed,
);
console.log("a prompt got with arguments, an argument completed");

await client.close();
console.log("all checks passed");
