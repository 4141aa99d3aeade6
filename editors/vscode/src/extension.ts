// The Alisio extension: starts alisio-lsp, shows its context meter in the status bar, and offers its commands.
import * as vscode from 'vscode';
import * as fs from 'fs';
import * as path from 'path';
import { LanguageClient, LanguageClientOptions, ServerOptions } from 'vscode-languageclient/node';
import * as meter from './meter';
import { errorKind } from './protocol';
import { ChatAction, ChatView } from './chat';
import * as participant from './participant';

let client: LanguageClient | undefined;
let item: vscode.StatusBarItem;
let output: vscode.LogOutputChannel;
let agentOutput: vscode.OutputChannel;
let session: string | undefined;
let compacting = false;
let endProgress: (() => void) | undefined;
let chat: ChatView;
let turn: vscode.CancellationTokenSource | undefined; // the running turn, stopped by the chat's Stop button
let turnListener: ((ev: meter.AlisioEvent) => void) | undefined; // an @alisio turn's stream

/** The `alisio` settings as alisio-lsp reads them (serverPath is the extension's own). */
export function settings(): Record<string, unknown> {
  const all = JSON.parse(JSON.stringify(vscode.workspace.getConfiguration('alisio'))) as Record<string, unknown>;
  delete all.serverPath;
  return all;
}

/**
 * serverCommand is the server to run: alisio.serverPath when the user set it; else the binary a platform
 * .vsix carries in server/; else alisio-lsp from PATH.
 */
export function serverCommand(configured: string | undefined, extensionPath: string, platform = process.platform): string {
  if (configured) {
    return configured;
  }
  const bundled = path.join(extensionPath, 'server', platform === 'win32' ? 'alisio-lsp.exe' : 'alisio-lsp');
  return fs.existsSync(bundled) ? bundled : 'alisio-lsp';
}

/** findOnPath resolves the server command, or returns undefined when it does not exist. */
export function findOnPath(cmd: string, platform = process.platform): string | undefined {
  const exts = platform === 'win32' ? ['', '.exe', '.cmd'] : [''];
  if (cmd.includes('/') || cmd.includes(path.sep)) {
    return exts.map((e) => cmd + e).find((p) => fs.existsSync(p));
  }
  for (const dir of (process.env.PATH || '').split(path.delimiter)) {
    for (const e of exts) {
      const p = path.join(dir, cmd + e);
      if (dir && fs.existsSync(p)) {
        return p;
      }
    }
  }
  return undefined;
}

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

function onStatus(st: meter.Status) {
  if (session && st.session !== session) {
    return;
  }
  session = st.session;
  render(st);
  chat?.post({ type: 'status', status: st });
}

/** How many more messages the chat's "Show earlier messages" loads at a time. */
const EARLIER_PAGE = 200;

/** The chat's window onto the session's history: from which message it shows (undefined: the daemon's default
 * page, the last messages), and of which session. */
let shown: { session: string; from: number } | undefined;
/** Counts the chat's session requests, so that only the latest answer is drawn. */
let chatRequests = 0;

/** refreshChat redraws the chat from the session's history (compacted originals included): the last page, or
 * from the earliest message the chat already showed, or with earlier one page more. */
