// The meter in the status bar: drawn from the daemon's alisio/status, and asked for after a command.
import * as vscode from 'vscode';
import { Ctx, hasFolder, noFolder } from './ctx';
import { refreshChat } from './conversation';
import * as meter from './meter';
import { ContextResult, Status, ToolsDescription } from './protocol';

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
  refreshContext(ctx);
}

/** contextDocument is Show Context's document: what fills the context of session (before the workspace has a
 * session, what its first request will hold), asked for with request. */
export async function contextDocument(request: <T>(method: string, params: Record<string, unknown>) => Promise<T | undefined>,
  session: string | undefined): Promise<string | undefined> {
  const st = await request<Status>('alisio/status', { session, firstRequest: true });
  if (!st) {
    return undefined;
  }
  const parts = await request<ContextResult>('alisio/context', { session: st.session || undefined });
  const tools = await request<ToolsDescription>('alisio/tools', {});
  return meter.contextBreakdown(st, parts?.parts || [], tools?.sources || []);
}

/** refreshContext redraws Show Context's document while it is open, so that it tells what the meter does: at
 * most once a second, and quietly (a failure leaves it as it was). */
function refreshContext(ctx: Ctx) {
  if (ctx.contextRedraw || !ctx.docs?.isOpen('context.md')) {
    return;
  }
  ctx.contextRedraw = setTimeout(async () => {
    const client = ctx.client;
    const quiet = async <T>(method: string, params: Record<string, unknown>) => client?.sendRequest<T>(method, params).catch(() => undefined);
    const md = await contextDocument(quiet, ctx.session).catch(() => undefined);
    ctx.contextRedraw = undefined;
    if (md) {
      ctx.docs.update('context.md', md);
    }
  }, 1000);
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
