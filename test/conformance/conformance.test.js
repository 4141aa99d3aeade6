// Conformance suite: the built alisio-lsp daemon driven over stdio by the real vscode-languageserver-protocol
// client, as VS Code's language client would. Run through scripts/test.sh, which builds the binaries and sets
// ALISIO_BIN and ALISIO_TESTPROVIDER.
'use strict';
const test = require('node:test');
const assert = require('node:assert');
const cp = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const rpc = require('vscode-languageserver-protocol/node');

const BIN = process.env.ALISIO_BIN;
const PROVIDER = process.env.ALISIO_TESTPROVIDER;
assert.ok(BIN && PROVIDER, 'set ALISIO_BIN and ALISIO_TESTPROVIDER (scripts/test.sh does)');

// made lists the temp dirs of this run; they go when it ends, and the shared daemons serving them with them
// (a daemon leaves when its data directory is removed).
const made = [];
process.on('exit', () => made.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

function tmp(prefix) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(dir);
  return dir;
}

// startProvider runs alisio-testprovider with a script and resolves to its base URL.
function startProvider(t, script) {
  const dir = tmp('alisio-provider-');
  const file = path.join(dir, 'script.json');
  fs.writeFileSync(file, JSON.stringify(script));
  const proc = cp.spawn(PROVIDER, ['--script', file], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.after(() => proc.kill());
  return new Promise((resolve, reject) => {
    proc.stdout.once('data', (d) => resolve(d.toString().trim()));
    proc.once('error', reject);
  });
}

// startDaemon spawns the daemon and connects the protocol client to its stdio.
function startDaemon(t, config) {
  const data = tmp('alisio-data-');
  const args = ['--data-dir', data, '--log-level', 'debug'];
  if (config) {
    const file = path.join(data, 'alisio.json');
    fs.writeFileSync(file, JSON.stringify(config));
    args.push('--config', file);
  }
  const proc = cp.spawn(BIN, [...args, 'serve'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  proc.stderr.on('data', (d) => { stderr += d.toString(); });
  const conn = rpc.createProtocolConnection(new rpc.StreamMessageReader(proc.stdout), new rpc.StreamMessageWriter(proc.stdin));
  const notes = [];
  conn.onNotification((method, params) => notes.push({ method, params }));
  conn.onRequest('window/workDoneProgress/create', () => null);
  conn.onRequest('workspace/configuration', () => [null]);
  conn.onRequest('client/registerCapability', () => null);
  conn.listen();
  const exited = new Promise((resolve) => proc.once('exit', (code) => resolve(code)));
  t.after(() => { conn.dispose(); proc.kill(); });
  return { conn, notes, proc, exited, stderr: () => stderr };
}

async function initialize(d, workspace, initializationOptions) {
  const res = await d.conn.sendRequest('initialize', {
    processId: process.pid, rootUri: 'file://' + workspace, initializationOptions,
    capabilities: { window: { workDoneProgress: true }, workspace: { configuration: false } },
  });
  await d.conn.sendNotification('initialized', {});
  return res;
}

async function waitFor(cond, what, ms = 10000) {
  const until = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > until) throw new Error('timed out waiting for ' + what);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('lifecycle, error codes and exit status', async (t) => {
  const d = startDaemon(t);
  await assert.rejects(d.conn.sendRequest('alisio/sessions', {}), (e) => e.code === -32002);
  const res = await initialize(d, tmp('alisio-ws-'));
  assert.ok(res.capabilities.experimental.alisio.methods.includes('alisio/prompt'));
  assert.strictEqual(res.serverInfo.name, 'alisio-lsp');
  await assert.rejects(d.conn.sendRequest('textDocument/definition', {}), (e) => e.code === -32601);
  await assert.rejects(d.conn.sendRequest('alisio/session', { session: 'x', bogus: 1 }), (e) => e.code === -32602);
  await d.conn.sendRequest('shutdown');
  await d.conn.sendNotification('exit');
  assert.strictEqual(await d.exited, 0);
  assert.ok(!/panic/.test(d.stderr()), d.stderr());
});

test('exit without shutdown exits 1', async (t) => {
  const d = startDaemon(t);
  await initialize(d, tmp('alisio-ws-'));
  await d.conn.sendNotification('exit');
  assert.strictEqual(await d.exited, 1);
});

test('a whole session: prompt, tools, events, status, progress, compact, checkpoint', async (t) => {
  const replies = [];
  for (let i = 0; i < 8; i++) {
    replies.push({ toolCalls: [{ id: 'call_' + i, name: 'run_command', arguments: JSON.stringify({ command: "head -c 2500 /dev/zero | tr '\\0' w" }) }] });
  }
  replies.push({ text: 'All done.' });
  const url = await startProvider(t, { replies });
  const d = startDaemon(t, { provider: { kind: 'openai', baseURL: url, model: 'alisio-test' }, limits: { maxContextChars: 16000 } });
  const ws = tmp('alisio-ws-');
  await initialize(d, ws);
  const { session } = await d.conn.sendRequest('alisio/newSession', { title: 'conformance' });
  const token = 'prompt-progress';
  const progress = [];
  d.conn.onProgress(rpc.WorkDoneProgress.type, token, (value) => progress.push(value.kind));
  const res = await d.conn.sendRequest('alisio/prompt', { session, text: 'Run it. Never push to main.', workDoneToken: token });
  assert.strictEqual(res.reply, 'All done.');
  const events = d.notes.filter((n) => n.method === 'alisio/event').map((n) => n.params);
  assert.ok(events.every((e) => e.v === 1 && e.session === session));
  const types = new Set(events.map((e) => e.type));
  for (const want of ['tool_call', 'tool_result', 'compaction_started', 'compaction_completed', 'reply']) {
    assert.ok(types.has(want), `no ${want} event in ${[...types]}`);
  }
  await waitFor(() => progress.includes('end'), 'the end of the progress');
  assert.strictEqual(progress[0], 'begin');
  assert.strictEqual(progress[progress.length - 1], 'end');
  await waitFor(() => d.notes.some((n) => n.method === 'alisio/status' && n.params.session === session && n.params.hardLimit === 16000), 'a status');
  const status = await d.conn.sendRequest('alisio/status', { session });
  assert.ok(status.usedChars > 0 && status.windowSource && status.estimatedTokens > 0);

  const ck = await d.conn.sendRequest('alisio/checkpoint', { session });
  assert.ok(ck.replacedMessages > 0);
  assert.ok(ck.checkpoint.instructions.join(' ').includes('Never push to main'));
  const { sessions } = await d.conn.sendRequest('alisio/sessions', {});
  assert.strictEqual(sessions[0].id, session);
  const tools = await d.conn.sendRequest('alisio/tools', {});
  assert.strictEqual(tools.sources[0].source, 'built-in');
  await d.conn.sendRequest('shutdown');
  await d.conn.sendNotification('exit');
  assert.strictEqual(await d.exited, 0);
});

test('cancellation with the client token ends a running prompt', async (t) => {
  const url = await startProvider(t, { replies: [{ text: 'slow', delayMs: 20000 }] });
  const d = startDaemon(t, { provider: { kind: 'openai', baseURL: url, model: 'alisio-test' } });
  await initialize(d, tmp('alisio-ws-'));
  const { session } = await d.conn.sendRequest('alisio/newSession', {});
  const source = new rpc.CancellationTokenSource();
  const started = Date.now();
  const pending = d.conn.sendRequest('alisio/prompt', { session, text: 'hello' }, source.token);
  await new Promise((r) => setTimeout(r, 300));
  const st = await d.conn.sendRequest('alisio/status', { session });
  assert.strictEqual(st.session, session);
  source.cancel();
  await assert.rejects(pending);
  assert.ok(Date.now() - started < 10000, 'the cancel did not stop the prompt');
});

test('invalid settings are reported with the field, the value and the range', async (t) => {
  const d = startDaemon(t);
  await initialize(d, tmp('alisio-ws-'), { alisio: { compaction: { keepTurns: 99 } } });
  await waitFor(() => d.notes.some((n) => n.method === 'window/showMessage' && /compaction\.keepTurns: 99 \(allowed: 0–20\)/.test(n.params.message)), 'the error message');
});