async function refreshChat(earlier = false) {
  const model = String((settings().provider as { model?: string } | undefined)?.model || '');
  if (!client) {
    chat.post({ type: 'session', messages: [], uncertain: [], model, running: false, ...(hasFolder() ? {} : { title: 'no folder open', empty: noFolder, openFolder: true }) });
    return;
  }
  if (!session && !lastStatus) {
    chat.post({ type: 'session', messages: [], uncertain: [], model, title: 'no session yet', running: !!turn });
    return;
  }
  if (turn) {
    return; // the turn streams; the chat is redrawn when it ends
  }
  const id = session ?? lastStatus?.session;
  const params: Record<string, unknown> = { session: id, includeCompacted: true };
  const last = shown;
  const from = last && last.session === id ? last.from : undefined;
  if (from !== undefined) {
    params.offset = earlier ? Math.max(0, from - EARLIER_PAGE) : from;
    params.limit = 0;
  }
  // Only the answer to the latest request is drawn, and none once a turn streams: an older answer finishing
  // later would show a stale window or wipe the reply being streamed.
  const mine = ++chatRequests;
  try {
    const res = await client.sendRequest<{ session: { title?: string; id: string }; messages: unknown[] | null; uncertainCalls: string[];
      offset: number; compactedMessages: number; }>('alisio/session', params);
    if (mine !== chatRequests || turn) {
      return;
    }
    shown = { session: res.session.id, from: res.offset ?? 0 };
    chat.post({ type: 'session', messages: res.messages || [], uncertain: res.uncertainCalls || [], status: lastStatus, model,
      title: res.session.title || res.session.id, running: false, earlier: res.offset ?? 0, compacted: res.compactedMessages ?? 0, keepScroll: earlier });
  } catch (e) {
    output.error(`alisio/session: ${(e as Error).message}`);
  }
}

/** runTurn sends text to the agent; the chat shows the turn as it streams. */
async function runTurn(text: string) {
  if (!client && !hasFolder()) {
    chat.post({ type: 'unsent', text }); // not drawn as sent, and kept in the input: nothing can run it yet
    return askForFolder();
  }
  if (turn) {
    void vscode.window.showWarningMessage('Alisio: a turn is already running; wait for it or press Stop.');
    return;
  }
  turn = new vscode.CancellationTokenSource();
  chat.post({ type: 'turn', text });
  agentOutput.appendLine(`\n# ${text}`);
  const res = await request<{ session: string; reply: string; cut: boolean }>('alisio/prompt', { session, text }, turn.token,
    (message) => chat.post({ type: 'done', error: message }));
  const stopped = turn.token.isCancellationRequested;
  turn.dispose();
  turn = undefined;
  if (res) {
    session = res.session;
    agentOutput.appendLine(`\n---\n${res.reply}${res.cut ? '\n(the reply was cut by limits.maxOutputTokens)' : ''}`);
    chat.post({ type: 'done' });
  } else if (stopped) {
    chat.post({ type: 'done', error: 'The turn was stopped. What it did is kept; the next prompt continues.' });
  }
  await refreshChat();
}

async function onChatAction(a: ChatAction) {
  switch (a.type) {
    case 'ready':
      return refreshChat();
    case 'earlier':
      return refreshChat(true);
    case 'openFolder':
      await vscode.commands.executeCommand('vscode.openFolder');
      return;
    case 'send':
      return runTurn(a.text);
    case 'stop':
      turn?.cancel();
      return;
    case 'compact':
      await vscode.commands.executeCommand('alisio.compact');
      return refreshChat();
    case 'recover':
      await vscode.commands.executeCommand('alisio.recover');
      return refreshChat();
    case 'switch':
      await vscode.commands.executeCommand('alisio.switchSession');
      return refreshChat();
    case 'new':
      await vscode.commands.executeCommand('alisio.newSession');
      return refreshChat();
  }
}

let lastStatus: meter.Status | undefined;

/** The read-only documents of Show Context and Show Checkpoint (alisio:context.md, alisio:checkpoint.md). */
const docs = new Map<string, string>();
const docsChanged = new vscode.EventEmitter<vscode.Uri>();

async function showDoc(name: string, content: string) {
  const uri = vscode.Uri.parse(`alisio:${name}`);
  docs.set(uri.path, content);
  docsChanged.fire(uri);
  await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri), { preview: true });
}

function render(st: meter.Status | undefined) {
  lastStatus = st ?? lastStatus;
  if (!lastStatus) {
    item.text = compacting ? '$(sync~spin) Alisio: compacting…' : meter.noSessionText;
    item.tooltip = hasFolder() ? 'Alisio: no session in this workspace yet. Alisio: Prompt starts one. Click for the Alisio menu.' : noFolder;
    item.backgroundColor = undefined;
    item.show();
    return;
  }
  item.text = meter.statusText(lastStatus, compacting);
  const md = new vscode.MarkdownString(meter.tooltip(lastStatus), true);
  md.isTrusted = true;
  item.tooltip = md;
  const lvl = meter.level(lastStatus);
  item.backgroundColor = lvl === 'ok' ? undefined : new vscode.ThemeColor(lvl === 'error' ? 'statusBarItem.errorBackground' : 'statusBarItem.warningBackground');
  item.show();
}

