// Alisio: Edit Checkpoint and Alisio: Undo Compaction. The checkpoint opens as a JSON document of its own file
// system (alisio-checkpoint:/SESSION/alisio-checkpoint.json): the checkpoint schema checks it as you type
// (package.json's jsonValidation), and saving sends it to the daemon, which checks it again and stores it as a
// new version; a refused save says why and keeps the document as typed.
import * as vscode from 'vscode';
import { refreshChat } from './conversation';
import { Ctx } from './ctx';
import { CheckpointResult, errorKind, UndoCompactionResult } from './protocol';
import { refreshStatus } from './status';

export const checkpointScheme = 'alisio-checkpoint';

/** checkpointUri is the document of session's checkpoint. */
export function checkpointUri(session: string): vscode.Uri {
  return vscode.Uri.from({ scheme: checkpointScheme, path: `/${session}/alisio-checkpoint.json` });
}

function sessionOf(uri: vscode.Uri): string {
  return uri.path.split('/')[1] ?? '';
}

/** CheckpointFiles serves each session's checkpoint as a document: read from the daemon, saved to it. */
export class CheckpointFiles implements vscode.FileSystemProvider {
  private readonly changed = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.changed.event;
  private readonly mtimes = new Map<string, number>();
  /** The document Edit Checkpoint just asked the daemon for, by URI: the first read takes it instead of asking again. */
  private readonly fetched = new Map<string, CheckpointResult>();
  /** The documents whose session has no checkpoint any more (an undo removed it): shown as deleted. */
  private readonly gone = new Set<string>();
  /** The checkpoint each document was read from, by URI: a save is refused when another is in force by then. */
  private readonly bases = new Map<string, string>();

  constructor(private readonly ctx: Ctx) {}

  watch(): vscode.Disposable {
    return new vscode.Disposable(() => undefined);
  }

  stat(uri: vscode.Uri): vscode.FileStat {
    if (this.gone.has(uri.toString())) {
      throw vscode.FileSystemError.FileNotFound('Alisio: this session has no checkpoint any more: its compaction was undone');
    }
    return { type: vscode.FileType.File, ctime: 0, mtime: this.mtimes.get(uri.toString()) ?? Date.now(), size: 0 };
  }

  readDirectory(): [string, vscode.FileType][] {
    return [];
  }

  createDirectory(): void {
    throw vscode.FileSystemError.NoPermissions('Alisio: a checkpoint is one document');
  }

  /** opening says that the document of session is about to be opened with editable, fetched already. */
  opening(res: CheckpointResult) {
    this.gone.delete(checkpointUri(res.session).toString());
    this.fetched.set(checkpointUri(res.session).toString(), res);
  }

  async readFile(uri: vscode.Uri): Promise<Uint8Array> {
    let res = this.fetched.get(uri.toString());
    this.fetched.delete(uri.toString());
    if (res === undefined) {
      const client = this.ctx.client;
      if (!client) {
        throw vscode.FileSystemError.Unavailable('Alisio: the server is not running (Alisio: Restart Server)');
      }
      res = await client.sendRequest<CheckpointResult>('alisio/checkpoint', { session: sessionOf(uri) });
    }
    if (!res.editable) {
      throw vscode.FileSystemError.FileNotFound('Alisio: this session has no checkpoint yet (it has not been compacted)');
    }
    this.setBase(uri, res.id);
    return new TextEncoder().encode(JSON.stringify(res.editable, null, 2) + '\n');
  }

