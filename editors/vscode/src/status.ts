// The meter in the status bar: drawn from the daemon's alisio/status, and asked for after a command.
import * as vscode from 'vscode';
import { Ctx, hasFolder, noFolder } from './ctx';
import { refreshChat } from './conversation';
import * as meter from './meter';
import { Status } from './protocol';

/** render draws the meter from st (undefined: the last one), or "Alisio –" before the workspace has a session. */
export function render(ctx: Ctx, st: Status | undefined) {
  const item = ctx.item;
  ctx.lastStatus = st ?? ctx.lastStatus;
  if (!ctx.lastStatus) {
    item.text = ctx.compacting ? '$(sync~spin) Alisio: compacting…' : meter.noSessionText;
    item.tooltip = hasFolder() ? 'Alisio: no session in this workspace yet. Alisio: Prompt starts one. Click for the Alisio menu.' : noFolder;
    item.backgroundColor = undefined;
    item.show();
    return;
  }
  item.text = meter.statusText(ctx.lastStatus, ctx.compacting);
  const md = new vscode.MarkdownString(meter.tooltip(ctx.lastStatus), true);
  md.isTrusted = true;
  item.tooltip = md;
  const lvl = meter.level(ctx.lastStatus);
  item.backgroundColor = lvl === 'ok' ? undefined : new vscode.ThemeColor(lvl === 'error' ? 'statusBarItem.errorBackground' : 'statusBarItem.warningBackground');
  item.show();
}

/** onStatus takes an alisio/status notification of the session shown (or the first one). */
export function onStatus(ctx: Ctx, st: Status) {
  if (ctx.session && st.session !== ctx.session) {
    return;
  }
  ctx.session = st.session;
  render(ctx, st);
  ctx.chat?.post({ type: 'status', status: st });
  // One source of truth: whoever changed the session (a command, the menu, another window, the CLI), the chat
  // redraws from it when it shows another session or another count of messages — never during a turn.
  if (!ctx.turn && (ctx.shown?.session !== st.session || ctx.shownMessages !== st.messages)) {
    ctx.shownMessages = st.messages;
    void refreshChat(ctx);
  }
}

/** refreshStatus asks for the meter of the current session. */
export async function refreshStatus(ctx: Ctx) {
  const st = await ctx.request<Status>('alisio/status', { session: ctx.session });
  if (st) {
    ctx.session = st.session;
    render(ctx, st);
  }
}
