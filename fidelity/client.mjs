// The fidelity client: the TypeScript SDK's Client runs a fixed script of
// steps against one MCP server and prints one JSON object a line per step:
//
//	{"step": NAME, "result": WHAT_CAME_BACK, "server": [MESSAGES]}
//
// result is the step's answer (or {"error": {code, message, data}}). server
// lists the messages the server sent on its own between the end of the
// previous step and the end of this one, in the order they arrived:
// notifications ({"notification": method, "params"}) and requests
// ({"request": method, "params", "reply"}), which the client answers with
// fixed replies (roots, sampling, elicitation). A message has "before": true
// when it came before the step's answer or, for a step whose cause is a
// notification the client sends (initialized, roots/list_changed), before
// the client sent it; "resent": true when it is one the client had already
// seen in an earlier step (an SSE stream resumed by the SDK re-delivers it).
//
// A step ends once its answer has come, the server messages it waits for
// have come (at most WAIT ms) and no server message has come for SETTLE ms.
//
// Values that differ from run to run (session ids, server-made elicitation
// ids, task ids, timestamps, times of day in resource text, the level of a
// simulated log message) are NOT stripped here: fidelity/compare.go does
// that, so that the raw lines stay in the output directory and the rules
// have a unit test.
//
// Usage:
//
//	node client.mjs [--step REGEXP] stdio COMMAND [ARG...]
//	node client.mjs [--step REGEXP] http URL
//	node client.mjs [--step REGEXP] sse URL
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  EmptyResultSchema,
  GetTaskResultSchema,
  ListRootsRequestSchema,
  ListTasksResultSchema,
} from '@modelcontextprotocol/sdk/types.js';

const TIMEOUT = 5000; // ms for one request: a replay that never answers costs this much, not a minute
const SETTLE = 60; // ms without a server message that ends a step
const WAIT = 3000; // ms a step waits for a server message it expects

let argv = process.argv.slice(2);
let only = null;
if (argv[0] === '--step') {
  only = new RegExp(argv[1]);
  argv = argv.slice(2);
}
const [kind, ...rest] = argv;

let transport;
switch (kind) {
  case 'stdio':
    transport = new StdioClientTransport({ command: rest[0], args: rest.slice(1), stderr: 'inherit' });
    break;
  case 'http':
    transport = new StreamableHTTPClientTransport(new URL(rest[0]));
    break;
  case 'sse':
    transport = new SSEClientTransport(new URL(rest[0]));
    break;
  default:
    console.error('usage: node client.mjs [--step REGEXP] stdio COMMAND [ARG...] | http URL | sse URL');
    process.exit(2);
}

// What the server sent on its own since the current step began.
let seen = [];
let answered = false; // whether the current step's answer has come
let lastMessage = Date.now();
let waiters = [];
function saw(m) {
  if (!answered) m.before = true;
  seen.push(m);
  lastMessage = Date.now();
  for (const w of waiters) w();
}

let roots = [
  { uri: 'file:///fidelity/one', name: 'one' },
  { uri: 'file:///fidelity/two', name: 'two' },
];

