// The built extension (dist/extension.js) under plain Node with a fake `vscode` module: the real
// vscode-languageclient inside the bundle starts the real alisio-lsp and talks to it; the status bar shows
// the meter; Alisio: Compact with a focus reaches the summarizer of the local test provider and changes the
// meter; a missing server gives a clear message with a way to install it.
const test = require('node:test');
const assert = require('node:assert');
const Module = require('node:module');
const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { tmpdir } = require('./tmp.js');
const { create, webviewView } = require('./fake-vscode.js');

const BIN = process.env.ALISIO_BIN;
const PROVIDER = process.env.ALISIO_TESTPROVIDER;

// loadExtension loads a fresh copy of the bundle with `vscode` resolved to fake.
function loadExtension(fake) {
  const bundle = path.join(__dirname, '..', 'dist', 'extension.js');
  const resolve = Module._resolveFilename;
  Module._resolveFilename = function (request, ...rest) {
    return request === 'vscode' ? 'vscode' : resolve.call(this, request, ...rest);
  };
  require.cache.vscode = { id: 'vscode', filename: 'vscode', loaded: true, exports: fake };
  delete require.cache[bundle];
  try {
    return require(bundle);
  } finally {
    Module._resolveFilename = resolve;
  }
}

async function until(what, cond, ms = 20000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const v = await cond();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('timed out waiting for ' + what);
}

function startProvider(script) {
  const file = path.join(tmpdir('alisio-vsc-'), 'script.json');
  fs.writeFileSync(file, JSON.stringify(script));
  const proc = spawn(PROVIDER, ['--script', file]);
  return new Promise((resolve, reject) => {
    proc.stdout.once('data', (d) => resolve({ url: String(d).trim(), proc }));
    proc.once('error', reject);
  });
}