function onEvent(ev: meter.AlisioEvent) {
  switch (ev.type) {
    case 'compaction_started':
      compacting = true;
      render(undefined);
      if (!endProgress) {
        void vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `Alisio: compacting (${ev.reason})…` },
          () => new Promise<void>((resolve) => { endProgress = resolve; }));
      }
      break;
    case 'compaction_completed':
    case 'compaction_failed':
    case 'compaction_skipped':
      compacting = false;
      endProgress?.();
      endProgress = undefined;
      render(undefined);
      break;
    case 'delta':
      turnListener?.(ev);
      if (ev.text) {
        agentOutput.append(String(ev.text));
        chat.post({ type: 'delta', text: ev.text });
      }
      return;
    case 'tool_call':
      turnListener?.(ev);
      agentOutput.appendLine(`\n→ ${ev.name} ${ev.arguments}`);
      chat.post({ type: 'tool_call', id: ev.id, name: ev.name, arguments: ev.arguments });
      return;
    case 'tool_result':
      agentOutput.appendLine(`← ${ev.name}${ev.isError ? ' (failed)' : ''}, ${ev.chars} chars`);
      chat.post({ type: 'tool_result', id: ev.id, isError: ev.isError, chars: ev.chars });
      return;
  }
  const msg = meter.eventMessage(ev);
  if (!msg) {
    return;
  }
  if (msg.level === 'error') {
    void vscode.window.showErrorMessage(msg.text);
  } else if (msg.level === 'warning') {
    void vscode.window.showWarningMessage(msg.text, ...(msg.raiseBudget ? ['Raise compaction.maxOutputTokens'] : [])).then((c) => {
      if (c) {
        void vscode.commands.executeCommand('workbench.action.openSettings', 'alisio.compaction.maxOutputTokens');
      }
    });
  } else {
    void vscode.window.showInformationMessage(msg.text);
  }
}

/** noFolder says what to do in a window without a folder: the agent works only inside one. */
const noFolder = 'Alisio works inside a folder: open your project (File > Open Folder…) and the agent works in it.';
// (It starts with "Alisio", so it is shown without the "Alisio: " of the other messages.)

function hasFolder(): boolean {
  return (vscode.workspace.workspaceFolders?.length ?? 0) > 0;
}

/** askForFolder says that Alisio needs a folder, with a button that opens one. */
async function askForFolder() {
  if (await vscode.window.showInformationMessage(noFolder, 'Open Folder') === 'Open Folder') {
    await vscode.commands.executeCommand('vscode.openFolder');
  }
}

/** request sends a request to the server; a failure is shown to the user (and to onError, when given) with what
 * to do, and gives undefined. A request cancelled through token is not a failure. */
async function request<T>(method: string, params: Record<string, unknown>, token?: vscode.CancellationToken, onError?: (message: string) => void): Promise<T | undefined> {
  if (!client && !hasFolder()) {
    onError?.(noFolder);
    void askForFolder();
    return undefined;
  }
  if (!client) {
    void vscode.window.showErrorMessage('Alisio: the server is not running (Alisio: Show Logs, Alisio: Restart Server).');
    return undefined;
  }
  try {
    return token ? await client.sendRequest<T>(method, params, token) : await client.sendRequest<T>(method, params);
  } catch (e) {
    const err = e as { message?: string; code?: number };
    if (token?.isCancellationRequested) {
      return undefined;
    }
    output.error(`${method}: ${err.message || e}`);
    onError?.(err.message || String(e));
    const actions: Record<string, string[]> = {
      contextBudget: ['Alisio: Compact', 'Alisio: New Session'],
      toolCatalog: ['Alisio: Show Tools'],
      uncertainCalls: ['Alisio: Recover Uncertain Tool Calls'],
    };
    const choice = await vscode.window.showErrorMessage(`Alisio: ${err.message || e}`, ...(actions[errorKind(e)] ?? []));
    const commands: Record<string, string> = {
      'Alisio: Compact': 'alisio.compact', 'Alisio: New Session': 'alisio.newSession',
      'Alisio: Show Tools': 'alisio.showTools', 'Alisio: Recover Uncertain Tool Calls': 'alisio.recover',
    };
    if (choice && commands[choice]) {
      await vscode.commands.executeCommand(commands[choice]);
    }
    return undefined;
  }
}

