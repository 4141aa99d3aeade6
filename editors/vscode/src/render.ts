// The Alisio chat view's HTML, as pure functions of alisio-lsp's payloads (docs/protocol.md): the webview
// script (media/chat.js) calls them, and the unit tests run them under Node. Everything that comes from the
// session is escaped; markdown is rendered by markdown-it with raw HTML off.
import MarkdownIt from 'markdown-it';
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import c from 'highlight.js/lib/languages/c';
import cpp from 'highlight.js/lib/languages/cpp';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import go from 'highlight.js/lib/languages/go';
import java from 'highlight.js/lib/languages/java';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import lua from 'highlight.js/lib/languages/lua';
import python from 'highlight.js/lib/languages/python';
import rust from 'highlight.js/lib/languages/rust';
import sql from 'highlight.js/lib/languages/sql';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';
import { compactsAt, fraction, human, Status, tokensText, used } from './meter';
import { CallOutcome, CallState, Notice } from './protocol';

// The languages code blocks are highlighted in (highlight.js's core with these only keeps the chat's script
// small); a block in another language, or none, is shown plain.
for (const [name, lang] of Object.entries({ bash, c, cpp, css, diff, go, java, javascript, json, lua, python, rust, sql, typescript, xml, yaml })) {
  hljs.registerLanguage(name, lang);
}

const md: MarkdownIt = new MarkdownIt({
  html: false, linkify: false, breaks: true,
  highlight: (code, lang) => (lang && hljs.getLanguage(lang) ? hljs.highlight(code, { language: lang, ignoreIllegals: true }).value : ''),
});
// Every code block gets a Copy button (the chat copies the block's text through the editor's clipboard).
const fence = md.renderer.rules.fence!;
md.renderer.rules.fence = (tokens, idx, options, env, self) =>
  `<div class="code"><button class="copy" data-action="copy" title="Copy the code">Copy</button>${fence(tokens, idx, options, env, self)}</div>`;

/** esc escapes text for HTML (content and attribute values). */
export function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/** markdown renders text as HTML, raw HTML escaped. */
export function markdown(text: string): string {
  return md.render(text);
}

/** A message of alisio/session with includeCompacted. */
export interface ChatMessage {
  id?: string;
  role: string;
  text?: string;
  toolCalls?: { id: string; name: string; arguments: string }[];
  toolCallId?: string;
  toolName?: string;
  isError?: boolean;
  /** A call the user did not approve: it did not run. */
  declined?: boolean;
  summary?: boolean;
  partial?: boolean;
  compacted?: boolean;
  /** A checkpoint or reduced copy whose compaction was undone. */
  undone?: boolean;
  /** A copy the context budget cut (its original is in the history too). */
  truncated?: boolean;
  /** The message's size as compaction counts it (text, reasoning, tool calls). */
  chars?: number;
  /** What became of each tool call (parallel to toolCalls), as the daemon paired them. */
  outcomes?: CallOutcome[];
}

/** count writes n with thousands separators (12,345). */
function count(n: number): string {
  return n.toLocaleString('en-US');
}

function chars(s: string | undefined): number {
  return [...(s || '')].length;
}

/** argSummary is a tool call's arguments in one short line: its command, path or pattern, else the raw text. */
export function argSummary(args: string): string {
  let s = args || '';
  try {
    const o = JSON.parse(args);
    for (const k of ['command', 'path', 'pattern', 'query', 'url']) {
      if (typeof o?.[k] === 'string') {
        s = o[k];
        break;
      }
    }
  } catch {
    // not JSON: the raw text
  }
  s = s.replace(/\s+/g, ' ');
  return [...s].length > 80 ? [...s].slice(0, 79).join('') + '…' : s;
}

/** codeBlock is text as a fenced block in lang, rendered (highlighted, with its Copy button): the fence is
 * longer than any run of backticks inside. */
