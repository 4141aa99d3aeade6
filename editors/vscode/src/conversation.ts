// The conversation in the chat view: its pages of the session's history, the turn it runs, and what its
// buttons do.
import * as vscode from 'vscode';
import type { ChatAction } from './chat';
import { settings } from './config';
import { askForFolder, Ctx, hasFolder, noFolder } from './ctx';
import { PromptResult } from './protocol';

/** How many more messages the chat's "Show earlier messages" loads at a time. */
const EARLIER_PAGE = 200;

/** refreshChat redraws the chat from the session's history (compacted originals included): the last page, or
 * from the earliest message the chat already showed, or with earlier one page more. */
export async function refreshChat(ctx: Ctx, earlier = false) {
  const model = String((settings().provider as { model?: string } | undefined)?.model || '');
  const chat = ctx.chat;
  if (!ctx.client) {
    chat.post({ type: 'session', messages: [], notices: [], model, running: false, ...(hasFolder() ? {} : { title: 'no folder open', empty: noFolder, openFolder: true }) });
    return;
  }
  if (!ctx.session && !ctx.lastStatus) {
    chat.post({ type: 'session', messages: [], notices: [], model, title: 'no session yet', running: !!ctx.turn });
    return;
  }
  if (ctx.turn) {
    return; // the turn streams; the chat is redrawn when it ends
  }
  const id = ctx.currentSession();
  const params: Record<string, unknown> = { session: id, includeCompacted: true };
  const last = ctx.shown;
  const from = last && last.session === id ? last.from : undefined;
  if (from !== undefined) {
    params.offset = earlier ? Math.max(0, from - EARLIER_PAGE) : from;
    params.limit = 0;
  }
  // Only the answer to the latest request is drawn, and none once a turn streams: an older answer finishing
  // later would show a stale window or wipe the reply being streamed.
  const mine = ++ctx.chatRequests;
  try {
    const res = await ctx.client.sendRequest<{ session: { title?: string; id: string }; messages: unknown[] | null;
      offset: number; compactedMessages: number; }>('alisio/session', params);
    if (mine !== ctx.chatRequests || ctx.turn) {
      return;
    }
    ctx.shown = { session: res.session.id, from: res.offset ?? 0 };
    ctx.shownMessages = ctx.lastStatus?.session === res.session.id ? ctx.lastStatus.messages : undefined;
    chat.post({ type: 'session', messages: res.messages || [], notices: ctx.lastStatus?.session === res.session.id ? ctx.lastStatus.notices ?? [] : [], status: ctx.lastStatus, failedTurn: ctx.failedTurn, model,
      title: res.session.title || res.session.id, running: false, earlier: res.offset ?? 0, compacted: res.compactedMessages ?? 0, keepScroll: earlier });
  } catch (e) {
    ctx.output.error(`alisio/session: ${(e as Error).message}`);
  }
}

/** runTurn sends text to the agent; the chat shows the turn as it streams. */
export async function runTurn(ctx: Ctx, text: string) {
  const chat = ctx.chat;
  if (!ctx.client && !hasFolder()) {
    chat.post({ type: 'unsent', text }); // not drawn as sent, and kept in the input: nothing can run it yet
    return askForFolder();
  }
  if (ctx.turn) {
    chat.post({ type: 'unsent', text }); // back into the input, not lost
    void vscode.window.showWarningMessage('Alisio: a turn is already running; wait for it or press Stop.');
    return;
  }
  const turn = new vscode.CancellationTokenSource();
  ctx.turn = turn;
  ctx.failedTurn = undefined;
  chat.post({ type: 'turn', text });
  ctx.agentOutput.appendLine(`\n# ${text}`);
  let failure: string | undefined;
  const res = await ctx.request<PromptResult>('alisio/prompt', { session: ctx.session, text }, turn.token, (message) => { failure = message; });
  const stopped = turn.token.isCancellationRequested;
  turn.dispose();
  ctx.turn = undefined;
  if (res) {
    ctx.session = res.session;
    ctx.agentOutput.appendLine(`\n---\n${res.reply}${res.cut ? '\n(the reply was cut by limits.maxOutputTokens)' : ''}`);
  } else {
    // The marker stays where the reply would be, across redraws, until the next turn.
    ctx.failedTurn = { prompt: text, message: stopped ? 'The turn was stopped. What it did is kept; the next prompt continues.' : failure ?? 'The turn failed.' };
  }
  chat.post({ type: 'done' });
  await refreshChat(ctx);
}

/** onChatAction does what a button or the input of the chat asks. */
export async function onChatAction(ctx: Ctx, a: ChatAction) {
  switch (a.type) {
    case 'ready':
      ctx.chat.post({ type: 'question', question: ctx.questions.current() });
      return refreshChat(ctx);
    case 'answer':
      ctx.questions.answer(a.yes, a.id);
      return;
    case 'earlier':
      return refreshChat(ctx, true);
    case 'openFolder':
      await vscode.commands.executeCommand('vscode.openFolder');
      return;
    case 'send':
      return runTurn(ctx, a.text);
    case 'copy':
      await vscode.env.clipboard.writeText(a.text);
      vscode.window.setStatusBarMessage('Alisio: copied', 2000);
      return;
    case 'retry':
      if (ctx.failedTurn) {
        return runTurn(ctx, ctx.failedTurn.prompt);
      }
      return;
    case 'stop':
      ctx.turn?.cancel();
      return;
    case 'compact':
      await vscode.commands.executeCommand('alisio.compact');
      return refreshChat(ctx);
    case 'recover':
      await vscode.commands.executeCommand('alisio.recover');
      return refreshChat(ctx);
    case 'undoCompaction':
      await vscode.commands.executeCommand('alisio.undoCompaction');
      return refreshChat(ctx);
    case 'editCheckpoint':
      await vscode.commands.executeCommand('alisio.editCheckpoint');
      return;
    case 'switch':
      await vscode.commands.executeCommand('alisio.switchSession');
      return refreshChat(ctx);
    case 'new':
      await vscode.commands.executeCommand('alisio.newSession');
      return refreshChat(ctx);
  }
}