async function refreshStatus() {
  const st = await request<meter.Status>('alisio/status', { session });
  if (st) {
    session = st.session;
    render(st);
  }
}

async function startClient(context: vscode.ExtensionContext) {
  if (!hasFolder()) {
    // The server starts with the first folder (the agent never works in whatever directory VS Code runs in).
    output.info('no folder is open: the server starts with the first folder opened or added to this window');
    render(undefined);
    void refreshChat();
    return;
  }
  const cmd = serverCommand(vscode.workspace.getConfiguration('alisio').get<string>('serverPath'), context.extensionPath);
  const resolved = findOnPath(cmd);
  if (!resolved) {
    await showInstall(cmd);
    return;
  }
  const serverOptions: ServerOptions = { command: resolved, args: ['serve'] };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: 'file' }],
    outputChannel: output,
    initializationOptions: { alisio: settings() },
    middleware: {
      workspace: {
        // The server pulls its section; serverPath is the extension's own and stays out.
        configuration: (params) => params.items.map((it) => (it.section === 'alisio' ? settings() : null)),
      },
    },
  };
  clientOptions.traceOutputChannel = output;
  client = new LanguageClient('alisio', 'Alisio', serverOptions, clientOptions);
  client.onNotification('alisio/status', onStatus);
  client.onNotification('alisio/event', onEvent);
  await client.start();
  context.subscriptions.push(client);
  render(undefined); // the meter shows from the start: "Alisio –" until the workspace has a session
  void refreshChat();
}

