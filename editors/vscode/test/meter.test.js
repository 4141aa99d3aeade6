// Unit tests of the meter logic (dist/meter.js, built from src/meter.ts; no VS Code needed).
const test = require('node:test');
const assert = require('node:assert');
const meter = require('../dist/meter.js');

const base = {
  session: 's1', messages: 42, usedChars: 61234, instructionsChars: 512, transcriptChars: 60722, toolsChars: 1891,
  hardLimit: 800000, estimatedTokens: 15717, calibratedTokens: 17020, lastReportedTokens: 16890, window: 128000,
  windowSource: 'models', threshold: 0.85, windowFraction: 0.14, charsFraction: 0.09, nextAction: 'none', auto: true,
  overHardLimit: false, lastCheckpointPartial: false, uncertainCalls: [], compacting: false,
  tokens: 17020, tokensSource: 'calibrated', limitTokens: 128000,
};

test('the status bar shows tokens of the window with a bar marking the threshold, a spinner while compacting, uncertain calls', () => {
  assert.strictEqual(meter.statusText(base, false), '$(pulse) Alisio ▰▱▱▱▱▱▱│▱ 17k/128k');
  assert.strictEqual(meter.statusText({ ...base, tokens: 64000 }, false), '$(pulse) Alisio ▰▰▰▰▱▱▱│▱ 64k/128k');
  assert.strictEqual(meter.statusText({ ...base, tokens: 200000 }, false), '$(pulse) Alisio ▰▰▰▰▰▰▰│▰ 200k/128k');
  assert.match(meter.statusText(base, true), /sync~spin.*compacting/);
  assert.strictEqual(meter.statusText({ ...base, uncertainCalls: ['call_x'] }, false), '$(pulse) Alisio ▰▱▱▱▱▱▱│▱ 17k/128k $(warning) 1');
});

