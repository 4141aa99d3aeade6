// Starting alisio-lsp: finding it (or saying how to install it) and connecting the language client.
import * as vscode from 'vscode';
import { LanguageClient, LanguageClientOptions, ServerOptions, State } from 'vscode-languageclient/node';
import { findOnPath, serverCommand, settings } from './config';
import { approvalFeature, listenForApprovals } from './approval';
import { refreshChat } from './conversation';
import { Ctx, hasFolder } from './ctx';
import { onEvent } from './events';
import { onStatus, refreshStatus, render } from './status';

async function showInstall(cmd: string) {
  const choice = await vscode.window.showErrorMessage(
    `Alisio: the server '${cmd}' was not found. Install alisio-lsp or set alisio.serverPath.`, 'How to install', 'Open Settings');
  if (choice === 'How to install') {
    const doc = await vscode.workspace.openTextDocument({
      language: 'markdown',
      content: '# Installing alisio-lsp\n\nThe simplest: install the `.vsix` made for your system (`alisio-VERSION-linux-x64.vsix`, `darwin-arm64`, ' +
        '`win32-x64`, …): it carries the server, nothing else to install.\n\nOr put a release binary `alisio-lsp-VERSION-OS-ARCH` on PATH as ' +
        '`alisio-lsp`, or build it in an alisio-lsp checkout (Go 1.26):\n\n```sh\ngo build -o ~/.local/bin/alisio-lsp ./cmd/alisio-lsp\n```\n\n' +
        'Make sure `~/.local/bin` is on PATH, or set **alisio.serverPath** to the binary, then run **Alisio: Restart Server**.\n',
    });
    await vscode.window.showTextDocument(doc, { preview: true });
  } else if (choice === 'Open Settings') {
    await vscode.commands.executeCommand('workbench.action.openSettings', 'alisio.serverPath');
  }
}

/** startClient starts the server for the window's folder (none: with the first folder opened). */
export async function startClient(ctx: Ctx) {
  if (!hasFolder()) {
    // The server starts with the first folder (the agent never works in whatever directory VS Code runs in).
    ctx.output.info('no folder is open: the server starts with the first folder opened or added to this window');
    render(ctx, undefined);
    void refreshChat(ctx);
    return;
  }
  const cmd = serverCommand(vscode.workspace.getConfiguration('alisio').get<string>('serverPath'), ctx.extension.extensionPath);
  const resolved = findOnPath(cmd);
  if (!resolved) {
    await showInstall(cmd);
    return;
  }
  const serverOptions: ServerOptions = { command: resolved, args: ['serve'] };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: 'file' }],
    outputChannel: ctx.output,
    initializationOptions: { alisio: settings() },
    middleware: {
      workspace: {
        // The server pulls its section; serverPath is the extension's own and stays out.
        configuration: (params) => params.items.map((it) => (it.section === 'alisio' ? settings() : null)),
      },
    },
  };
  clientOptions.traceOutputChannel = ctx.output;
  const client = new LanguageClient('alisio', 'Alisio', serverOptions, clientOptions);
  ctx.client = client;
  client.onNotification('alisio/status', (st) => onStatus(ctx, st));
  client.onNotification('alisio/event', (ev) => onEvent(ctx, ev));
  client.registerFeature(approvalFeature);
  // A server that stops (a crash) ends what it was showing: the compaction's progress, the running turn.
  client.onDidChangeState((e) => {
    if (e.newState === State.Stopped) {
      ctx.compacting = false;
      ctx.endProgress?.();
      ctx.endProgress = undefined;
      render(ctx, undefined);
    }
  });
  listenForApprovals(ctx, client, ctx.proposals);
  await client.start();
  ctx.extension.subscriptions.push(client);
  render(ctx, undefined); // the meter shows from the start: "Alisio –" until the workspace has a session
  void refreshChat(ctx);
}

/** restartClient stops the server and starts it again, and says so once the meter is back. */
export async function restartClient(ctx: Ctx) {
  if (ctx.client) {
    await ctx.client.stop();
    ctx.client = undefined;
  }
  ctx.compacting = false;
  ctx.endProgress?.();
  ctx.endProgress = undefined;
  await startClient(ctx);
  if (ctx.client) {
    await refreshStatus(ctx);
    void vscode.window.showInformationMessage('Alisio: the server restarted.');
  }
}
