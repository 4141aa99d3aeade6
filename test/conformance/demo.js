// Drives the alisio-lsp daemon over stdio the way an editor does, and prints what an editor would show: the
// status-bar meter (alisio/status), the events (alisio/event) and the progress ($/progress). Used by
// scripts/demo.sh; needs ALISIO_BIN, ALISIO_PROVIDER_URL and a workspace directory as the first argument.
'use strict';
const cp = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const rpc = require('vscode-languageserver-protocol/node');

async function main() {
  const workspace = process.argv[2];
  const data = fs.mkdtempSync(path.join(os.tmpdir(), 'alisio-demo-daemon-'));
  const config = path.join(data, 'alisio.json');
  fs.writeFileSync(config, JSON.stringify({ provider: { kind: 'openai', baseURL: process.env.ALISIO_PROVIDER_URL, model: 'alisio-test' } }));
  const proc = cp.spawn(process.env.ALISIO_BIN, ['--data-dir', data, '--config', config, 'serve'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const conn = rpc.createProtocolConnection(new rpc.StreamMessageReader(proc.stdout), new rpc.StreamMessageWriter(proc.stdin));
  let lastMeter = '';
  conn.onNotification('alisio/status', (s) => {
    const window = s.windowSource.startsWith('models') ? "from the provider's model list" : s.windowSource;
    const reported = s.lastReportedTokens ? `; the provider counted ${s.lastReportedTokens} for the last request, so by its count about ${s.calibratedTokens}` : '';
    const meter = `[meter] ${s.usedChars} chars of conversation and instructions (limit ${s.hardLimit}) + ${s.toolsChars} of tool definitions · ` +
      `the request is about ${s.estimatedTokens} tokens at 4 chars a token${reported} · ` +
      `window ${s.window} tokens (${window}) · compaction starts at ${Math.round(100 * s.threshold)}% of it: the request is at ` +
      `${(100 * s.windowFraction).toFixed(1)}% of that point${s.compacting ? ' · compacting now' : ''}`;
    if (meter !== lastMeter) console.log(meter);
    lastMeter = meter;
  });
  conn.onNotification('alisio/event', (e) => {
    if (e.type === 'delta') return;
    const detail = e.type === 'tool_call' ? `${e.name} ${e.arguments}` : e.type === 'tool_result' ? `${e.name} → ${e.chars} chars${e.isError ? ' (error)' : ''}` : e.type === 'reply' ? e.text : e.message || '';
    console.log(`[event] ${e.type} ${detail}`);
  });
  conn.onRequest('window/workDoneProgress/create', () => null);
  conn.onNotification('window/showMessage', (m) => console.log(`[message] ${m.message}`));
  const token = 'demo';
  conn.onProgress(rpc.WorkDoneProgress.type, token, (v) => console.log(`[progress] ${v.kind}${v.title ? ' ' + v.title : ''}${v.message ? ': ' + v.message : ''}`));
  conn.listen();

  const init = await conn.sendRequest('initialize', { processId: process.pid, rootUri: 'file://' + workspace,
    capabilities: { window: { workDoneProgress: true } } });
  console.log(`[initialize] ${init.serverInfo.name} · methods: ${init.capabilities.experimental.alisio.methods.join(', ')}`);
  await conn.sendNotification('initialized', {});
  const res = await conn.sendRequest('alisio/prompt', { text: 'Add a farewell next to the greeting', workDoneToken: token });
  console.log(`[prompt] ${res.modelCalls} model calls → ${res.reply}`);
  await new Promise((r) => setTimeout(r, 200));
  const ck = await conn.sendRequest('alisio/checkpoint', { session: res.session });
  console.log(`[checkpoint] ${ck.checkpoint ? ck.replacedMessages + ' messages replaced' : 'none yet (the session is small)'}`);
  await conn.sendRequest('shutdown');
  await conn.sendNotification('exit');
  const code = await new Promise((r) => proc.once('exit', r));
  console.log(`[exit] code ${code}`);
  conn.dispose();
  fs.rmSync(data, { recursive: true, force: true });
}

main().catch((e) => { console.error(e); process.exit(1); });