test('the bundle drives the real daemon: meter, Alisio: Compact with a focus, the checkpoint, the context', { skip: !BIN || !PROVIDER ? 'set ALISIO_BIN and ALISIO_TESTPROVIDER (scripts/test.sh does)' : false }, async () => {
  const { url, proc } = await startProvider({ replies: [
    { toolCalls: [{ id: 'call_b', name: 'run_command', arguments: JSON.stringify({ command: "head -c 6000 /dev/zero | tr '\\0' b" }) }] },
    { text: 'hello from the test provider' },
  ] });
  const ws = tmpdir('alisio-ws-');
  const data = tmpdir('alisio-data-');
  fs.writeFileSync(path.join(ws, 'main.go'), 'package main\n');
  const settings = { alisio: { serverPath: BIN, dataDir: data, limits: { maxContextChars: 20000 }, mcpServers: { docs: { command: '/nonexistent/docs-mcp' } },
    provider: { kind: 'openai', baseURL: url, model: 'alisio-test' } } };
  // The extension announces that it answers approvals, so the daemon asks before the command runs: Run.
  const answers = { inputBox: 'parser', warningChoice: (text, ...items) => (items.includes('Run') ? 'Run' : undefined) };
  const { vscode, shown, statusItem, commands } = create(settings, ws, answers);
  const ext = loadExtension(vscode);
  const context = { subscriptions: [], extensionPath: path.join(__dirname, '..'), extensionUri: vscode.Uri.file(path.join(__dirname, '..')) };
  try {
    await ext.activate(context);
    assert.ok(commands.has('alisio.compact') && commands.has('alisio.showContext'));
    // The meter shows as soon as the server runs, before any session, and opens the menu.
    assert.ok(statusItem.visible && statusItem.text === '$(pulse) Alisio –' && statusItem.command === 'alisio.menu', statusItem.text);
    await vscode.commands.executeCommand('alisio.showCheckpoint');
    assert.match(shown.info.at(-1), /no session in this workspace yet, so no checkpoint/);
    // The chat view: a strict CSP page; it asks for the session when ready, then runs a turn sent from it.
    const view = webviewView();
    shown.viewProviders['alisio.chat'].resolveWebviewView(view);
    assert.match(view.webview.html, /Content-Security-Policy" content="default-src 'none'; style-src vscode-webview:\/\/fake; img-src vscode-webview:\/\/fake data:; script-src 'nonce-[A-Za-z0-9+/=]+';"/);
    assert.doesNotMatch(view.webview.html, /unsafe-inline|unsafe-eval/);
    assert.ok(view.webview.options.enableScripts);
    view.send({ type: 'ready' });
    await until('the empty session in the chat', () => view.posted.find((m) => m.type === 'session'));
    view.send({ type: 'send', text: 'run the build and say hello' });
    await until('the turn to end in the chat', () => view.posted.find((m) => m.type === 'done') && view.posted.filter((m) => m.type === 'session').length >= 2);
    const types = view.posted.map((m) => m.type);
    for (const t of ['turn', 'tool_call', 'tool_result', 'delta', 'done']) {
      assert.ok(types.includes(t), `the chat did not get ${t}: ${types}`);
    }
    assert.ok(types.indexOf('turn') < types.indexOf('tool_call') && types.indexOf('tool_call') < types.lastIndexOf('delta'), types.join(','));
    const last = view.posted.filter((m) => m.type === 'session').at(-1);
    assert.deepStrictEqual(last.messages.map((m) => m.role), ['user', 'assistant', 'tool', 'assistant']);
    // The 6,012-char output, capped for a 20,000-char budget at 2,000 chars (its head and tail, and a note).
    assert.ok(shown.warning.some((w) => w.startsWith("Alisio wants to run: head -c 6000")), `no question before the command: ${shown.warning}`);
    const chars = view.posted.find((m) => m.type === 'tool_result').chars;
    assert.ok(chars > 2000 && chars < 2100, `tool result of ${chars} chars`);
    assert.match(shown.outputs['Alisio: Agent'], /→ run_command[\s\S]*hello from the test provider/);
    // The turn went to the chat as it streamed.
    assert.ok(view.posted.find((m) => m.type === 'delta' && /hello/.test(m.text)));
    // The meter of the finished turn: the prompt, the call, its result and the reply.
    const before = await until('the meter of the whole turn', () => statusItem.tooltip && statusItem.tooltip.value.includes('(4 messages)') && statusItem.text);
    assert.ok(statusItem.visible && statusItem.tooltip.value.includes('tokens') && statusItem.tooltip.isTrusted);
    await vscode.commands.executeCommand('alisio.compact');
    await until('the compaction message', () => shown.info.find((m) => m.startsWith('Alisio: compacted')));
    const after = await until('the meter after the compaction', () => /\((1|2|3) messages\)/.test(statusItem.tooltip.value) && /Alisio \S+ [\d.]+k?\/[\d.]+k?$/.test(statusItem.text) && statusItem.text);
    // "Alisio ▰▱▱│▱ 2.7k/20k": tokens of the window before the slash.
    const tokens = (text) => { const [, n, k] = text.match(/ ([\d.]+)(k?)\//); return parseFloat(n) * (k ? 1000 : 1); };
    assert.ok(tokens(after) < tokens(before), `${before} → ${after}`);
    const requests = await (await fetch(url.replace(/\/v1$/, '') + '/v1/alisio/requests')).json();
    // (Asked for standalone, or in the suffix form at the end of the agent's own request: the focus is in the messages.)
    assert.ok(requests.some((r) => JSON.stringify(r.messages).includes('focus on: parser')), 'the focus did not reach the summarizer');
    // Compacting again right away finds nothing to summarize: one message says so, not two.
    const [infos, errors] = [shown.info.length, shown.error.length];
    await vscode.commands.executeCommand('alisio.compact');
    await until('the skipped compaction said', () => shown.info.length + shown.warning.length > infos);
    assert.strictEqual(shown.error.length, errors, `an error besides the skip: ${shown.error.at(-1)}`);
    await vscode.commands.executeCommand('alisio.showCheckpoint');
    assert.match(shown.documents.at(-1), /# Checkpoint[\s\S]*## Goal/);
    await vscode.commands.executeCommand('alisio.showContext');
    assert.match(shown.previews.at(-1), /checkpoint[\s\S]*tool catalog: built-in/, 'Show Context opens rendered, in the Markdown preview');
    // While it is open (its preview holds the document), it follows the session: the undo below redraws it.
    const contextUri = vscode.Uri.parse('alisio:context.md');
    vscode.workspace.textDocuments.push({ uri: contextUri });
    const contextText = async () => (await vscode.workspace.openTextDocument(contextUri)).getText();
    const contextBefore = await contextText();
    // Alisio: Edit Checkpoint opens the checkpoint as a JSON document; a save the daemon refuses fails with its
    // words (VS Code keeps the text); a good one is stored, and Alisio: Undo Compaction puts the one before back.
    await vscode.commands.executeCommand('alisio.editCheckpoint');
    const doc = shown.documents.at(-1);
    assert.match(doc, /^\{\n  "goal": /);
    const uri = shown.opened.at(-1);
    assert.match(uri.path, /^\/[0-9a-f-]+\/alisio-checkpoint\.json$/);
    const files = shown.fileSystems['alisio-checkpoint'];
    await assert.rejects(files.writeFile(uri, new TextEncoder().encode('{"goal": 1}')), /goal: got number, want string; instructions is missing[\s\S]*Nothing was saved/);
    await assert.rejects(files.writeFile(uri, new TextEncoder().encode('{"goal": ')), /JSON syntax error at line 1, column 9/);
    const edited = { ...JSON.parse(doc), goal: 'Edited in VS Code' };
    await files.writeFile(uri, new TextEncoder().encode(JSON.stringify(edited, null, 2)));
    assert.match(shown.info.at(-1), /checkpoint saved/);
    assert.match(new TextDecoder().decode(await files.readFile(uri)), /"goal": "Edited in VS Code"/);
    await vscode.commands.executeCommand('alisio.undoCompaction');
    assert.match(shown.info.at(-1), /^Alisio: Undid the last checkpoint edit \(saves in a row, with no message between them, are one edit\): .* Undo again \(Alisio: Undo Compaction\) to undo the one before\.$/);
    await vscode.commands.executeCommand('alisio.undoCompaction'); // the compaction itself: 4 messages again
    // The checkpoint is gone with its compaction: an open Edit Checkpoint document is shown as deleted.
    assert.throws(() => files.stat(uri), /no checkpoint any more/);
    await until('Show Context redrawn after the undo', async () => (await contextText()) !== contextBefore, 10000);
    assert.match(await contextText(), /What fills the context/);
    // Alisio: Show Tools lists the MCP server with its problem; picking it disables it in the settings.
    let offered;
    answers.quickPick = (items) => { offered = items; return items.find((i) => i.toggle && i.toggle.name === 'docs'); };
    await vscode.commands.executeCommand('alisio.showTools');
    assert.match(offered.find((i) => i.label.endsWith('docs')).detail, /docs-mcp/);
    assert.deepStrictEqual(shown.updates.at(-1), { section: 'alisio', key: 'mcpServers', value: { docs: { command: '/nonexistent/docs-mcp', disabled: true } }, target: 1 });
    assert.match(shown.info.at(-1), /MCP server docs disabled/);
    assert.strictEqual(shown.untitled || 0, 0, 'Show Context and Show Checkpoint must open read-only documents, not Untitled tabs');
    assert.ok(shown.error.every((m) => !/alisio\/|invalid params/.test(m)), shown.error.join('\n'));
  } finally {
    await ext.deactivate().catch(() => {});
    proc.kill();
    // The shared daemon leaves when its data directory goes.
    for (const d of [ws, data]) fs.rmSync(d, { recursive: true, force: true });
  }
});

test('a window without a folder starts no server; the meter, the chat and a prompt say to open one', async () => {
  const answers = { infoChoice: 'Open Folder' };
  const { vscode, shown, statusItem, commands } = create({ alisio: { serverPath: '/nonexistent/alisio-lsp' } }, undefined, answers);
  let opened = 0;
  const ext = loadExtension(vscode);
  const context = { subscriptions: [], extensionPath: path.join(__dirname, '..'), extensionUri: vscode.Uri.file(path.join(__dirname, '..')) };
  await ext.activate(context);
  commands.set('vscode.openFolder', () => { opened++; });
  assert.deepStrictEqual(shown.error, [], 'no server may be started (and none found) without a folder');
  assert.ok(statusItem.visible && /Alisio works inside a folder: open your project \(File > Open Folder…\)/.test(statusItem.tooltip), statusItem.tooltip);
  const view = webviewView();
  shown.viewProviders['alisio.chat'].resolveWebviewView(view);
  view.send({ type: 'ready' });
  const empty = await until('the chat', () => view.posted.find((m) => m.type === 'session'));
  assert.match(empty.empty, /Alisio works inside a folder/);
  assert.strictEqual(empty.openFolder, true, 'the empty chat offers Open Folder');
  view.send({ type: 'send', text: 'list the files' });
  await until('the question to open a folder', () => shown.info.find((m) => /^Alisio works inside a folder/.test(m)));
  await until('the folder picker', () => opened === 1);
  view.send({ type: 'openFolder' }); // the chat's Open Folder button
  await until('the folder picker from the chat', () => opened === 2);
  assert.strictEqual(statusItem.tooltip, shown.info[0]);
  assert.ok(!view.posted.some((m) => m.type === 'turn'), 'a prompt that nothing can run is not drawn as sent');
  assert.ok(view.posted.some((m) => m.type === 'unsent' && m.text === 'list the files'), 'the prompt goes back into the input');
  let menu;
  answers.quickPick = (items) => { menu = items.map((i) => i.label); return undefined; };
  await vscode.commands.executeCommand('alisio.menu');
  assert.deepStrictEqual(menu, ['$(folder-opened) Open Folder', '$(comment-discussion) Open Chat', '$(output) Show Logs']);
  // Every command that needs the server asks for a folder first: none asks for input, none says anything else.
  answers.inputBox = () => { throw new Error('asked for input without a folder'); };
  for (const id of ['alisio.showContext', 'alisio.compact', 'alisio.prompt', 'alisio.newSession', 'alisio.showCheckpoint', 'alisio.recover',
    'alisio.switchSession', 'alisio.showTools', 'alisio.restartServer']) {
    await vscode.commands.executeCommand(id);
  }
  assert.deepStrictEqual(shown.info.filter((m) => !/^Alisio works inside a folder/.test(m)), []);
  assert.strictEqual(shown.info.length, 10);
  assert.strictEqual(statusItem.text, '$(pulse) Alisio –', 'the meter must not stay on compacting');
  assert.deepStrictEqual(shown.error, []);
  await ext.deactivate();
});

test('first run: without a provider the error of the prompt offers Alisio: Set Up Provider, which writes the settings and checks them', { skip: !BIN || !PROVIDER ? 'set ALISIO_BIN and ALISIO_TESTPROVIDER (scripts/test.sh does)' : false }, async () => {
  const { url, proc } = await startProvider({ replies: [{ text: 'set up and answering' }] });
  const ws = tmpdir('alisio-ws-');
  fs.writeFileSync(path.join(ws, 'main.go'), 'package main\n');
  const settings = { alisio: { serverPath: BIN, dataDir: tmpdir('alisio-data-') } };
  let offered;
  const answers = {
    errorChoice: (text, ...items) => { offered = { text, items }; return undefined; },
    quickPick: (items) => items.find((i) => i.label === 'alisio-testprovider'),
    inputBox: (o) => (/baseURL/.test(o.prompt) ? url : /model/.test(o.prompt) ? 'alisio-test' : ''),
  };
  const { vscode, shown } = create(settings, ws, answers);
  const ext = loadExtension(vscode);
  try {
    await ext.activate({ subscriptions: [], extensionPath: path.join(__dirname, '..'), extensionUri: vscode.Uri.file(path.join(__dirname, '..')) });
    const view = webviewView();
    shown.viewProviders['alisio.chat'].resolveWebviewView(view);
    view.send({ type: 'ready' });
    view.send({ type: 'send', text: 'hello' });
    await until('the error of the first prompt', () => offered);
    assert.match(offered.text, /no provider is configured: run Alisio: Set Up Provider/);
    assert.doesNotMatch(offered.text, /Neovim|setup\(\)/, 'a VS Code user reads VS Code words only');
    assert.deepStrictEqual(offered.items, ['Alisio: Set Up Provider']);
    const failed = await until('the failed turn marked in the chat', () => view.posted.find((m) => m.type === 'session' && m.failedTurn));
    assert.strictEqual(failed.failedTurn.prompt, 'hello');
    await vscode.commands.executeCommand('alisio.setUpProvider');
    assert.deepStrictEqual(shown.updates.map((u) => `${u.key}=${u.value}`), ['provider.kind=openai', `provider.baseURL=${url}`, 'provider.model=alisio-test', 'provider.apiKeyEnv=']);
    await until('the check', () => shown.info.find((m) => /the provider answers: alisio-test/.test(m)));
    view.send({ type: 'retry' }); // the chat's Retry sends the failed prompt again
    await until('the reply', () => /set up and answering/.test(view.posted.filter((m) => m.type === 'delta').map((m) => m.text).join('')));
  } finally {
    await ext.deactivate().catch(() => {}); // (a client still starting cannot stop cleanly; the failure above is what matters)
    proc.kill();
  }
});

test('a missing server gives a clear message with a way to install it', async () => {
  const ws = tmpdir('alisio-ws-');
  const { vscode, shown } = create({ alisio: { serverPath: '/nonexistent/alisio-lsp' } }, ws, { errorChoice: 'How to install' });
  const ext = loadExtension(vscode);
  await ext.activate({ subscriptions: [] });
  assert.match(shown.error[0], /the server '\/nonexistent\/alisio-lsp' was not found/);
  assert.match(shown.documents[0], /go build -o ~\/.local\/bin\/alisio-lsp/);
});

test('the server: alisio.serverPath when set, else the binary a platform .vsix carries, else alisio-lsp from PATH', () => {
  const ext = loadExtension(create({}, os.tmpdir(), {}).vscode);
  const dir = tmpdir('alisio-ext-');
  try {
    assert.strictEqual(ext.serverCommand('', dir, 'linux'), 'alisio-lsp');
    fs.mkdirSync(path.join(dir, 'server'));
    fs.writeFileSync(path.join(dir, 'server', 'alisio-lsp'), '');
    fs.writeFileSync(path.join(dir, 'server', 'alisio-lsp.exe'), '');
    assert.strictEqual(ext.serverCommand('', dir, 'linux'), path.join(dir, 'server', 'alisio-lsp'));
    assert.strictEqual(ext.serverCommand(undefined, dir, 'win32'), path.join(dir, 'server', 'alisio-lsp.exe'));
    assert.strictEqual(ext.serverCommand('/opt/alisio-lsp', dir, 'linux'), '/opt/alisio-lsp');
    // On Windows a name on PATH or a path is found with its .exe.
    assert.strictEqual(ext.findOnPath(path.join(dir, 'server', 'alisio-lsp'), 'win32'), path.join(dir, 'server', 'alisio-lsp'));
    fs.rmSync(path.join(dir, 'server', 'alisio-lsp'));
    assert.strictEqual(ext.findOnPath(path.join(dir, 'server', 'alisio-lsp'), 'win32'), path.join(dir, 'server', 'alisio-lsp.exe'));
    assert.strictEqual(ext.findOnPath(path.join(dir, 'server', 'alisio-lsp'), 'linux'), undefined);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('Add Selection to Alisio puts the selected lines, or the file, in the chat input; Open Chat focuses it; Copy copies a code block', async () => {
  const ws = tmpdir('alisio-ws-');
  const { vscode, shown } = create({ alisio: { serverPath: '/nonexistent/alisio-lsp' } }, ws, {});
  const ext = loadExtension(vscode);
  await ext.activate({ subscriptions: [], extensionPath: path.join(__dirname, '..'), extensionUri: vscode.Uri.file(path.join(__dirname, '..')) });
  await vscode.commands.executeCommand('alisio.addSelection');
  assert.match(shown.info.at(-1), /open a file .*Alisio: Add Selection to Alisio then puts it in the next prompt/);
  const lines = ['package main', '', 'func main() {', '\tprintln("hi")', '}', ''];
  const doc = {
    uri: vscode.Uri.file(path.join(ws, 'cmd', 'main.go')), languageId: 'go', lineCount: lines.length,
    getText: (r) => (r ? lines.slice(r.start.line, r.end.line + 1).join('\n') : lines.join('\n')),
    lineAt: (n) => ({ text: lines[n] }),
  };
  const selection = (from, to, toChar = 3) => ({ isEmpty: from === undefined, start: { line: from, character: 1 }, end: { line: to, character: toChar } });
  vscode.window.activeTextEditor = { document: doc, selection: selection(2, 4) };
  // Before the chat page loads, the attachment waits for it; then the page gets it, and the focus.
  await vscode.commands.executeCommand('alisio.addSelection');
  const view = webviewView();
  shown.viewProviders['alisio.chat'].resolveWebviewView(view);
  assert.ok(!view.posted.some((m) => m.type === 'attach'));
  view.send({ type: 'ready' });
  const attached = await until('the attachment', () => view.posted.find((m) => m.type === 'attach'));
  assert.strictEqual(attached.text, 'cmd/main.go lines 3–5:\n```go\nfunc main() {\n\tprintln("hi")\n}\n```\n'.replace('cmd/main.go', '`cmd/main.go`'));
  assert.ok(view.posted.some((m) => m.type === 'focus'));
  // Whole lines, and a selection ending at the start of a line (Shift+↓) does not take that line.
  vscode.window.activeTextEditor = { document: doc, selection: selection(2, 5, 0) };
  await vscode.commands.executeCommand('alisio.addSelection');
  assert.strictEqual(view.posted.filter((m) => m.type === 'attach').at(-1).text, attached.text);
  vscode.window.activeTextEditor = { document: doc, selection: selection() };
  await vscode.commands.executeCommand('alisio.addSelection');
  assert.match(view.posted.filter((m) => m.type === 'attach').at(-1).text, /^`cmd\/main.go`:\n```go\npackage main\n[\s\S]*\n}\n```\n$/);
  view.send({ type: 'copy', text: 'go test ./...' });
  await until('the clipboard', () => shown.clipboard.includes('go test ./...'));
  assert.deepStrictEqual(shown.statusMessages, ['Alisio: copied']);
});
