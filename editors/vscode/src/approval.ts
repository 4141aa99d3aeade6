// Review before it lands: the daemon asks (alisio/approve) before an edit, a write or a command runs. An edit
// opens in a diff editor — the file as it is against the proposed text — with Accept and Reject; a command asks
// Run or Skip. "Alisio: Undo Changes of the Last Turn" puts back what a turn wrote.
import * as vscode from 'vscode';
import { LanguageClient } from 'vscode-languageclient/node';
import { Ctx } from './ctx';
import { ApproveParams, UndoTurnResult } from './protocol';

/** The scheme of the proposed texts the diff editor shows on its right. */
export const PROPOSED_SCHEME = 'alisio-proposed';

/** Proposals serves the proposed texts by their URI's query (one per question). */
export class Proposals implements vscode.TextDocumentContentProvider {
  private texts = new Map<string, string>();
  private seq = 0;

  /** add keeps text and returns the URI that shows it, named after path. */
  add(path: string, text: string): vscode.Uri {
    const key = String(++this.seq);
    this.texts.set(key, text);
    return vscode.Uri.from({ scheme: PROPOSED_SCHEME, path: '/' + path, query: key });
  }

  /** drop forgets the text of uri. */
  drop(uri: vscode.Uri) {
    this.texts.delete(uri.query);
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.query) ?? '';
  }
}

/** approvalFeature announces in initialize that this client answers alisio/approve requests, and that it is VS Code
 * (messages then name its commands and settings only). */
export const approvalFeature = {
  fillClientCapabilities(caps: { experimental?: Record<string, unknown> }) {
    caps.experimental = { ...(caps.experimental ?? {}), alisio: { approve: 'request', editor: 'vscode' } };
  },
  initialize() {},
  getState: () => ({ kind: 'static' as const }),
  clear() {},
};

/** listenForApprovals answers the daemon's alisio/approve requests on client. */
export function listenForApprovals(ctx: Ctx, client: LanguageClient, proposals: Proposals) {
  client.onRequest('alisio/approve', async (p: ApproveParams, token: vscode.CancellationToken) => ({ approved: await ask(ctx, p, proposals, token) }));
}

/** ask shows the call and waits for the user's answer; a question the daemon withdraws (the turn stopped, no
 * answer in time) counts as a rejection. */
async function ask(ctx: Ctx, p: ApproveParams, proposals: Proposals, token: vscode.CancellationToken): Promise<boolean> {
  const withdrawn = new Promise<undefined>((resolve) => token.onCancellationRequested(() => resolve(undefined)));
  if (p.kind === 'command') {
    ctx.output.info(`approval asked: run ${p.command}`);
    const choice = await Promise.race([vscode.window.showWarningMessage(`Alisio wants to run: ${p.command}`, 'Run', 'Skip'), withdrawn]);
    return choice === 'Run';
  }
  const path = p.path ?? '?';
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
  const right = proposals.add(path, p.newText ?? '');
  const left = p.exists && folder ? vscode.Uri.joinPath(folder, path) : proposals.add(path + ' (new file)', '');
  ctx.output.info(`approval asked: ${p.exists ? 'edit' : 'create'} ${path}`);
  try {
    await vscode.commands.executeCommand('vscode.diff', left, right, `${path}: Alisio's proposed change`, { preview: true });
    const choice = await Promise.race([vscode.window.showInformationMessage(
      `Alisio wants to ${p.exists ? 'change' : 'create'} ${path}: review the diff.`, 'Accept', 'Reject'), withdrawn]);
    return choice === 'Accept';
  } finally {
    await closeTabsOf(right);
    proposals.drop(right);
    if (left.scheme === PROPOSED_SCHEME) {
      proposals.drop(left);
    }
  }
}

/** closeTabsOf closes the diff editors that show uri. */
async function closeTabsOf(uri: vscode.Uri) {
  const groups = vscode.window.tabGroups;
  if (!groups?.all) {
    return;
  }
  const tabs = groups.all.flatMap((g) => g.tabs).filter((t) => {
    const input = t.input as { modified?: vscode.Uri } | undefined;
    return input?.modified?.toString() === uri.toString();
  });
  if (tabs.length > 0) {
    await groups.close(tabs);
  }
}

/** undoTurn puts back the files the last turn wrote ("Alisio: Undo Changes of the Last Turn"); files changed
 * since are restored only when the user confirms. */
export async function undoTurn(ctx: Ctx) {
  const session = ctx.currentSession();
  let res = await ctx.request<UndoTurnResult>('alisio/undoTurn', { session });
  if (!res) {
    return;
  }
  const changed = res.changedSince ?? [];
  const restored = [...(res.restored ?? [])];
  if (changed.length > 0) {
    const choice = await vscode.window.showWarningMessage(
      `Alisio: ${changed.join(', ')} changed after the turn wrote ${changed.length === 1 ? 'it' : 'them'}, so ${changed.length === 1 ? 'it was' : 'they were'} left as ${changed.length === 1 ? 'it is' : 'they are'}.`,
      'Restore Anyway', 'Keep');
    if (choice === 'Restore Anyway') {
      res = await ctx.request<UndoTurnResult>('alisio/undoTurn', { session: res.session, force: true });
      restored.push(...(res?.restored ?? []));
    }
  }
  if (restored.length > 0) {
    void vscode.window.showInformationMessage(`Alisio: undid the last turn's changes to ${restored.join(', ')}.`);
  }
}
