// Review before it lands: the daemon asks (alisio/approve) before an edit, a write or a command runs. An edit
// opens in a diff editor — the file as it is against the proposed text — with Accept and Reject; a command asks
// Run or Skip, in a notification and on the chat's bar. "Alisio: Undo Changes of the Last Turn" puts back what a
// turn wrote.
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

/** A question the daemon asked before a call runs, in the user's words: its text and the two answers. */
export interface Question {
  id: string;
  text: string;
  yes: string;
  no: string;
}

/** Questions holds the questions the user has not answered yet. A notification hides itself after a few seconds,
 * so each question is also on the chat's bar, on the diff editor's title (✓ and ✗) and in the palette
 * ("Alisio: Accept the Proposal", "Alisio: Reject the Proposal"): the first answer from any of them counts. */
export class Questions {
  private open = new Map<string, { q: Question; answer: (yes: boolean) => void }>();

  /** changed is told the question to show (the oldest open one), or undefined when none is left. */
  constructor(private readonly changed: (q: Question | undefined) => void) {}

  /** current is the oldest question still open. */
  current(): Question | undefined {
    return this.open.values().next().value?.q;
  }

  /** wait opens q; the promise gives the answer given through answer. */
  wait(q: Question): Promise<boolean> {
    const answered = new Promise<boolean>((resolve) => this.open.set(q.id, { q, answer: resolve }));
    this.changed(this.current());
    return answered;
  }

  /** answer answers the question id, or the oldest when id is undefined; false when none was open. */
  answer(yes: boolean, id?: string): boolean {
    const key = id ?? this.open.keys().next().value;
    const entry = key === undefined ? undefined : this.open.get(key);
    if (!entry) {
      return false;
    }
    entry.answer(yes);
    this.close(key!);
    return true;
  }

  /** close forgets the question id (answered, or withdrawn by the daemon). */
  close(id: string) {
    if (this.open.delete(id)) {
      this.changed(this.current());
    }
  }
}

/** listenForApprovals answers the daemon's alisio/approve requests on client. */
export function listenForApprovals(ctx: Ctx, client: LanguageClient, proposals: Proposals) {
  client.onRequest('alisio/approve', async (p: ApproveParams, token: vscode.CancellationToken) => ({ approved: await ask(ctx, p, proposals, token) }));
}

/** decide shows q until the user answers it — in the notification (closing it says no), the chat, the diff's
 * title or the palette — or the daemon withdraws it (the turn stopped, no answer in time: a no). */
async function decide(ctx: Ctx, q: Question, show: Thenable<string | undefined>, token: vscode.CancellationToken): Promise<boolean> {
  const withdrawn = new Promise<boolean>((resolve) => token.onCancellationRequested(() => resolve(false)));
  try {
    return await Promise.race([show.then((choice) => choice === q.yes), ctx.questions.wait(q), withdrawn]);
  } finally {
    ctx.questions.close(q.id);
  }
}

/** ask shows the call and waits for the user's answer. */
async function ask(ctx: Ctx, p: ApproveParams, proposals: Proposals, token: vscode.CancellationToken): Promise<boolean> {
  if (p.kind === 'command') {
    ctx.output.info(`approval asked: run ${p.command}`);
    const q = { id: `${p.session}/${p.call.id}`, text: `Alisio wants to run: ${p.command}`, yes: 'Run', no: 'Skip' };
    return decide(ctx, q, vscode.window.showWarningMessage(q.text, q.yes, q.no), token);
  }
  const path = p.path ?? '?';
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
  const right = proposals.add(path, p.newText ?? '');
  const left = p.exists && folder ? vscode.Uri.joinPath(folder, path) : proposals.add(path + ' (new file)', '');
  ctx.output.info(`approval asked: ${p.exists ? 'edit' : 'create'} ${path}`);
  try {
    await vscode.commands.executeCommand('vscode.diff', left, right, `${path}: Alisio's proposed change`, { preview: true });
    const q = { id: `${p.session}/${p.call.id}`, text: `Alisio wants to ${p.exists ? 'change' : 'create'} ${path}: review the diff.`, yes: 'Accept', no: 'Reject' };
    return await decide(ctx, q, vscode.window.showInformationMessage(q.text, q.yes, q.no), token);
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
