// The commands of the palette, the status bar menu and the chat's buttons (package.json lists them).
import * as vscode from 'vscode';
import { undoTurn } from './approval';
import { editCheckpoint, undoCompaction } from './checkpoint';
import { setUpProvider } from './setup';
import { refreshChat, runTurn } from './conversation';
import { askForFolder, Ctx, hasFolder } from './ctx';
import * as meter from './meter';
import { SessionsResult } from './protocol';
import { restartClient } from './server';
import { contextDocument, refreshStatus, render } from './status';

/** The most of a file Add Selection puts in a prompt whole; a larger one goes by its path (the agent reads it). */
const maxAttachedChars = 20000;

/** attachment is the active editor's selected lines (whole lines, from the first the selection touches to the
 * last it reaches into), or its whole file when nothing is selected, as a block for a prompt: its path relative
 * to the workspace, the lines, and the text fenced in the file's language. */
export function attachment(editor: vscode.TextEditor | undefined): string | undefined {
  if (!editor) {
    return undefined;
  }
  const doc = editor.document;
  const where = vscode.workspace.asRelativePath(doc.uri, false);
  const sel = editor.selection;
  const whole = sel.isEmpty;
  // A selection that ends at the start of a line (Shift+↓, a triple click) does not take that line.
  const first = sel.start.line;
  const last = !whole && sel.end.line > first && sel.end.character === 0 ? sel.end.line - 1 : sel.end.line;
  const text = whole ? doc.getText() : doc.getText(new vscode.Range(first, 0, last, doc.lineAt(last).text.length));
  if (whole && text.length > maxAttachedChars) {
    return `The file \`${where}\` (${doc.lineCount} lines, too large to paste here: read it).`;
  }
  const lines = whole ? '' : first === last ? ` line ${first + 1}` : ` lines ${first + 1}–${last + 1}`;
  const fenceMark = text.includes('```') ? '````' : '```';
  return `\`${where}\`${lines}:\n${fenceMark}${doc.languageId === 'plaintext' ? '' : doc.languageId}\n${text.replace(/\n$/, '')}\n${fenceMark}\n`;
}

/** registerCommands registers every command; those that reach the server ask for a folder first in a window
 * without one (before asking for input). */