const client = new Client(
  { name: 'mcpmock-fidelity', version: '1.0.0' },
  {
    capabilities: {
      roots: { listChanged: true },
      sampling: {},
      elicitation: { form: {}, url: {} },
    },
  },
);
// Every message the server sends on its own is seen as it arrives, before the
// SDK dispatches it: the SDK drops a progress notification that comes in the
// same read as its request's answer, and runs handlers later than it settles
// answers. A request's entry gets its reply when the handler answers.
const requests = new Map();
let inner;
// sent holds every server message of the earlier steps as it came: one seen
// again is not the server's doing but a resumed SSE stream's (the event store
// of server-everything's HTTP transport re-sends earlier events of every
// stream when the client resumes one); it is marked "resent".
const sent = new Set();
let sentThisStep = [];
const observe = (m, extra) => {
  const raw = JSON.stringify(m);
  const again = sent.has(raw) ? { resent: true } : {};
  sentThisStep.push(raw);
  if (m.method !== undefined && m.id === undefined) {
    saw({ notification: m.method, params: m.params, ...again });
  } else if (m.method !== undefined) {
    const entry = { request: m.method, params: m.params, ...again };
    requests.set(m.id, entry);
    saw(entry);
  }
  inner?.(m, extra);
};
// A step whose cause is a notification the client sends (trigger) counts as
// answered once the client sends it: "before" then marks a server message
// that came before its cause.
let trigger = null;
const send = transport.send.bind(transport);
transport.send = (m, o) => {
  if (trigger && m.method === trigger) answered = true;
  return send(m, o);
};
Object.defineProperty(transport, 'onmessage', {
  get: () => (inner ? observe : undefined),
  set: (f) => { inner = f; },
  configurable: true,
});
function answer(extra, reply) {
  const entry = requests.get(extra.requestId);
  if (entry) entry.reply = reply;
  requests.delete(extra.requestId);
  return reply;
}
client.setRequestHandler(ListRootsRequestSchema, async (r, extra) => answer(extra, { roots }));
client.setRequestHandler(CreateMessageRequestSchema, async (r, extra) => {
  const reply = {
    role: 'assistant',
    content: { type: 'text', text: 'A fixed answer from the fidelity client.' },
    model: 'fidelity-model',
    stopReason: 'endTurn',
  };
  return answer(extra, reply);
});
client.setRequestHandler(ElicitRequestSchema, async (r, extra) => {
  let reply;
  if (r.params.mode === 'url') {
    reply = { action: 'accept' };
  } else if (JSON.stringify(r.params).includes('clarif') || !r.params.requestedSchema?.properties?.email) {
    // simulate-research-query asks what an ambiguous topic means.
    const props = r.params.requestedSchema?.properties ?? {};
    const content = {};
    for (const [k, v] of Object.entries(props)) {
      content[k] = v.enum ? v.enum[0] : v.oneOf ? v.oneOf[0].const : v.type === 'boolean' ? true : 'the fidelity meaning';
    }
    reply = { action: 'accept', content };
  } else {
    reply = {
      action: 'accept',
      content: {
        name: 'Ada Lovelace',
        check: true,
        firstLine: 'It was a dark and stormy night.',
        email: 'ada@example.com',
        homepage: 'https://example.com/ada',
        birthdate: '1815-12-10',
        integer: 42,
        number: 3.14,
        untitledSingleSelectEnum: 'Joey',
      },
    };
  }
  return answer(extra, reply);
});

function errorOf(e) {
  const out = { message: String(e?.message ?? e) };
  if (e?.code !== undefined) out.code = e.code;
  if (e?.data !== undefined) out.data = e.data;
  return out;
}

// until waits until pred() holds for the messages seen, or ms pass.
function until(pred, ms) {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      waiters = waiters.filter((w) => w !== check);
      resolve();
    }
    function check() {
      if (pred(seen)) done();
    }
    waiters.push(check);
    check();
  });
}

// settle waits until no server message has come for SETTLE ms.
async function settle() {
  for (;;) {
    const quiet = Date.now() - lastMessage;
    if (quiet >= SETTLE) return;
    await new Promise((r) => setTimeout(r, SETTLE - quiet));
  }
}

const logged = (text) => (ms) => ms.some((m) => m.notification === 'notifications/message' && String(m.params?.data).includes(text));
const opts = (extra = {}) => ({ timeout: TIMEOUT, ...extra });
const call = (name, args = {}, extra = {}) => client.callTool({ name, arguments: args }, CallToolResultSchema, opts(extra));

