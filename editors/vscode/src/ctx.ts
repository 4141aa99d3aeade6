// The extension's context: what its modules share while it runs (the client, the views, the session the meter
// shows, the running turn), and the one way they send a request, in the manner of rust-analyzer's Ctx.
import * as vscode from 'vscode';
import { LanguageClient } from 'vscode-languageclient/node';
import type { ChatView } from './chat';
import type { CheckpointFiles } from './checkpoint';
import type { Docs } from './docs';
import { Proposals, Questions } from './approval';
import { AlisioEvent, errorKind, Status } from './protocol';

/** noFolder says what to do in a window without a folder: the agent works only inside one. */
export const noFolder = 'Alisio works inside a folder: open your project (File > Open Folder…) and the agent works in it.';
// (It starts with "Alisio", so it is shown without the "Alisio: " of the other messages.)

/** hasFolder: the window has a folder for the agent to work in. */
export function hasFolder(): boolean {
  return (vscode.workspace.workspaceFolders?.length ?? 0) > 0;
}

/** askForFolder says that Alisio needs a folder, with a button that opens one. */
export async function askForFolder() {
  if (await vscode.window.showInformationMessage(noFolder, 'Open Folder') === 'Open Folder') {
    await vscode.commands.executeCommand('vscode.openFolder');
  }
}

/** What each kind of error offers to do next, and the commands behind the buttons. */
const errorActions: Record<string, string[]> = {
  contextBudget: ['Alisio: Compact', 'Alisio: New Session'],
  toolCatalog: ['Alisio: Show Tools'],
  uncertainCalls: ['Alisio: Recover Uncertain Tool Calls'],
  noProvider: ['Alisio: Set Up Provider'],
  modelCall: ['Alisio: Set Up Provider'],
};
const actionCommands: Record<string, string> = {
  'Alisio: Compact': 'alisio.compact', 'Alisio: New Session': 'alisio.newSession',
  'Alisio: Show Tools': 'alisio.showTools', 'Alisio: Undo Changes of the Last Turn': 'alisio.undoTurn', 'Alisio: Recover Uncertain Tool Calls': 'alisio.recover',
  'Alisio: Set Up Provider': 'alisio.setUpProvider',
};

export class Ctx {
  /** The language client while the server runs. */
  client: LanguageClient | undefined;
  /** The chat view and the read-only documents, set by activate. */
  chat!: ChatView;
  docs!: Docs;
  /** The checkpoint documents' file system (Alisio: Edit Checkpoint), told when an undo changes a checkpoint. */
  checkpoints: CheckpointFiles | undefined;
  /** The session the meter and the commands use (undefined: the server's latest for the workspace). */
  session: string | undefined;
  /** The last meter, and whether a compaction runs. */
  lastStatus: Status | undefined;
  compacting = false;
  /** Ends the "compacting…" notification. */
  endProgress: (() => void) | undefined;
  /** The running turn, stopped by the chat's Stop button; an @alisio turn's stream. */
  turn: vscode.CancellationTokenSource | undefined;
  turnListener: ((ev: AlisioEvent) => void) | undefined;
  /** The chat's window onto the session's history, and the count of its requests (only the latest is drawn). */
  shown: { session: string; from: number } | undefined;
  chatRequests = 0;
  /** The message count of the session the chat last drew: a status with another redraws it. */
  shownMessages: number | undefined;
  /** The last turn that failed or was stopped: the chat shows it under the conversation with Retry. */
  failedTurn: { prompt: string; message: string } | undefined;
  /** The pending redraw of an open Show Context document. */
  contextRedraw: ReturnType<typeof setTimeout> | undefined;
  /** The proposed texts the approval diffs show. */
  readonly proposals = new Proposals();
  /** The questions before a call runs that wait for the user: the chat's bar and the palette follow them. */
  readonly questions = new Questions((q) => {
    this.chat?.post({ type: 'question', question: q });
    void vscode.commands.executeCommand('setContext', 'alisio.asking', q !== undefined);
  });

  constructor(
    readonly extension: vscode.ExtensionContext,
    readonly output: vscode.LogOutputChannel,
    readonly agentOutput: vscode.OutputChannel,
    readonly item: vscode.StatusBarItem,
  ) {}

  /** The session the commands act on: the chosen one, else the one the meter shows. */
  currentSession(): string | undefined {
    return this.session ?? this.lastStatus?.session;
  }

  /** request sends a request to the server; a failure is shown to the user (and to onError, when given) with
   * what to do — the buttons follow the error's kind — and gives undefined. A request cancelled through token
   * is not a failure. */
  async request<T>(method: string, params: Record<string, unknown>, token?: vscode.CancellationToken, onError?: (message: string) => void): Promise<T | undefined> {
    if (!this.client && !hasFolder()) {
      onError?.(noFolder);
      void askForFolder();
      return undefined;
    }
    if (!this.client) {
      void vscode.window.showErrorMessage('Alisio: the server is not running (Alisio: Show Logs, Alisio: Restart Server).');
      return undefined;
    }
    try {
      return token ? await this.client.sendRequest<T>(method, params, token) : await this.client.sendRequest<T>(method, params);
    } catch (e) {
      const err = e as { message?: string };
      if (token?.isCancellationRequested) {
        return undefined;
      }
      onError?.(err.message || String(e));
      if (errorKind(e) === 'nothingToCompact') {
        this.output.info(`${method}: ${err.message || e}`);
        return undefined; // its compaction_skipped event said why, once
      }
      this.output.error(`${method}: ${err.message || e}`);
      // Not awaited: the caller goes on (a failed turn ends at once) while the message waits for the user.
      void vscode.window.showErrorMessage(`Alisio: ${err.message || e}`, ...(errorActions[errorKind(e)] ?? [])).then((choice) => {
        if (choice && actionCommands[choice]) {
          void vscode.commands.executeCommand(actionCommands[choice]);
        }
      });
      return undefined;
    }
  }
}