function codeBlock(text: string, lang: string): string {
  const fence = '`'.repeat(Math.max(3, ...(text.match(/`+/g) ?? []).map((r) => r.length + 1)));
  return md.render(`${fence}${lang}\n${text.replace(/\n$/, '')}\n${fence}\n`);
}

/** The language of a path's code block, from its extension (highlight.js's names and aliases). */
function langOf(path: string): string {
  const ext = /\.([A-Za-z0-9]+)$/.exec(path)?.[1]?.toLowerCase() ?? '';
  return hljs.getLanguage(ext) ? ext : '';
}

/** callBody is what a tool call did, for people: an edit as a diff (- the old text, + the new), a write as the
 * file's new content, a command as a shell block; any other call's arguments as they were sent. */
export function callBody(name: string, args: string): string {
  let o: Record<string, unknown> | undefined;
  try {
    o = JSON.parse(args);
  } catch {
    // not JSON: shown raw below
  }
  const str = (k: string) => (typeof o?.[k] === 'string' ? (o[k] as string) : undefined);
  const path = str('path') ?? '';
  if (name === 'edit_file' && str('oldText') !== undefined && str('newText') !== undefined) {
    const side = (mark: string, t: string) => t.replace(/\n$/, '').split('\n').map((l) => mark + l).join('\n');
    return `<div class="label">change to ${esc(path)}</div>${codeBlock(`${side('-', str('oldText')!)}\n${side('+', str('newText')!)}`, 'diff')}`;
  }
  if (name === 'write_file' && str('content') !== undefined) {
    return `<div class="label">new content of ${esc(path)}</div>${codeBlock(str('content')!, langOf(path))}`;
  }
  if (name === 'run_command' && str('command') !== undefined) {
    return `<div class="label">command</div>${codeBlock(str('command')!, 'bash')}`;
  }
  return `<div class="label">arguments</div><pre>${esc(args)}</pre>`;
}

/** A tool call's result: its text (from the session) or only its size (while a turn streams). */
export interface ToolResult {
  text?: string;
  isError?: boolean;
  chars?: number;
  /** A command's exit status. */
  exitCode?: number;
}

/** toolCall is one tool call as one line (tool, what it ran, result size; failures in red, uncertain calls
 * marked with the Recover action) that expands to its arguments and result. */
export function toolCall(call: { id: string; name: string; arguments: string }, result: ToolResult | undefined, state: CallState): string {
  let size: string, cls = 'tool';
  if (state === 'uncertain') {
    size = '<span class="warn">⚠ outcome unknown (a crash cut it off)</span> <button data-action="recover">Recover</button>';
    cls += ' uncertain';
  } else if (state === 'running' || !result) {
    size = '<span class="running">running…</span>';
  } else if (state === 'declined') {
    size = '<span class="declined">⊘ declined: not run</span>'; // its result says why (a no, no answer in time)
    cls += ' declined';
  } else if (state === 'failed') {
    const why = result.exitCode !== undefined ? `exit ${result.exitCode}` : 'failed';
    size = `<span class="error">✗ ${why} · ${human(result.chars ?? chars(result.text))} chars</span>`;
    cls += ' failed';
  } else {
    size = `${human(result.chars ?? chars(result.text))} chars`;
  }
  return `<details class="${cls}" data-key="call ${esc(call.id)}"><summary><span class="tool-name">${esc(call.name)}</span> <code>${esc(argSummary(call.arguments))}</code> · ${size}</summary>` +
    `<div class="tool-body">${callBody(call.name, call.arguments)}` +
    (result?.text !== undefined ? `<div class="label">result</div><pre>${esc(result.text)}</pre>` : '') + '</div></details>';
}

function bubble(role: 'user' | 'assistant', inner: string): string {
  return `<div class="msg ${role}"><div class="who">${role === 'user' ? 'You' : 'Alisio'}</div>${inner}</div>`;
}

/** Where the messages given to conversation sit in the session's history: how many come before them, and how
 * many originals of the whole history are compacted (some may be among those earlier ones). */
export interface PageInfo {
  earlier: number;
  compacted: number;
}

/** isOriginal says a compacted message is one the user or the model wrote, not a checkpoint or a reduced copy. */
function isOriginal(m: ChatMessage): boolean {
  return !m.summary && !m.truncated && !m.undone;
}

/** conversation renders the session: its messages (the compacted originals gathered behind the checkpoint's
 * boundary, which expands to the checkpoint and to them), tool calls one line each, uncertain calls marked, and
 * the daemon's notices about the session (status.notices) with their actions.
 * When the messages are the last page of a longer history, it starts with a button that loads earlier ones. */
export function conversation(messages: ChatMessage[], notices: Notice[], page: PageInfo = { earlier: 0, compacted: 0 },
  empty = 'No messages yet. Ask the agent below: Enter sends, Shift+Enter starts a new line.'): string {
  // The daemon paired each call with its result (outcomes[k].result indexes messages).
  // One bubble per speaker: an assistant's consecutive messages (text, calls, more text) share one heading.
  const render = (list: ChatMessage[]) => {
    const parts: string[] = [];
    let last = '';
    for (const m of list) {
      if (m.role === 'user' && !m.summary) {
        parts.push(bubble('user', markdown(m.text || '')));
        last = 'user';
      } else if (m.role === 'assistant') {
        const calls = (m.toolCalls || []).map((c, k) => {
          const o = m.outcomes?.[k] ?? { result: -1, state: 'running' as CallState };
          return toolCall(c, o.result >= 0 ? { ...messages[o.result], exitCode: o.exitCode } : undefined, o.state);
        }).join('');
        const inner = (m.text ? markdown(m.text) : '') + calls;
        if (last === 'assistant') {
          parts[parts.length - 1] = parts[parts.length - 1].replace(/<\/div>$/, () => inner + '</div>');
        } else {
          parts.push(bubble('assistant', inner));
        }
        last = 'assistant';
      }
    }
    return parts.join('');
  };
  // The live checkpoint always heads the conversation (a compaction replaces a prefix), whatever its place in
  // the history: its boundary comes first, over the originals it replaced.
  // Only what the user and the model said counts as an original: not an earlier or undone checkpoint, nor a
  // reduced copy (its original is in the history too).
  const replaced = messages.filter((m) => m.compacted);
  const originals = replaced.filter(isOriginal);
  const out: string[] = [];
  if (page.earlier > 0) {
    // The history starts with the compacted originals: often every earlier message is one of them.
    const what = Math.max(page.compacted, originals.length) - originals.length >= page.earlier ? 'compacted original' : 'earlier message';
    out.push(`<div class="earlier"><button data-action="earlier" title="Load ${count(Math.min(page.earlier, 200))} more">Show earlier messages</button>` +
      `<span>${count(page.earlier)} ${what}${page.earlier === 1 ? '' : 's'} not shown</span></div>`);
  }
  const live = messages.find((m) => m.summary && !m.compacted);
  if (live) {
    // The daemon counts the compacted originals of the whole history (page.compacted).
    const total = page.earlier > 0 ? Math.max(page.compacted, originals.length) : originals.length;
    const partial = live.partial ? ' · <span class="warn">partial checkpoint</span>' : '';
    const sizes = originals.length === total ? `${human(originals.reduce((n, o) => n + (o.chars ?? chars(o.text)), 0))} → ${human(live.chars ?? chars(live.text))} chars`
      : `now ${human(live.chars ?? chars(live.text))} chars`;
    const shownOriginals = originals.length === 0 ? ''
      : `<details class="originals" data-key="originals"><summary>${originals.length === total ? `The ${count(total)}` : `The last ${count(originals.length)} of the ${count(total)}`} compacted originals (kept in the store)</summary>${render(originals)}</details>`;
    out.push(`<details class="boundary${live.partial ? ' partial' : ''}" data-key="boundary"><summary>${count(total)} messages compacted into a checkpoint, ${sizes}${partial}</summary>` +
      `<div class="boundary-actions"><button data-action="undoCompaction" title="The conversation as it was before this compaction, with what came since">Undo</button>` +
      `<button data-action="editCheckpoint" title="Correct what the checkpoint says">Edit</button></div>` +
      `<details class="checkpoint" data-key="checkpoint" open><summary>Checkpoint</summary>${markdown(live.text || '')}</details>${shownOriginals}</details>`);
  }
  out.push(render(messages.filter((m) => !m.compacted && !m.summary)));
  for (const n of notices) {
    out.push(`<div class="notice warn">⚠ ${esc(n.text)}${n.kind === 'uncertainCalls' ? ' <button data-action="recover">Recover</button>' : ''}</div>`);
  }
  return out.join('') || `<div class="empty">${esc(empty)}</div>`;
}

/** header is the meter as a bar (the numbers of the status bar item), the model and window, and the actions. */
export function header(st: Status | undefined, model: string, title: string): string {
  const actions = '<button data-action="compact" title="Compact now, with a focus">Compact</button>' +
    '<button data-action="switch" title="Switch session">Sessions</button><button data-action="new" title="New session">New</button>';
  if (!st) {
    return `<div class="meter"><div class="bar"><div class="fill" data-pct="0"></div></div><span class="pct">–</span></div>` +
      `<div class="meta">${esc(model || 'no model configured')} · ${esc(title || 'no session yet')}</div><div class="actions">${actions}</div>`;
  }
  const pct = Math.round(used(st) * 100);
  const level = st.overHardLimit || (st.uncertainCalls?.length ?? 0) > 0 ? 'error' : fraction(st) >= 0.75 ? 'warning' : 'ok';
  const windowText = st.window && !(st.windowSource || '').startsWith('maxContextChars') ? `${human(st.window)}-token window` : 'window unknown';
  const chars = `${human(st.usedChars)} of ${human(st.hardLimit)} chars` +
    (st.cache ? ` · ${Math.round((100 * st.cache.lastCached) / Math.max(st.cache.lastInput, 1))}% cached` : '');
  return `<div class="meter ${level}" title="${esc(chars)}; compaction starts at the mark (${Math.round(compactsAt(st) * 100)}%)"><div class="bar"><div class="fill" data-pct="${Math.min(pct, 100)}"></div>` +
    `<div class="mark" data-pct="${Math.round(compactsAt(st) * 100)}"></div></div>` +
    `<span class="pct">${st.overHardLimit ? 'over limit' : `${tokensText(st).replace('/', ' / ')} tokens`}</span></div>` +
    `<div class="meta">${esc(title)} · ${esc(model || '?')} · ${windowText} · ${chars}</div>` +
    `<div class="actions">${actions}</div>`;
}