  async writeFile(uri: vscode.Uri, content: Uint8Array): Promise<void> {
    const client = this.ctx.client;
    if (!client) {
      throw vscode.FileSystemError.Unavailable('Alisio: the server is not running (Alisio: Restart Server)');
    }
    try {
      // Sent as typed: the daemon checks it and words every problem, as it does for the other editors.
      // base: the checkpoint the document was read from; the daemon refuses the save when a compaction or
      // another window wrote a newer one since.
      const saved = await client.sendRequest<CheckpointResult>('alisio/setCheckpoint', {
        session: sessionOf(uri), checkpoint: new TextDecoder().decode(content), base: this.bases.get(uri.toString()),
      });
      this.setBase(uri, saved.id); // the edit saved is the checkpoint in force now
    } catch (e) {
      const message = (e as { message?: string }).message || String(e);
      this.ctx.output.warn(`Edit Checkpoint: ${message} (${errorKind(e)})`);
      throw new Error(message); // VS Code says "Failed to save": the document stays as typed
    }
    this.mtimes.set(uri.toString(), Date.now());
    this.changed.fire([{ type: vscode.FileChangeType.Changed, uri }]);
    void vscode.window.showInformationMessage('Alisio: checkpoint saved; the next request sends it. Alisio: Undo Compaction puts back the checkpoint as it was before your saves since the last message.');
    await refreshStatus(this.ctx);
    await refreshChat(this.ctx);
  }

  /** changedOutside tells VS Code that session's checkpoint changed (an undo): an open document of it that
   * has no unsaved change shows the checkpoint now in force, or is marked deleted when none is left. */
  async changedOutside(session: string) {
    const uri = checkpointUri(session);
    const res = await this.ctx.client?.sendRequest<CheckpointResult>('alisio/checkpoint', { session }).catch(() => undefined);
    const none = res !== undefined && !res.editable;
    if (none) {
      this.gone.add(uri.toString());
    } else {
      this.gone.delete(uri.toString());
    }
    this.mtimes.set(uri.toString(), Date.now());
    this.changed.fire([{ type: none ? vscode.FileChangeType.Deleted : vscode.FileChangeType.Changed, uri }]);
  }

  private setBase(uri: vscode.Uri, id: string | undefined) {
    if (id) {
      this.bases.set(uri.toString(), id);
    } else {
      this.bases.delete(uri.toString());
    }
  }

  delete(): void {
    throw vscode.FileSystemError.NoPermissions('Alisio: a checkpoint cannot be deleted (Alisio: Undo Compaction undoes one)');
  }

  rename(): void {
    throw vscode.FileSystemError.NoPermissions('Alisio: a checkpoint cannot be renamed');
  }
}

/** editCheckpoint opens the current session's checkpoint for editing. */
export async function editCheckpoint(ctx: Ctx) {
  const session = ctx.currentSession();
  if (!session) {
    void vscode.window.showInformationMessage('Alisio: no session in this workspace yet, so no checkpoint. Alisio: Prompt starts one.');
    return;
  }
  const res = await ctx.request<CheckpointResult>('alisio/checkpoint', { session });
  if (!res) {
    return;
  }
  if (!res.editable) {
    void vscode.window.showInformationMessage('Alisio: this session has no checkpoint yet: it has not been compacted.');
    return;
  }
  ctx.checkpoints?.opening(res);
  const doc = await vscode.workspace.openTextDocument(checkpointUri(res.session));
  await vscode.window.showTextDocument(doc, { preview: false });
}

/** undoCompaction undoes the current session's last compaction (or reduction, or checkpoint edit) and says what
 * the daemon did, as a warning when the restored conversation will be compacted again. */
export async function undoCompaction(ctx: Ctx) {
  const res = await ctx.request<UndoCompactionResult>('alisio/undoCompaction', { session: ctx.currentSession() });
  if (!res) {
    return;
  }
  await ctx.checkpoints?.changedOutside(res.session);
  if (res.willCompact || res.overHardLimit) {
    void vscode.window.showWarningMessage(`Alisio: ${res.message}`, 'Compact with a Focus').then((c) => {
      if (c) {
        void vscode.commands.executeCommand('alisio.compact');
      }
    });
  } else {
    void vscode.window.showInformationMessage(`Alisio: ${res.message}`);
  }
  await refreshStatus(ctx);
  await refreshChat(ctx);
}
