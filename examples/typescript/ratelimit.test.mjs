// A client that retries a rate-limited call, against the recording with the
// rate-limit overlay on top (its third get_weather call fails):
// `mcpmock run -c ../weather/testdata/weather.json --overlay ../ratelimit/ratelimit.json -- node --test ratelimit.test.mjs`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { connect, transports, weather } from "./client.mjs";

async function weatherWithRetry(client, location) {
  for (let attempt = 1; ; attempt++) {
    const text = await weather(client, location);
    if (!text.includes("rate limit exceeded") || attempt === 3) return { text, attempt };
  }
}

for (const transport of transports) {
  test(`the third call is rate-limited and retried, over ${transport}`, async () => {
    const client = await connect(transport);
    try {
      assert.match((await weatherWithRetry(client, "New York")).text, /^Current weather in New York/);
      assert.match((await weatherWithRetry(client, "London")).text, /^Current weather in London/);
      const third = await weatherWithRetry(client, "New York");
      assert.equal(third.attempt, 2, "the rate-limited call was retried once");
      assert.match(third.text, /^Current weather in New York/);
    } finally {
      await client.close();
    }
  });
}
