// The Alisio extension: starts alisio-lsp, shows its context meter in the status bar, and offers its commands.
// This module only wires the others, by concern, as rust-analyzer's editors/code does:
//   ctx           what the modules share, and requests      config        settings and where the server is
//   server        starting the language client              status        the meter in the status bar
//   events        the daemon's alisio/event notifications    conversation  the chat's pages, turns and buttons
//   commands      the palette's commands                     docs          the read-only documents
//   protocol      the alisio/* types (mirror of Go's api)    meter, render, chat, webview, participant: views
import * as vscode from 'vscode';
import { ChatView } from './chat';
import { PROPOSED_SCHEME } from './approval';
import { CheckpointFiles, checkpointScheme } from './checkpoint';
import { registerCommands } from './commands';
import { settings } from './config';
import { onChatAction, refreshChat } from './conversation';
import { Ctx, hasFolder } from './ctx';
import { Docs } from './docs';
import * as participant from './participant';
import { PromptResult } from './protocol';
import { startClient } from './server';

export { findOnPath, serverCommand, settings } from './config';

let current: Ctx | undefined;

export async function activate(context: vscode.ExtensionContext) {
  const item = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Right, 100);
  item.command = 'alisio.menu';
  const ctx = new Ctx(context, vscode.window.createOutputChannel('Alisio', { log: true }), vscode.window.createOutputChannel('Alisio: Agent'), item);
  current = ctx;
  ctx.chat = new ChatView(context.extensionUri, (a) => void onChatAction(ctx, a));
  ctx.docs = new Docs();
  context.subscriptions.push(vscode.window.registerWebviewViewProvider('alisio.chat', ctx.chat));
  context.subscriptions.push(ctx.output, ctx.agentOutput, item, ctx.docs, vscode.workspace.registerTextDocumentContentProvider('alisio', ctx.docs),
    vscode.workspace.registerTextDocumentContentProvider(PROPOSED_SCHEME, ctx.proposals),
    vscode.workspace.registerFileSystemProvider(checkpointScheme, ctx.checkpoints = new CheckpointFiles(ctx), { isCaseSensitive: true }));
  registerCommands(ctx);

  context.subscriptions.push(vscode.workspace.onDidChangeConfiguration((e) => {
    if (e.affectsConfiguration('alisio.serverPath')) {
      void vscode.commands.executeCommand('alisio.restartServer');
    } else if (e.affectsConfiguration('alisio') && ctx.client) {
      void ctx.client.sendNotification('workspace/didChangeConfiguration', { settings: { alisio: settings() } });
    }
  }));
  context.subscriptions.push(vscode.workspace.onDidChangeWorkspaceFolders(() => {
    if (!ctx.client && hasFolder()) {
      void startClient(ctx); // the first folder of a window that had none
    }
  }));
  await startClient(ctx);
  participant.register(context, {
    request: (method, params, token) => ctx.request(method, params, token),
    session: () => ctx.currentSession(),
    turn: async (text, onEvent, token) => {
      ctx.turnListener = onEvent;
      try {
        const res = await ctx.request<PromptResult>('alisio/prompt', { session: ctx.session, text }, token);
        if (res) {
          ctx.session = res.session;
        }
        return res;
      } finally {
        ctx.turnListener = undefined;
        await refreshChat(ctx);
      }
    },
  });
}

export async function deactivate() {
  if (current?.client) {
    await current.client.stop();
  }
}
