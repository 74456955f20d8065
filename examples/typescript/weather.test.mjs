// A TypeScript-SDK client suite run hermetically by mcpmock run: the
// weather cassette of examples/weather is served on MCPMOCK_URL (Streamable
// HTTP) and through MCPMOCK_ARGV (a stdio server to spawn).
//
//	mcpmock run -c weather=../weather/testdata/weather.json -- node --test
//
// With MCPMOCK_EXAMPLE=ratelimit (and --overlay ../ratelimit/ratelimit.json)
// the third call fails with the rate-limit tool error and the client
// retries; with MCPMOCK_EXAMPLE=miss one call asks for a city the cassette
// does not hold, so the run fails (exit 1) and names it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const example = process.env.MCPMOCK_EXAMPLE ?? '';

function transports() {
  const [command, ...args] = JSON.parse(process.env.MCPMOCK_ARGV);
  return {
    http: () => new StreamableHTTPClientTransport(new URL(process.env.MCPMOCK_URL)),
    stdio: () => new StdioClientTransport({ command, args }),
  };
}

async function connect(transport) {
  const client = new Client({ name: 'weather-ts', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

// weather calls get_weather, retrying the rate-limit tool error.
async function weather(client, location) {
  for (let attempt = 1; attempt <= 4; attempt++) {
    const res = await client.callTool({ name: 'get_weather', arguments: { location } });
    const text = res.content.map((c) => c.text).join('');
    if (!res.isError) return { text, attempts: attempt };
    if (!text.includes('rate limit')) throw new Error(text);
  }
  throw new Error('still rate limited');
}

for (const [name, make] of Object.entries(transports())) {
  test(`get_weather over ${name}`, async () => {
    const client = await connect(make());
    try {
      const ny = await weather(client, 'New York');
      assert.match(ny.text, /New York/);
      const london = await weather(client, 'London');
      assert.match(london.text, /London/);
      if (example === 'ratelimit') {
        // The overlay fails the third call; the client retries it.
        const again = await weather(client, 'New York');
        assert.equal(again.attempts, 2);
      }
      if (example === 'miss') {
        // Not in the cassette: the mock answers with an explained error,
        // and mcpmock run fails even though this test passes.
        await assert.rejects(client.callTool({ name: 'get_weather', arguments: { location: 'Boston' } }));
      }
    } finally {
      await client.close();
    }
  });
}
