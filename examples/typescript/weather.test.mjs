// The weather client against the recorded weather server, over both
// transports: `mcpmock run -c ../weather/testdata/weather.json -- npm test`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { connect, transports, weather } from "./client.mjs";

for (const transport of transports) {
  test(`get_weather over ${transport}`, async () => {
    const client = await connect(transport);
    try {
      assert.match(await weather(client, "New York"), /^Current weather in New York/);
      assert.match(await weather(client, "London"), /^Current weather in London/);
      assert.equal(await weather(client, "Atlantis"), "tool error: Failed to fetch weather data: API rate limit exceeded");
    } finally {
      await client.close();
    }
  });
}