export function registerCommands(ctx: Ctx) {
  const anywhere = new Set(['alisio.openChat', 'alisio.menu', 'alisio.showLogs']);
  const register = (id: string, fn: (...args: unknown[]) => unknown) => ctx.extension.subscriptions.push(vscode.commands.registerCommand(id,
    anywhere.has(id) ? fn : (...args: unknown[]) => (hasFolder() ? fn(...args) : askForFolder())));

  register('alisio.compact', async (focusArg?: unknown) => {
    const focus = typeof focusArg === 'string' ? focusArg
      : await vscode.window.showInputBox({ prompt: 'Alisio: what should the checkpoint focus on? (optional)', placeHolder: 'e.g. the parser bug' });
    if (focus === undefined) {
      return;
    }
    ctx.compacting = true;
    render(ctx, undefined);
    await ctx.request('alisio/compact', { session: ctx.session, focus: focus || undefined });
    ctx.compacting = false;
    render(ctx, undefined); // not "compacting…" any more, whatever the status says next
    await refreshStatus(ctx);
  });
  // The question before an edit or a command runs, answered from the palette or the diff editor's title.
  for (const [id, yes] of [['alisio.accept', true], ['alisio.reject', false]] as const) {
    register(id, () => {
      if (!ctx.questions.answer(yes)) {
        void vscode.window.showInformationMessage('Alisio: no change or command is waiting for your answer.');
      }
    });
  }
  register('alisio.recover', async () => {
    if (!ctx.client) {
      return;
    }
    try {
      await ctx.client.sendRequest('alisio/recover', { session: ctx.session });
      void vscode.window.showInformationMessage('Alisio: no uncertain tool calls in this session.');
    } catch (e) {
      const message = (e as { message?: string }).message || String(e);
      const ok = await vscode.window.showWarningMessage(message, { modal: true }, 'Record that their outcome is unknown');
      if (ok) {
        const res = await ctx.request<{ recovered: number }>('alisio/recover', { session: ctx.session, acknowledge: true });
        if (res) {
          void vscode.window.showInformationMessage(`Alisio: recorded that ${res.recovered} tool ${res.recovered === 1 ? 'call has' : 'calls have'} an unknown outcome; the session can continue.`);
        }
      }
    }
    await refreshStatus(ctx);
  });
  register('alisio.openChat', async () => {
    try {
      await vscode.commands.executeCommand('alisio.chat.focus');
    } catch {
      ctx.chat.openPanel(); // VS Code before 1.104: no secondary side bar view, an editor tab instead
    }
    ctx.chat.toInput({ type: 'focus' });
  });
  register('alisio.addSelection', async () => {
    const text = attachment(vscode.window.activeTextEditor);
    if (!text) {
      void vscode.window.showInformationMessage('Alisio: open a file (and select lines, if you want only those); Alisio: Add Selection to Alisio then puts it in the next prompt.');
      return;
    }
    await vscode.commands.executeCommand('alisio.openChat');
    ctx.chat.toInput({ type: 'attach', text });
  });
  register('alisio.prompt', async (textArg?: unknown) => {
    const text = typeof textArg === 'string' ? textArg : await vscode.window.showInputBox({ prompt: 'Alisio: prompt' });
    if (!text) {
      return;
    }
    await vscode.commands.executeCommand('alisio.openChat');
    await runTurn(ctx, text);
  });
  register('alisio.newSession', async () => {
    const title = await vscode.window.showInputBox({ prompt: 'Alisio: title of the new session' });
    if (title === undefined) {
      return;
    }
    const res = await ctx.request<{ session: string }>('alisio/newSession', { title: title || undefined });
    if (res) {
      ctx.session = res.session;
      await refreshStatus(ctx);
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
      { label: '$(edit) Edit Checkpoint', description: 'correct what the checkpoint says', command: 'alisio.editCheckpoint' },
      { label: '$(history) Undo Compaction', description: 'the conversation as it was before the last compaction', command: 'alisio.undoCompaction' },
      { label: '$(list-selection) Switch Session', command: 'alisio.switchSession' },
      { label: '$(add) New Session', command: 'alisio.newSession' },
      { label: '$(discard) Undo Changes of the Last Turn', description: 'put back the files the last turn wrote', command: 'alisio.undoTurn' },
      { label: '$(debug-restart) Restart Server', command: 'alisio.restartServer' },
      { label: '$(output) Show Logs', command: 'alisio.showLogs' },
    ];
    const pick = await vscode.window.showQuickPick(items, { placeHolder: 'Alisio' });
    if (pick) {
      await vscode.commands.executeCommand(pick.command);
    }
  });
  register('alisio.switchSession', async () => {
    const res = await ctx.request<SessionsResult>('alisio/sessions', {});
    if (!res) {
      return;
    }
    if (res.sessions.length === 0) {
      void vscode.window.showInformationMessage('Alisio: no session in this workspace yet. Alisio: Prompt starts one.');
      return;
    }
    const current = ctx.currentSession();
    const pick = await vscode.window.showQuickPick(res.sessions.map((s) => ({
      label: `${s.id === current ? '$(check) ' : ''}${s.title || s.id}`,
      description: `${s.messages} messages${s.compactedMessages ? ` (+${s.compactedMessages} compacted, kept)` : ''} · ${new Date(s.updatedAt).toLocaleString()}${s.id === current ? ' · current' : ''}`, id: s.id,
    })), { placeHolder: 'Alisio session' });
    if (pick) {
      ctx.session = pick.id;
      await refreshStatus(ctx);
    }
  });
  register('alisio.showCheckpoint', async () => {
    if (!ctx.currentSession()) {
      void vscode.window.showInformationMessage('Alisio: no session in this workspace yet, so no checkpoint. Alisio: Prompt starts one.');
      return;
    }
    const res = await ctx.request<{ checkpoint: unknown; partial: boolean; text: string; replacedMessages: number; createdAt: string; relevantFilesChangedSince: string[] }>('alisio/checkpoint', { session: ctx.session });
    if (!res) {
      return;
    }
    if (!res.checkpoint) {
      void vscode.window.showInformationMessage('Alisio: this session has no checkpoint yet.');
      return;
    }
    let content = `# Checkpoint${res.partial ? ' (partial: raise alisio.compaction.maxOutputTokens)' : ''}\n\nWritten ${new Date(res.createdAt).toLocaleString()}, replacing ${res.replacedMessages} messages.\n\n${res.text}\n`;
    if (res.relevantFilesChangedSince?.length) {
      content += `\n## Changed since\n${res.relevantFilesChangedSince.map((f) => `- ${f}`).join('\n')}\n`;
    }
    await ctx.docs.show('checkpoint.md', content);
  });
  register('alisio.showContext', async () => {
    const md = await contextDocument((method, params) => ctx.request(method, params), ctx.session);
    if (md) {
      await ctx.docs.show('context.md', md, true);
    }
  });
  register('alisio.showTools', async () => {
    const d = await ctx.request<meter.ToolsDescription>('alisio/tools', {});
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
  register('alisio.restartServer', () => restartClient(ctx));
  register('alisio.setUpProvider', () => setUpProvider(ctx));
  register('alisio.undoTurn', async () => {
    await undoTurn(ctx);
    await refreshChat(ctx);
  });
  register('alisio.undoCompaction', () => undoCompaction(ctx));
  register('alisio.editCheckpoint', () => editCheckpoint(ctx));
  register('alisio.showLogs', () => ctx.output.show());
}
