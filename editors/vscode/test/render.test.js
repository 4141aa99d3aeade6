// Unit tests of the chat view's HTML (dist/render.js, built from src/render.ts; no VS Code needed).
const test = require('node:test');
const assert = require('node:assert');
const render = require('../dist/render.js');

const status = {
  session: 's1', messages: 42, usedChars: 61234, instructionsChars: 512, transcriptChars: 60722, toolsChars: 1891,
  hardLimit: 800000, estimatedTokens: 15717, window: 128000, windowSource: 'models', threshold: 0.85, windowFraction: 0.14,
  charsFraction: 0.09, nextAction: 'none', auto: true, overHardLimit: false, lastCheckpointPartial: false, uncertainCalls: [], compacting: false,
  tokens: 17000, tokensSource: 'calibrated', limitTokens: 128000,
};

test('everything from the session is escaped: markdown renders, HTML does not', () => {
  const html = render.conversation([
    { role: 'user', text: '<script>alert(1)</script> and **bold** <img src=x onerror=alert(2)>' },
    { role: 'assistant', text: '[x](javascript:alert(3))', toolCalls: [{ id: 'c1', name: '<b>evil</b>', arguments: '{"command":"echo \\"<i>\\""}' }], outcomes: [{ result: 2, state: 'done' }] },
    { role: 'tool', toolCallId: 'c1', text: '</pre><script>alert(4)</script>' },
  ], []);
  assert.doesNotMatch(html, /<script|<img|<b>evil|<i>|href="javascript/i);
  assert.match(html, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
  assert.match(html, /<strong>bold<\/strong>/);
  assert.match(html, /&lt;\/pre&gt;&lt;script&gt;/);
});

test('a tool call is one line (tool, what it ran, result size; failures in red) that expands to arguments and result', () => {
  const html = render.conversation([
    { role: 'user', text: 'build it' },
    { role: 'assistant', toolCalls: [{ id: 'c1', name: 'run_command', arguments: '{"command":"make   test"}' }, { id: 'c2', name: 'read_file', arguments: '{"path":"main.go"}' }],
      outcomes: [{ result: 2, state: 'failed' }, { result: 3, state: 'done' }] },
    { role: 'tool', toolCallId: 'c1', text: 'x'.repeat(1500), isError: true },
    { role: 'tool', toolCallId: 'c2', text: 'package main' },
    { role: 'assistant', text: 'Done.' },
  ], []);
  assert.match(html, /<summary><span class="tool-name">run_command<\/span> <code>make test<\/code> · <span class="error">✗ failed · 1.5k chars<\/span><\/summary>/);
  assert.match(html, /<summary><span class="tool-name">read_file<\/span> <code>main.go<\/code> · 12 chars<\/summary>/);
  assert.match(html, /<div class="label">command<\/div><div class="code">.*<code class="language-bash">make   <span class="hljs-built_in">test<\/span>\n<\/code>/s);
  assert.strictEqual((html.match(/class="msg user"/g) || []).length, 1);
});

test('the compaction boundary says what it replaced and expands to the checkpoint and the originals; uncertain calls offer Recover', () => {
  const html = render.conversation([
    { role: 'user', text: 'a'.repeat(60000), compacted: true },
    { role: 'assistant', text: 'b'.repeat(60000), compacted: true },
    { role: 'user', text: 'deploy' },
    { role: 'user', text: '[Checkpoint] goal: fix the parser', summary: true, partial: true }, // written after: history order
    { role: 'assistant', toolCalls: [{ id: 'call_deploy', name: 'run_command', arguments: '{"command":"make deploy"}' }], outcomes: [{ result: -1, state: 'uncertain' }] },
  ], [{ kind: 'uncertainCalls', text: '1 tool call was cut off by a crash, outcome unknown (call_deploy): record that …' }]);
  assert.match(html, /2 messages compacted into a checkpoint, 120k → 33 chars · <span class="warn">partial checkpoint<\/span>/);
  assert.match(html, /<details class="checkpoint" data-key="checkpoint" open><summary>Checkpoint<\/summary><p>\[Checkpoint\] goal: fix the parser<\/p>/);
  assert.match(html, /The 2 compacted originals \(kept in the store\)/);
  assert.match(html, /outcome unknown[\s\S]*data-action="recover"/);
  assert.match(html, /<div class="notice warn">⚠ 1 tool call was cut off by a crash, outcome unknown \(call_deploy\): record that … <button data-action="recover">Recover<\/button><\/div>/);
  assert.ok(html.indexOf('compacted into a checkpoint') < html.indexOf('deploy'));
});

test('after an undo and a new compaction the boundary counts only the originals: not the undone checkpoint, nor a reduced copy', () => {
  const html = render.conversation([
    { role: 'user', text: 'aaaa', compacted: true },
    { role: 'assistant', text: 'bbbbbb', compacted: true },
    { role: 'user', text: '[Checkpoint] the undone one', summary: true, compacted: true, undone: true },
    { role: 'tool', toolCallId: 'c1', text: 'cut', truncated: true, compacted: true, undone: true },
    { role: 'user', text: '[Checkpoint] now', summary: true },
    { role: 'user', text: 'next' },
  ], [], { earlier: 0, compacted: 4 });
  assert.match(html, /2 messages compacted into a checkpoint, 10 → 16 chars/);
  assert.match(html, /The 2 compacted originals/);
  assert.doesNotMatch(html, /the undone one/);
  // On the last page of a longer history the count is the daemon's: it counts only originals already.
  const paged = render.conversation([
    { role: 'assistant', text: 'bbbbbb', compacted: true },
    { role: 'user', text: '[Checkpoint] the undone one', summary: true, compacted: true, undone: true },
    { role: 'user', text: '[Checkpoint] now', summary: true },
  ], [], { earlier: 60, compacted: 50 });
  assert.match(paged, /50 messages compacted into a checkpoint/);
  assert.match(paged, /The last 1 of the 50 compacted originals/);
});

test('the header shows the numbers of the status bar item, the model and the window; over the limit it says so', () => {
  assert.match(render.header(status, 'qwen2.5-coder', 'fix the parser'), /class="fill" data-pct="13"[\s\S]*class="mark" data-pct="85"[\s\S]*17k \/ 128k tokens[\s\S]*fix the parser · qwen2.5-coder · 128k-token window · 61k of 800k chars[\s\S]*data-action="compact"/);
  assert.match(render.header({ ...status, overHardLimit: true }, 'm', 't'), /class="meter error"[\s\S]*over limit/);
  assert.match(render.header({ ...status, windowSource: 'maxContextChars' }, 'm', 't'), /window unknown/);
  // Before any status: the model, and why there is no session (none yet, or no folder open).
  assert.match(render.header(undefined, '', ''), /no model configured · no session yet/);
  assert.match(render.header(undefined, 'm', 'no folder open'), /m · no folder open/);
  assert.match(render.header(undefined, '', ''), /no model configured · no session yet/);
  assert.match(render.header(status, '<b>', '<i>'), /&lt;i&gt; · &lt;b&gt;/);
});

test('each call shows the result the daemon paired with it (IDs may repeat: api.TestPair); an assistant\'s consecutive messages share one heading', () => {
  const html = render.conversation([
    { role: 'user', text: 'go' },
    { role: 'assistant', toolCalls: [{ id: 'c1', name: 'run_command', arguments: '{"command":"ls"}' }], outcomes: [{ result: 2, state: 'done' }] },
    { role: 'tool', toolCallId: 'c1', text: 'a b c' },
    { role: 'assistant', text: 'now the numbers', toolCalls: [{ id: 'c1', name: 'run_command', arguments: '{"command":"seq 3"}' }], outcomes: [{ result: 4, state: 'done' }] },
    { role: 'tool', toolCallId: 'c1', text: '1\n2\n3\n4\n5\n6' },
    { role: 'assistant', text: 'done' },
  ], []);
  assert.match(html, /<code>ls<\/code> · 5 chars[\s\S]*<pre>a b c<\/pre>/);
  assert.match(html, /<code>seq 3<\/code> · 11 chars/);
  assert.strictEqual((html.match(/<div class="who">Alisio<\/div>/g) || []).length, 1);
});

test('the last page of a long session starts with a button that loads earlier messages, and its boundary counts every compacted message', () => {
  const html = render.conversation([
    { role: 'user', text: 'old question', compacted: true },
    { role: 'user', text: '[Checkpoint] goal: ship', summary: true },
    { role: 'user', text: 'next' },
  ], [], { earlier: 12345, compacted: 12000 });
  assert.match(html, /^<div class="earlier"><button data-action="earlier"[^>]*>Show earlier messages<\/button><span>12,345 earlier messages not shown<\/span><\/div>/);
  const originals = render.conversation([{ role: 'user', text: 'old', compacted: true }, { role: 'user', text: '[Checkpoint] x', summary: true }], [], { earlier: 99, compacted: 100 });
  assert.match(originals, /<span>99 compacted originals not shown<\/span>/);
  assert.match(html, /12,000 messages compacted into a checkpoint, now 23 chars/);
  assert.match(html, /The last 1 of the 12,000 compacted originals/);
  const first = render.conversation([{ role: 'user', text: 'hi' }], [], { earlier: 0, compacted: 0 });
  assert.doesNotMatch(first, /earlier/);
  const none = render.conversation([{ role: 'user', text: '[Checkpoint] x', summary: true }], [], { earlier: 40, compacted: 40 });
  assert.match(none, /40 messages compacted into a checkpoint, now 14 chars<\/summary>/);
  assert.doesNotMatch(none, /class="originals"/);
});

test('a command that exited non-zero shows ✗ with its exit code', () => {
  const html = render.conversation([
    { role: 'assistant', toolCalls: [{ id: 'c1', name: 'run_command', arguments: '{"command":"make test"}' }], outcomes: [{ result: 1, state: 'failed', exitCode: 2 }] },
    { role: 'tool', toolCallId: 'c1', text: 'exit code 2\nFAIL', isError: true },
  ], []);
  assert.match(html, /<code>make test<\/code> · <span class="error">✗ exit 2 · 16 chars<\/span>/);
});

test('a call the user declined shows that it did not run, not a failure', () => {
  const html = render.conversation([
    { role: 'assistant', toolCalls: [{ id: 'c1', name: 'run_command', arguments: '{"command":"rm -rf build"}' }], outcomes: [{ result: 1, state: 'declined' }] },
    { role: 'tool', toolCallId: 'c1', text: 'The user declined this command; it was not run.', isError: true, declined: true },
  ], []);
  assert.match(html, /<code>rm -rf build<\/code> · <span class="declined">⊘ declined: not run<\/span>/);
  assert.doesNotMatch(html, /✗|class="error"/);
});

test('code blocks are highlighted in their language and carry a Copy button; raw HTML stays escaped', () => {
  const html = render.markdown('Run:\n\n```go\nfunc main() { fmt.Println("<b>") }\n```\n\n```\nplain <i>\n```');
  assert.match(html, /<div class="code"><button class="copy" data-action="copy" title="Copy the code">Copy<\/button><pre><code class="language-go"><span class="hljs-function"><span class="hljs-keyword">func<\/span>/);
  assert.match(html, /<span class="hljs-string">&quot;&lt;b&gt;&quot;<\/span>/);
  assert.match(html, /<pre><code>plain &lt;i&gt;\n<\/code><\/pre>\n<\/div>/);
  assert.doesNotMatch(html, /<b>|<i>/);
});

test('a tool call shows what it did: an edit as a diff, a write as the content, a command as a shell block, others as sent', () => {
  const edit = render.callBody('edit_file', JSON.stringify({ path: 'main.go', oldText: 'a := 1\nb := 2', newText: 'a := 3' }));
  assert.match(edit, /change to main.go<\/div><div class="code">.*<code class="language-diff"><span class="hljs-deletion">-a := 1<\/span>\n<span class="hljs-deletion">-b := 2<\/span>\n<span class="hljs-addition">\+a := 3<\/span>/s);
  assert.match(render.callBody('write_file', JSON.stringify({ path: 'x.py', content: 'print("```")\n' })), /new content of x.py<\/div>.*<code class="language-py">.*print/s);
  assert.match(render.callBody('run_command', JSON.stringify({ command: 'go test ./...' })), /command<\/div>.*language-bash/s);
  assert.strictEqual(render.callBody('search', '{"pattern":"<x>"}'), '<div class="label">arguments</div><pre>{&quot;pattern&quot;:&quot;&lt;x&gt;&quot;}</pre>');
  assert.match(render.callBody('edit_file', 'not json'), /arguments<\/div><pre>not json/);
});
