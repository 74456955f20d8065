// A suite that passes although the mock could not answer it: it asks for a
// city the recording does not hold and accepts any answer. `mcpmock run`
// fails the run anyway (exit 1), and its JUnit file names the miss.
import { test } from "node:test";
import assert from "node:assert/strict";
import { connect } from "./client.mjs";

test("a call the cassette does not hold", async () => {
  const client = await connect("http");
  try {
    await assert.rejects(client.callTool({ name: "get_weather", arguments: { location: "Paris" } }));
  } finally {
    await client.close();
  }
});
