// The script of the Alisio chat view (bundled into dist/chat.js): it draws what the extension sends
// (render.ts) and sends back what the user does. It keeps the input's draft across hide and show; ↑ and ↓ on
// the input's first and last line walk back and forth through the prompts of the session.
import { conversation, header, markdown, toolCall, ChatMessage } from './render';
import type { Status } from './meter';

interface VsCodeApi {
  postMessage(msg: unknown): void;
  getState(): { draft?: string } | undefined;
  setState(s: { draft?: string }): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
const $ = (id: string) => document.getElementById(id) as HTMLElement;
const head = $('header'), log = $('log'), input = $('input') as HTMLTextAreaElement, send = $('send'), stop = $('stop'), question = $('question');
let status: Status | undefined, model = '', title = '';
// The turn streaming: its element, the text segment being written (text after a tool call starts a new one, so
// that text and calls show in the order they happened), and its calls by ID.
// The session's prompts, oldest first, and where ↑/↓ stand in them (history.length: the draft being typed).
let history: string[] = [], at = 0, draft = '';
let streaming: { el: HTMLElement; seg: HTMLElement | undefined; text: string; calls: Map<string, { name: string; arguments: string; el: HTMLElement }> } | undefined;

function drawHeader() {
  head.innerHTML = header(status, model, title);
  const fill = head.querySelector('.fill') as HTMLElement | null;
  if (fill) {
    fill.style.width = `${fill.dataset.pct || 0}%`;
  }
  const mark = head.querySelector('.mark') as HTMLElement | null;
  if (mark) {
    mark.style.left = `${mark.dataset.pct || 0}%`;
  }
}

/** openState is whether each keyed part of the conversation (a tool call, the compaction boundary, the
 * checkpoint, the originals) is open, by its key. */
function openState(): Map<string, boolean> {
  const state = new Map<string, boolean>();
  log.querySelectorAll<HTMLDetailsElement>('details[data-key]').forEach((d) => state.set(d.dataset.key!, d.open));
  return state;
}

function scrollDown() {
  log.scrollTop = log.scrollHeight;
}

function running(on: boolean) {
  send.hidden = on;
  stop.hidden = !on;
}

window.addEventListener('message', (e: MessageEvent) => {
  const m = e.data;
  switch (m.type) {
    case 'session': {
      // What the user opened or closed stays so when the same session is drawn again (after a turn, a status).
      const kept = m.title === title ? openState() : new Map<string, boolean>();
      streaming = undefined;
      status = m.status ?? status;
      model = m.model ?? model;
      title = m.title ?? title;
      history = ((m.messages || []) as ChatMessage[]).filter((x) => x.role === 'user' && !x.summary && x.text).map((x) => x.text as string);
      at = history.length;
      drawHeader();
      {
        // Loading earlier messages keeps in view what the user was reading; any other redraw goes to the end.
        const fromEnd = log.scrollHeight - log.scrollTop;
        log.innerHTML = conversation((m.messages || []) as ChatMessage[], m.notices || [], { earlier: m.earlier || 0, compacted: m.compacted || 0 }, m.empty);
        log.querySelectorAll<HTMLDetailsElement>('details[data-key]').forEach((d) => {
          const open = kept.get(d.dataset.key!);
          if (open !== undefined) {
            d.open = open;
          }
        });
        if (m.failedTurn) {
          log.querySelector('.empty')?.remove();
          log.insertAdjacentHTML('beforeend', `<div class="notice error failed-turn">${markdown(m.failedTurn.message)} <button data-action="retry">Retry</button></div>`);
        }
        if (m.openFolder) {
          log.querySelector('.empty')?.insertAdjacentHTML('beforeend', ' <button data-action="openFolder">Open Folder</button>');
        }
        if (m.keepScroll) {
          log.scrollTop = log.scrollHeight - fromEnd;
        } else {
          scrollDown();
        }
      }
      running(!!m.running);
      break;
    }
    case 'status':
      status = m.status;
      drawHeader();
      break;
    case 'turn': // a turn starts: the prompt, and where the reply streams
      running(true);
      if (history[history.length - 1] !== m.text) {
        history.push(m.text);
      }
      at = history.length;
      log.querySelector('.empty')?.remove();
      log.querySelector('.failed-turn')?.remove();
      log.insertAdjacentHTML('beforeend', `<div class="msg user"><div class="who">You</div>${markdown(m.text)}</div>` +
        '<div class="msg assistant streaming"><div class="who">Alisio</div></div>');
      streaming = { el: log.lastElementChild as HTMLElement, seg: undefined, text: '', calls: new Map() };
      scrollDown();
      break;
    case 'delta':
      if (streaming) {
        if (!streaming.seg) {
          streaming.el.insertAdjacentHTML('beforeend', '<div class="text"></div>');
          streaming.seg = streaming.el.lastElementChild as HTMLElement;
          streaming.text = '';
        }
        streaming.text += m.text;
        streaming.seg.innerHTML = markdown(streaming.text);
        scrollDown();
      }
      break;
    case 'tool_call':
      if (streaming) {
        streaming.el.insertAdjacentHTML('beforeend', toolCall({ id: m.id, name: m.name, arguments: m.arguments }, undefined, 'running'));
        streaming.calls.set(m.id, { name: m.name, arguments: m.arguments, el: streaming.el.lastElementChild as HTMLElement });
        streaming.seg = undefined; // text after the call comes below it
        scrollDown();
      }
      break;
    case 'tool_result': {
      const c = streaming?.calls.get(m.id);
      if (c) {
        c.el.outerHTML = toolCall({ id: m.id, name: c.name, arguments: c.arguments }, { isError: m.isError, chars: m.chars, exitCode: m.exitCode },
          m.declined ? 'declined' : m.isError ? 'failed' : 'done');
      }
      break;
    }
    case 'unsent': // nothing could run the prompt (no folder): it goes back into the input, not lost
      input.value = m.text;
      vscode.setState({ draft: m.text });
      break;
    case 'attach': // a file or a selection for the next prompt, added where the input ends
      input.value = input.value.trim() ? `${input.value.replace(/\s+$/, '')}\n\n${m.text}` : m.text;
      vscode.setState({ draft: input.value });
      input.focus();
      input.setSelectionRange(input.value.length, input.value.length);
      break;
    case 'focus':
      input.focus();
      break;
    case 'question': // the question before an edit or a command runs, until it is answered anywhere
      showQuestion(m.question);
      break;
    case 'done':
      running(false);
      if (m.error) {
        log.insertAdjacentHTML('beforeend', `<div class="notice error">${markdown(m.error)}</div>`);
        scrollDown();
      }
      break;
  }
});

/** showQuestion puts q on the bar above the input with its two answers (none: the bar hides). */
function showQuestion(q: { id: string; text: string; yes: string; no: string } | undefined) {
  question.hidden = !q;
  question.replaceChildren();
  if (!q) {
    return;
  }
  const text = document.createElement('span');
  text.textContent = q.text;
  const buttons = [q.yes, q.no].map((label, i) => {
    const b = document.createElement('button');
    b.textContent = label;
    b.className = i === 0 ? 'yes' : 'no';
    b.addEventListener('click', () => vscode.postMessage({ type: 'answer', id: q.id, yes: i === 0 }));
    return b;
  });
  question.append(text, ...buttons);
  scrollDown();
}

document.body.addEventListener('click', (e) => {
  const button = (e.target as HTMLElement).closest('button');
  const action = button?.dataset.action;
  if (action === 'copy' && button) {
    vscode.postMessage({ type: 'copy', text: button.parentElement?.querySelector('code')?.textContent ?? '' });
    button.textContent = 'Copied';
    setTimeout(() => { button.textContent = 'Copy'; }, 1500);
  } else if (action) {
    vscode.postMessage({ type: action });
  }
});
// When the view gets the focus (Alisio: Open Chat, its keybinding, a click on its icon), the input has it.
window.addEventListener('focus', () => {
  if (document.activeElement === document.body) {
    input.focus();
  }
});

/** recall puts the prompt step places away from the one shown into the input (↑ -1, ↓ +1), keeping the draft. */
function recall(step: number): boolean {
  const next = at + step;
  if (next < 0 || next > history.length) {
    return false;
  }
  if (at === history.length) {
    draft = input.value;
  }
  at = next;
  input.value = at === history.length ? draft : history[at];
  const end = step < 0 ? 0 : input.value.length;
  input.setSelectionRange(end, end);
  return true;
}

function submit() {
  const text = input.value.trim();
  if (text) {
    vscode.postMessage({ type: 'send', text });
    input.value = '';
    vscode.setState({ draft: '' });
  }
}
input.addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    submit();
  } else if ((e.key === 'ArrowUp' || e.key === 'ArrowDown') && !e.shiftKey && !e.altKey && !e.ctrlKey && !e.metaKey && input.selectionStart === input.selectionEnd) {
    // Only on the first line (↑) or the last (↓), so moving through a multi-line prompt still works.
    const up = e.key === 'ArrowUp';
    const onEdge = up ? !input.value.slice(0, input.selectionStart).includes('\n') : !input.value.slice(input.selectionEnd).includes('\n');
    if (onEdge && recall(up ? -1 : 1)) {
      e.preventDefault();
    }
  }
});
input.addEventListener('input', () => vscode.setState({ draft: input.value }));
send.addEventListener('click', submit);
stop.addEventListener('click', () => vscode.postMessage({ type: 'stop' }));
input.value = vscode.getState()?.draft || '';
if (document.hasFocus()) { // the view was focused while its page loaded
  input.focus();
}
drawHeader();
running(false);
vscode.postMessage({ type: 'ready' });