export async function activate(context: vscode.ExtensionContext) {
  output = vscode.window.createOutputChannel('Alisio', { log: true });
  agentOutput = vscode.window.createOutputChannel('Alisio: Agent');
  item = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Right, 100);
  item.command = 'alisio.menu';
  chat = new ChatView(context.extensionUri, (a) => void onChatAction(a));
  context.subscriptions.push(vscode.window.registerWebviewViewProvider('alisio.chat', chat));
  context.subscriptions.push(output, agentOutput, item, docsChanged,
    vscode.workspace.registerTextDocumentContentProvider('alisio', { onDidChange: docsChanged.event, provideTextDocumentContent: (uri) => docs.get(uri.path) ?? '' }));
  // Commands that reach the server ask for a folder first in a window without one (before asking for input).
  const anywhere = new Set(['alisio.openChat', 'alisio.menu', 'alisio.showLogs']);
  const register = (id: string, fn: (...args: unknown[]) => unknown) => context.subscriptions.push(vscode.commands.registerCommand(id,
    anywhere.has(id) ? fn : (...args: unknown[]) => (hasFolder() ? fn(...args) : askForFolder())));

  register('alisio.compact', async (focusArg?: unknown) => {
    const focus = typeof focusArg === 'string' ? focusArg
      : await vscode.window.showInputBox({ prompt: 'Alisio: what should the checkpoint focus on? (optional)', placeHolder: 'e.g. the parser bug' });
    if (focus === undefined) {
      return;
    }
    compacting = true;
    render(undefined);
    await request('alisio/compact', { session, focus: focus || undefined });
    compacting = false;
    render(undefined); // not "compacting…" any more, whatever the status says next
    await refreshStatus();
  });
  register('alisio.recover', async () => {
    if (!client) {
      return;
    }
    try {
      await client.sendRequest('alisio/recover', { session });
      void vscode.window.showInformationMessage('Alisio: no uncertain tool calls in this session.');
    } catch (e) {
      const message = (e as { message?: string }).message || String(e);
      const ok = await vscode.window.showWarningMessage(message, { modal: true }, 'Record that their outcome is unknown');
      if (ok) {
        const res = await request<{ recovered: number }>('alisio/recover', { session, acknowledge: true });
        if (res) {
          void vscode.window.showInformationMessage(`Alisio: recorded that ${res.recovered} tool call(s) have an unknown outcome; the session can continue.`);
        }
      }
    }
    await refreshStatus();
  });
  register('alisio.openChat', async () => {
    try {
      await vscode.commands.executeCommand('alisio.chat.focus');
    } catch {
      chat.openPanel(); // VS Code before 1.104: no secondary side bar view, an editor tab instead
    }
  });
  register('alisio.prompt', async (textArg?: unknown) => {
    const text = typeof textArg === 'string' ? textArg : await vscode.window.showInputBox({ prompt: 'Alisio: prompt' });
    if (!text) {
      return;
    }
    await vscode.commands.executeCommand('alisio.openChat');
    await runTurn(text);
  });
  register('alisio.newSession', async () => {
    const title = await vscode.window.showInputBox({ prompt: 'Alisio: title of the new session' });
    if (title === undefined) {
      return;
    }
    const res = await request<{ session: string }>('alisio/newSession', { title: title || undefined });
    if (res) {
      session = res.session;
      await refreshStatus();
    }
  });
  register('alisio.menu', async () => {
    // Without a folder, everything but the chat and the logs needs the server, which starts with a folder.
    const items = !hasFolder() ? [
      { label: '$(folder-opened) Open Folder', description: 'Alisio works inside a folder', command: 'vscode.openFolder' },
      { label: '$(comment-discussion) Open Chat', description: 'the conversation, and a prompt to the agent', command: 'alisio.openChat' },
      { label: '$(output) Show Logs', command: 'alisio.showLogs' },
    ] : [
      { label: '$(fold) Compact', description: 'summarize the older conversation now', command: 'alisio.compact' },
      { label: '$(comment-discussion) Open Chat', description: 'the conversation, and a prompt to the agent', command: 'alisio.openChat' },
      { label: '$(graph) Show Context', description: 'what fills the context', command: 'alisio.showContext' },
      { label: '$(tools) Show Tools', description: 'tool sources, MCP servers and plugins: turn them on or off', command: 'alisio.showTools' },
      { label: '$(bookmark) Show Checkpoint', command: 'alisio.showCheckpoint' },
      { label: '$(list-selection) Switch Session', command: 'alisio.switchSession' },
      { label: '$(add) New Session', command: 'alisio.newSession' },
      { label: '$(debug-restart) Restart Server', command: 'alisio.restartServer' },
      { label: '$(output) Show Logs', command: 'alisio.showLogs' },
    ];
    const pick = await vscode.window.showQuickPick(items, { placeHolder: 'Alisio' });
    if (pick) {
      await vscode.commands.executeCommand(pick.command);
    }
  });
  register('alisio.switchSession', async () => {
    const res = await request<{ sessions: { id: string; title: string; updatedAt: string; messages: number }[] }>('alisio/sessions', {});
    if (!res) {
      return;
    }
    if (res.sessions.length === 0) {
      void vscode.window.showInformationMessage('Alisio: no session in this workspace yet. Alisio: Prompt starts one.');
      return;
    }
    const current = session ?? lastStatus?.session;
    const pick = await vscode.window.showQuickPick(res.sessions.map((s) => ({
      label: `${s.id === current ? '$(check) ' : ''}${s.title || s.id}`,
      description: `${s.messages} messages · ${new Date(s.updatedAt).toLocaleString()}${s.id === current ? ' · current' : ''}`, id: s.id,
    })), { placeHolder: 'Alisio session' });
    if (pick) {
      session = pick.id;
      await refreshStatus();
    }
  });
  register('alisio.showCheckpoint', async () => {
    if (!session && !lastStatus) {
      void vscode.window.showInformationMessage('Alisio: no session in this workspace yet, so no checkpoint. Alisio: Prompt starts one.');
      return;
    }
    const res = await request<{ checkpoint: unknown; partial: boolean; text: string; replacedMessages: number; createdAt: string; relevantFilesChangedSince: string[] }>('alisio/checkpoint', { session });
    if (!res) {
      return;
    }
    if (!res.checkpoint) {
      void vscode.window.showInformationMessage('Alisio: this session has no checkpoint yet.');
      return;
    }
    let content = `# Checkpoint${res.partial ? ' (partial: raise compaction.maxOutputTokens)' : ''}\n\nWritten ${new Date(res.createdAt).toLocaleString()}, replacing ${res.replacedMessages} messages.\n\n${res.text}\n`;
    if (res.relevantFilesChangedSince?.length) {
      content += `\n## Changed since\n${res.relevantFilesChangedSince.map((f) => `- ${f}`).join('\n')}\n`;
    }
    await showDoc('checkpoint.md', content);
  });
  register('alisio.showContext', async () => {
    const st = await request<meter.Status>('alisio/status', { session });
    if (!st) {
      return;
    }
    const ctx = await request<{ parts: meter.ContextPart[] }>('alisio/context', { session: st.session });
    const tools = await request<{ sources: { source: string; chars: number; count: number }[] }>('alisio/tools', {});
    await showDoc('context.md', meter.contextBreakdown(st, ctx?.parts || [], tools?.sources || []));
  });
  register('alisio.showTools', async () => {
    const d = await request<meter.ToolsDescription>('alisio/tools', {});
    if (!d) {
      return;
    }
    const cfg = vscode.workspace.getConfiguration('alisio');
    const servers = cfg.get<Record<string, { disabled?: boolean }>>('mcpServers') || {};
    const plugins = cfg.get<{ name: string; disabled?: boolean }[]>('plugins') || [];
    const pick = await vscode.window.showQuickPick(meter.toolsItems(d, servers, plugins), { placeHolder: 'Alisio: tool sources (pick an MCP server or a plugin to turn it on or off)', matchOnDetail: true });
    if (!pick?.toggle) {
      return;
    }
    const { kind, name, disabled } = pick.toggle;
    // Written where the setting lives (workspace or user), so that the change is the one in force; it applies live.
    const where = cfg.inspect(kind)?.workspaceValue !== undefined ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
    if (kind === 'mcpServers') {
      await cfg.update('mcpServers', { ...servers, [name]: { ...servers[name], disabled: !disabled } }, where);
    } else {
      await cfg.update('plugins', plugins.map((p) => (p.name === name ? { ...p, disabled: !disabled } : p)), where);
    }
    void vscode.window.showInformationMessage(`Alisio: ${kind === 'mcpServers' ? 'MCP server' : 'plugin'} ${name} ${disabled ? 'enabled' : 'disabled'}; it applies from the next model call.`);
  });
  register('alisio.restartServer', async () => {
    if (client) {
      await client.stop();
      client = undefined;
    }
    await startClient(context);
  });
  register('alisio.showLogs', () => output.show());

  context.subscriptions.push(vscode.workspace.onDidChangeConfiguration((e) => {
    if (e.affectsConfiguration('alisio.serverPath')) {
      void vscode.commands.executeCommand('alisio.restartServer');
    } else if (e.affectsConfiguration('alisio') && client) {
      void client.sendNotification('workspace/didChangeConfiguration', { settings: { alisio: settings() } });
    }
  }));
  context.subscriptions.push(vscode.workspace.onDidChangeWorkspaceFolders(() => {
    if (!client && hasFolder()) {
      void startClient(context); // the first folder of a window that had none
    }
  }));
  await startClient(context);
  participant.register(context, {
    request: (method, params, token) => request(method, params, token),
    session: () => session ?? lastStatus?.session,
    turn: async (text, onEvent, token) => {
      turnListener = onEvent;
      try {
        const res = await request<{ session: string; reply: string; cut: boolean }>('alisio/prompt', { session, text }, token);
        if (res) {
          session = res.session;
        }
        return res;
      } finally {
        turnListener = undefined;
        await refreshChat();
      }
    },
  });
}

export async function deactivate() {
  if (client) {
    await client.stop();
  }
}
