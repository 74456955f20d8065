// The client of the example: the official TypeScript SDK, connected to the
// replay that `mcpmock run` serves, over Streamable HTTP (MCPMOCK_URL) or
// over stdio (MCPMOCK_ARGV, the command to spawn, as a JSON array; the same
// as the shell words of MCPMOCK_COMMAND).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

export const transports = ["http", "stdio"];

export async function connect(transport) {
  const client = new Client({ name: "typescript-example", version: "1.0.0" });
  if (transport === "http") {
    const url = process.env.MCPMOCK_URL;
    if (!url) throw new Error("MCPMOCK_URL is not set: run this suite with mcpmock run");
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  } else {
    const argv = JSON.parse(process.env.MCPMOCK_ARGV ?? "null");
    if (!argv) throw new Error("MCPMOCK_ARGV is not set: run this suite with mcpmock run");
    await client.connect(new StdioClientTransport({ command: argv[0], args: argv.slice(1), env: process.env }));
  }
  return client;
}

// weather calls get_weather and returns its text, or "tool error: TEXT".
export async function weather(client, location) {
  const res = await client.callTool({ name: "get_weather", arguments: { location } });
  const text = res.content.map((c) => c.text).join("");
  return res.isError ? `tool error: ${text}` : text;
}