test('over the hard limit: text and colour say so; an unknown window is shown as unknown', () => {
  const over = { ...base, overHardLimit: true, usedChars: 18000, hardLimit: 14000, windowFraction: 0.71 };
  assert.strictEqual(meter.statusText(over, false), '$(error) Alisio over limit (18k/14k)');
  assert.strictEqual(meter.level(over), 'error');
  assert.match(meter.tooltip(over), /Over the hard limit\*\*: 18k of 14k chars/);
  const small = { ...base, window: 8000, tokens: 6160, limitTokens: 8000, windowFraction: 0.91, threshold: 0.85, nextAction: 'compact (reserve)' };
  assert.match(meter.tooltip(small), /the request fills 77% of the 8k-token window; compaction starts at 85%/);
  assert.match(meter.tooltip(small), /Next model call: compacts first, to leave room for the reply/);
  const unknown = { ...base, window: 200000, windowSource: 'maxContextChars' };
  assert.ok(!meter.windowKnown(unknown));
  assert.match(meter.tooltip(unknown), /window \| unknown: the provider did not report it; \[Alisio: Set Up Provider\]\(command:alisio.setUpProvider\)/);
  // The daemon's words, where it sends them, rather than its codes.
  const worded = meter.tooltip({ ...small, windowSource: 'models', windowFrom: "read from the provider's model list", nextCall: 'compacts first: the request is past the window\'s compaction point' });
  assert.match(worded, /8k tokens \(read from the provider's model list\)/);
  assert.match(worded, /Next model call: compacts first: the request is past the window's compaction point\./);
  assert.doesNotMatch(meter.tooltip(unknown), /200k-token/);
  // The number in the status bar and the words of the tooltip tell the same rule (the request, catalog included).
  const u = { ...unknown, tokens: 8000, limitTokens: 200000, windowFraction: 0.05, charsFraction: 0.04 };
  assert.strictEqual(meter.statusText({ ...u, tokens: 9000, limitTokens: 200000 }, false), '$(pulse) Alisio ▱▱▱▱▱▱▱│▱ 9k/200k');
  assert.match(meter.tooltip(u), /the request, tool catalog included, fills 4% of what alisio.limits.maxContextChars allows \(the model's window is unknown\)/);
  assert.doesNotMatch(meter.contextBreakdown(u, [], []), /200k-token/);
});

test('a window too small to keep the reply\'s room up to the threshold: the mark and the words move to where compaction starts', () => {
  // 8k window, 4,096 tokens kept for the reply: compaction starts at 3,905 tokens, 49% of the window, not 85%.
  const small = { ...base, window: 8000, tokens: 2000, limitTokens: 8000, windowFraction: 0.51, compactsAtTokens: 3905, compactsAt: 0.488,
    compactsAtText: 'compaction starts at 49% of the 8k-token window, before the 85% threshold, so that 4.1k tokens stay free for the reply (limits.maxOutputTokens)' };
  assert.strictEqual(meter.statusText(small, false), '$(pulse) Alisio ▰▰▱▱│▱▱▱▱ 2k/8k');
  assert.match(meter.tooltip(small), /compaction at 49%/);
  assert.match(meter.tooltip(small), /before the 85% threshold, so that 4.1k tokens stay free for the reply/);
  assert.strictEqual(meter.level(small), 'ok');
  assert.strictEqual(meter.level({ ...small, tokens: 3100, windowFraction: 0.79 }), 'warning');
});

test("the tooltip's share is the share of its own token figures (calibrated), not the estimate's", () => {
  // The provider counted 1,150 tokens where chars/4 estimated 960 (windowFraction 0.07 of the 85% point).
  const st = { ...base, tokens: 1150, tokensSource: 'calibrated', limitTokens: 16000, window: 16000, windowFraction: 0.0706, charsFraction: 0.01, threshold: 0.85 };
  assert.match(meter.tooltip(st), /tokens \| 1.1k of 16k \(calibrated/);
  assert.match(meter.tooltip(st), /the request fills 7% of the 16k-token window/);
});

test('colours: warning from 75% of the threshold or a partial checkpoint, error when the user must act', () => {
  assert.strictEqual(meter.level(base), 'ok');
  assert.strictEqual(meter.level({ ...base, windowFraction: 0.8 }), 'warning');
  assert.strictEqual(meter.level({ ...base, lastCheckpointPartial: true }), 'warning');
  assert.strictEqual(meter.level({ ...base, uncertainCalls: ['c'] }), 'error');
  assert.strictEqual(meter.level({ ...base, overHardLimit: true }), 'error');
});

test('the tooltip has the numbers, the closest rule and the links', () => {
  const t = meter.tooltip({ ...base, lastCheckpointPartial: true, uncertainCalls: ['call_x'],
    notices: [{ kind: 'uncertainCalls', text: '1 tool call was cut off by a crash, outcome unknown (call_x): record that (…), then continue.' },
      { kind: 'partialCheckpoint', text: 'The last checkpoint is partial: …' }] });
  for (const want of ['61k of 800k', "17k of 128k (calibrated from the provider's counts); compaction at 85%", '128k tokens (models)', 'the request fills',
    'command:workbench.action.openSettings?%5B%22alisio.compaction.maxOutputTokens%22%5D', 'command:alisio.recover', 'call_x']) {
    assert.ok(t.includes(want), `tooltip lacks ${want}:\n${t}`);
  }
  assert.ok(meter.tooltip({ ...base, charsFraction: 0.5 }).includes('instructions + transcript fill 43% of limits.maxContextChars'));
});

test('event messages: the daemon\'s sentence, partial asks to raise the budget, failures are errors', () => {
  const summary = 'compacted 118 messages, 390k → 9k chars; the request is now 8.2k tokens (was 105k); memory: saved 2 new memories';
  const done = meter.eventMessage({ type: 'compaction_completed', beforeChars: 412000, afterChars: 31000, spanMessages: 118, summary,
    plugins: [{ plugin: 'memory', summary: 'saved 2 new memories' }] });
  assert.deepStrictEqual(done, { level: 'info', text: 'Alisio: ' + summary });
  const partial = meter.eventMessage({ type: 'compaction_completed', beforeChars: 1000, afterChars: 100, spanMessages: 3, partial: true });
  assert.strictEqual(partial.level, 'warning');
  assert.ok(partial.raiseBudget);
  assert.strictEqual(meter.eventMessage({ type: 'compaction_failed', message: 'boom' }).level, 'error');
  assert.strictEqual(meter.eventMessage({ type: 'plugin_hook_failed', plugin: 'p', hook: 'afterCompact', message: 'x' }).level, 'warning');
  assert.strictEqual(meter.eventMessage({ type: 'compaction_skipped', reason: 'auto', message: 'x' }), undefined);
  assert.strictEqual(meter.eventMessage({ type: 'delta', text: 'x' }), undefined);
});

test('the context breakdown shows the daemon\'s parts (alisio/context) and the catalog per source', () => {
  const md = meter.contextBreakdown(base, [
    { name: 'checkpoint', chars: 1000 }, { name: 'user text', chars: 6 }, { name: 'assistant text and calls', chars: 26 },
    { name: 'reasoning', chars: 50 }, { name: 'tool output: read_file', chars: 3000 }, { name: 'tool output: run_command', chars: 500 },
  ], [{ source: 'built-in', chars: 1891, count: 6 }, { source: 'docs', chars: 120000, count: 1 }]);
  for (const want of ['instructions', 'checkpoint', 'user text', 'reasoning', 'tool output: read_file', 'tool output: run_command', 'tool catalog: docs (1 tools)', '120k']) {
    assert.ok(md.includes(want), `breakdown lacks ${want}:\n${md}`);
  }
  assert.ok(md.indexOf('tool output: read_file') < md.indexOf('tool output: run_command'), 'the daemon\'s order is kept');
});

test('Show Tools: each source with its count, size and problem; MCP servers and plugins toggle', () => {
  const d = { sources: [{ source: 'built-in', count: 6, chars: 1891, tools: ['read_file', 'run_command'] },
    { source: 'docs', count: 2, chars: 900, tools: ['docs__lookup', 'docs__search'] },
    { source: 'broken', count: 0, chars: 0, problem: 'MCP server broken: command "x" not found' }], catalogChars: 2791, confinement: 'run_command writes only in /ws' };
  const items = meter.toolsItems(d, { docs: {}, broken: {}, off: { disabled: true } }, [{ name: 'open-questions' }]);
  assert.deepStrictEqual(items.map((i) => i.label), ['$(tools) built-in', '$(server) docs', '$(server) broken', '$(circle-slash) off', '$(plug) open-questions', '$(info) tool catalog: 2.8k chars in every request']);
  assert.strictEqual(items[1].description, 'MCP server · 2 tools · 900 chars · pick to disable');
  assert.match(items[2].detail, /command "x" not found/);
  assert.deepStrictEqual(items[3].toggle, { kind: 'mcpServers', name: 'off', disabled: true });
  assert.deepStrictEqual(items[4].toggle, { kind: 'plugins', name: 'open-questions', disabled: false });
  assert.strictEqual(items[0].toggle, undefined);
  assert.strictEqual(items[5].detail, 'run_command writes only in /ws');
});
