// Lists the tools of an MCP server with the official TypeScript MCP SDK
// client (@modelcontextprotocol/sdk, found through NODE_PATH), over stdio:
//
//   node list-tools.cjs COMMAND ARGS...
//
// starts COMMAND ARGS in the current folder with this process's
// environment, and prints one JSON line on stdout:
// {"server": {name, version}, "tools": [{name, annotations}]}, the
// annotations as the SDK parsed them (null when a tool has none).
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");

async function main() {
  const [command, ...args] = process.argv.slice(2);
  if (!command) {
    throw new Error("usage: node list-tools.cjs COMMAND ARGS...");
  }
  const transport = new StdioClientTransport({ command, args, cwd: process.cwd(), env: process.env, stderr: "inherit" });
  const client = new Client({ name: "kosong-host-test", version: "1" });
  await client.connect(transport);
  const { tools } = await client.listTools();
  const out = {
    server: client.getServerVersion(),
    tools: tools.map((t) => ({ name: t.name, annotations: t.annotations ?? null })),
  };
  process.stdout.write(JSON.stringify(out) + "\n");
  await client.close();
}

main().catch((err) => {
  console.error(String((err && err.stack) || err));
  process.exit(1);
});