// The script. Each step returns its result; wait, when given, is a predicate
// on the server's messages the step waits for (at most WAIT ms) after its
// answer. A step named initialize always runs: the others need a session.
let taskId = null;
const steps = [
  ['initialize', async () => {
    await client.connect(transport, opts());
    return {
      serverInfo: client.getServerVersion(),
      capabilities: client.getServerCapabilities(),
      instructions: client.getInstructions(),
    };
  }, logged('Roots updated'), 'notifications/initialized'],
  ['tools/list', () => client.listTools({}, opts())],
  ['logging/setLevel debug', () => client.setLoggingLevel('debug', opts())],
  ['ping', () => client.ping(opts())],
  ['tools/call echo', () => call('echo', { message: 'hello fidelity' })],
  ['tools/call get-sum', () => call('get-sum', { a: 19, b: 23 })],
  ['tools/call get-tiny-image', () => call('get-tiny-image')],
  ['tools/call get-annotated-message error', () => call('get-annotated-message', { messageType: 'error', includeImage: false })],
  ['tools/call get-annotated-message success+image', () => call('get-annotated-message', { messageType: 'success', includeImage: true })],
  ['tools/call get-resource-links', () => call('get-resource-links', { count: 3 })],
  ['tools/call get-resource-reference text', () => call('get-resource-reference', { resourceType: 'Text', resourceId: 1 })],
  ['tools/call get-resource-reference blob', () => call('get-resource-reference', { resourceType: 'Blob', resourceId: 2 })],
  ['tools/call get-structured-content', () => call('get-structured-content', { location: 'Chicago' })],
  ['tools/call trigger-long-running-operation', () =>
    call('trigger-long-running-operation', { duration: 1, steps: 3 }, { onprogress: () => {} })],
  ['tools/call get-roots-list', () => call('get-roots-list')],
  ['roots changed', async () => {
    roots = [{ uri: 'file:///fidelity/three', name: 'three' }];
    await client.sendRootsListChanged();
    return {};
  }, logged('Roots updated: 1'), 'notifications/roots/list_changed'],
  ['tools/call get-roots-list after change', () => call('get-roots-list')],
  ['tools/call trigger-sampling-request', () => call('trigger-sampling-request', { prompt: 'Say something fixed', maxTokens: 50 })],
  ['tools/call trigger-elicitation-request', () => call('trigger-elicitation-request')],
  ['tools/call trigger-url-elicitation own id', () =>
    call('trigger-url-elicitation', { url: 'https://example.com/authorize', elicitationId: 'my-own-id-42' })],
  ['tools/call trigger-url-elicitation server id', () => call('trigger-url-elicitation', { url: 'https://example.com/other' })],
  ['tools/call trigger-url-elicitation error path', () =>
    call('trigger-url-elicitation', { url: 'https://example.com/third', elicitationId: 'err-path-7', errorPath: true })],
  ['tools/call trigger-url-elicitation retry', () =>
    call('trigger-url-elicitation', { url: 'https://example.com/third', elicitationId: 'err-path-7', errorPath: true })],
  ['tools/call toggle-simulated-logging on', () => call('toggle-simulated-logging'),
    (ms) => ms.some((m) => m.notification === 'notifications/message' && /level[- ]message/.test(String(m.params?.data)))],
  ['tools/call toggle-simulated-logging off', () => call('toggle-simulated-logging')],
  ['resources/list', async () => {
    const pages = [];
    let cursor;
    do {
      const page = await client.listResources(cursor ? { cursor } : {}, opts());
      pages.push(page);
      cursor = page.nextCursor;
    } while (cursor && pages.length < 20);
    return { pages };
  }],
  ['resources/templates/list', () => client.listResourceTemplates({}, opts())],
  ['resources/read static document', () => client.readResource({ uri: 'demo://resource/static/document/features.md' }, opts())],
  ['resources/read dynamic text', () => client.readResource({ uri: 'demo://resource/dynamic/text/1' }, opts())],
  ['resources/read dynamic blob', () => client.readResource({ uri: 'demo://resource/dynamic/blob/2' }, opts())],
  ['resources/read unknown', () => client.readResource({ uri: 'demo://resource/nowhere/9' }, opts())],
  ['resources/subscribe', () => client.subscribeResource({ uri: 'demo://resource/dynamic/text/1' }, opts()), logged('Subscribe Resource request')],
  ['tools/call toggle-subscriber-updates on', () => call('toggle-subscriber-updates'),
    (ms) => ms.some((m) => m.notification === 'notifications/resources/updated')],
  ['tools/call toggle-subscriber-updates off', () => call('toggle-subscriber-updates')],
  ['resources/unsubscribe', () => client.unsubscribeResource({ uri: 'demo://resource/dynamic/text/1' }, opts()), logged('Unsubscribe Resource request')],
  ['tools/call gzip-file-as-resource', () =>
    call('gzip-file-as-resource', { name: 'fidelity.txt.gz', data: 'data:text/plain;base64,' + Buffer.from('fidelity '.repeat(20)).toString('base64') }),
    (ms) => ms.some((m) => m.notification === 'notifications/resources/list_changed')],
  ['resources/read session resource', () => client.readResource({ uri: 'demo://resource/session/fidelity.txt.gz' }, opts())],
  ['prompts/list', () => client.listPrompts({}, opts())],
  ['prompts/get simple-prompt', () => client.getPrompt({ name: 'simple-prompt' }, opts())],
  ['prompts/get args-prompt', () => client.getPrompt({ name: 'args-prompt', arguments: { city: 'Paris', state: 'Texas' } }, opts())],
  ['prompts/get resource-prompt', () => client.getPrompt({ name: 'resource-prompt', arguments: { resourceType: 'Text', resourceId: '3' } }, opts())],
  ['prompts/get unknown', () => client.getPrompt({ name: 'no-such-prompt' }, opts())],
  ['completion/complete prompt argument', () =>
    client.complete({ ref: { type: 'ref/prompt', name: 'completable-prompt' }, argument: { name: 'department', value: 'E' } }, opts())],
  ['completion/complete with context', () =>
    client.complete({
      ref: { type: 'ref/prompt', name: 'completable-prompt' },
      argument: { name: 'name', value: '' },
      context: { arguments: { department: 'Engineering' } },
    }, opts())],
  ['completion/complete resource template', () =>
    client.complete({ ref: { type: 'ref/resource', uri: 'demo://resource/dynamic/text/{resourceId}' }, argument: { name: 'resourceId', value: '' } }, opts())],
  ['tools/call unknown tool', () => call('no-such-tool')],
  ['tools/call get-sum bad arguments', () => call('get-sum', { a: 'one' })],
  ['tasks: ambiguous query with elicitation', async () => {
    const r = await client.request({ method: 'tools/call', params: { name: 'simulate-research-query', arguments: { topic: 'python', ambiguous: true }, task: { ttl: 60000 } } },
      CreateTaskResultSchema, opts());
    taskId = r.task?.taskId;
    return r;
  }, (ms) => ms.some((m) => m.notification === 'notifications/tasks/status')],
  ['tasks/result ambiguous', () => client.request({ method: 'tasks/result', params: { taskId: taskId } }, CallToolResultSchema, opts({ timeout: 15000 }))],
  ['tasks/get', () => client.request({ method: 'tasks/get', params: { taskId } }, GetTaskResultSchema, opts())],
  ['tasks/list', () => client.request({ method: 'tasks/list', params: {} }, ListTasksResultSchema, opts())],
  ['ping at the end', () => client.ping(opts())],
];

for (const [name, fn, wait, cause] of steps) {
  if (only && name !== 'initialize' && !only.test(name)) continue;
  answered = false;
  trigger = cause ?? null;
  let result;
  try {
    result = await fn();
  } catch (e) {
    result = { error: errorOf(e) };
    if (name === 'initialize') {
      console.log(JSON.stringify({ step: name, result, server: seen }));
      process.exit(1);
    }
  }
  answered = true;
  if (wait) await until(wait, WAIT);
  await settle();
  console.log(JSON.stringify({ step: name, result: result ?? null, server: seen }));
  seen = [];
  for (const raw of sentThisStep) sent.add(raw);
  sentThisStep = [];
}
try {
  if (kind === 'http') await transport.terminateSession();
} catch {
  // a server that does not support DELETE answers 405; nothing to report
}
await client.close();
process.exit(0);
