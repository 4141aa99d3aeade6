// The script of the Alisio chat view (bundled into dist/chat.js): it draws what the extension sends
// (render.ts) and sends back what the user does. It keeps the input's draft across hide and show.
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
const head = $('header'), log = $('log'), input = $('input') as HTMLTextAreaElement, send = $('send'), stop = $('stop');
let status: Status | undefined, model = '', title = '';
// The turn streaming: its element, the text segment being written (text after a tool call starts a new one, so
// that text and calls show in the order they happened), and its calls by ID.
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
    case 'session':
      streaming = undefined;
      status = m.status ?? status;
      model = m.model ?? model;
      title = m.title ?? title;
      drawHeader();
      {
        // Loading earlier messages keeps in view what the user was reading; any other redraw goes to the end.
        const fromEnd = log.scrollHeight - log.scrollTop;
        log.innerHTML = conversation((m.messages || []) as ChatMessage[], m.notices || [], { earlier: m.earlier || 0, compacted: m.compacted || 0 }, m.empty);
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
    case 'status':
      status = m.status;
      drawHeader();
      break;
    case 'turn': // a turn starts: the prompt, and where the reply streams
      running(true);
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
        c.el.outerHTML = toolCall({ id: m.id, name: c.name, arguments: c.arguments }, { isError: m.isError, chars: m.chars, exitCode: m.exitCode }, m.isError ? 'failed' : 'done');
      }
      break;
    }
    case 'unsent': // nothing could run the prompt (no folder): it goes back into the input, not lost
      input.value = m.text;
      vscode.setState({ draft: m.text });
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

document.body.addEventListener('click', (e) => {
  const action = (e.target as HTMLElement).closest('button')?.dataset.action;
  if (action) {
    vscode.postMessage({ type: action });
  }
});

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
  }
});
input.addEventListener('input', () => vscode.setState({ draft: input.value }));
send.addEventListener('click', submit);
stop.addEventListener('click', () => vscode.postMessage({ type: 'stop' }));
input.value = vscode.getState()?.draft || '';
drawHeader();
running(false);
vscode.postMessage({ type: 'ready' });
