// @alisio in VS Code's built-in Chat view, with /compact [focus], /context, /checkpoint, /undo, /recover and /new. VS Code
// runs a participant only when some language model is available, so the extension also offers Alisio itself as
// one (VS Code 1.104+, feature-detected: older versions get the chat view and the commands, not @alisio).
import * as vscode from 'vscode';
import * as meter from './meter';
import { argSummary } from './render';

/** What the participant needs from the extension: requests to the server, the session, and the turn. */
export interface Agent {
  request<T>(method: string, params: Record<string, unknown>, token?: vscode.CancellationToken): Promise<T | undefined>;
  session(): string | undefined;
  /** turn runs one agent turn, calling onEvent with its delta, tool_call and tool_result events. */
  turn(text: string, onEvent: (ev: meter.AlisioEvent) => void, token: vscode.CancellationToken): Promise<{ reply: string; cut: boolean } | undefined>;
}

/** handler answers one @alisio request: a slash command, or a prompt run as an agent turn that streams here. */
export function handler(agent: Agent): vscode.ChatRequestHandler {
  return async (req, _ctx, stream, token) => {
    const session = agent.session();
    switch (req.command) {
      case 'compact': {
        stream.progress(req.prompt ? `Compacting, focused on: ${req.prompt}` : 'Compacting…');
        const res = await agent.request<{ event: meter.AlisioEvent }>('alisio/compact', { session, focus: req.prompt || undefined }, token);
        const msg = res && meter.eventMessage(res.event);
        stream.markdown(msg ? msg.text.replace(/^Alisio: /, '') + '.' : 'The compaction did not run (the notification says why).');
        stream.button({ command: 'alisio.showCheckpoint', title: 'Show Checkpoint' });
        return;
      }
      case 'context': {
        const st = await agent.request<meter.Status>('alisio/status', { session }, token);
        if (!st) {
          return;
        }
        const ctx = await agent.request<{ parts: meter.ContextPart[] }>('alisio/context', { session: st.session }, token);
        const tools = await agent.request<meter.ToolsDescription>('alisio/tools', {}, token);
        stream.markdown(meter.contextBreakdown(st, ctx?.parts || [], tools?.sources || []));
        stream.button({ command: 'alisio.compact', title: 'Compact' });
        return;
      }
      case 'checkpoint': {
        const res = await agent.request<{ checkpoint: unknown; text: string; partial: boolean; replacedMessages: number }>('alisio/checkpoint', { session }, token);
        if (res) {
          stream.markdown(res.checkpoint ? `**Checkpoint**${res.partial ? ' (partial)' : ''}, replacing ${res.replacedMessages} messages:\n\n${res.text}` : 'This session has no checkpoint yet.');
        }
        return;
      }
      case 'undo': {
        const res = await agent.request<{ message: string }>('alisio/undoCompaction', { session }, token);
        if (res) {
          stream.markdown(res.message);
          stream.button({ command: 'alisio.showCheckpoint', title: 'Show Checkpoint' });
        }
        return;
      }
      case 'recover': {
        const st = await agent.request<meter.Status>('alisio/status', { session }, token);
        const calls = st?.uncertainCalls || [];
        if (calls.length === 0) {
          stream.markdown('Nothing to recover: no tool call of this session was cut off by a crash.');
          return;
        }
        stream.markdown(`${calls.length} tool ${calls.length === 1 ? 'call was' : 'calls were'} cut off by a crash: ${calls.join(', ')}. ${calls.length === 1 ? 'Its' : 'Their'} outcome is unknown.`);
        stream.button({ command: 'alisio.recover', title: 'Record their outcome as unknown' });
        return;
      }
      case 'new': {
        const res = await agent.request<{ session: string }>('alisio/newSession', { title: req.prompt || undefined }, token);
        if (res) {
          stream.markdown(`Started a new session${req.prompt ? ` (“${req.prompt}”)` : ''}.`);
        }
        return;
      }
    }
    const done = await agent.turn(req.prompt, (ev) => {
      if (ev.type === 'delta' && ev.text) {
        stream.markdown(String(ev.text));
      } else if (ev.type === 'tool_call') {
        stream.progress(`${ev.name} ${argSummary(String(ev.arguments || ''))}`);
      }
    }, token);
    if (done?.cut) {
      stream.markdown('\n\n_The reply was cut by limits.maxOutputTokens._');
    }
    stream.button({ command: 'alisio.openChat', title: 'Open the Alisio chat' });
  };
}

/** register adds @alisio and the Alisio language model where this VS Code has the APIs; it says which. */
export function register(context: vscode.ExtensionContext, agent: Agent): boolean {
  // The language-model provider API is newer than the @types/vscode this builds against (1.91): reached untyped.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const api = vscode as any;
  const lm = api.lm;
  if (!vscode.chat?.createChatParticipant || typeof lm?.registerLanguageModelChatProvider !== 'function') {
    return false;
  }
  const participant = vscode.chat.createChatParticipant('alisio.agent', handler(agent));
  participant.iconPath = vscode.Uri.joinPath(context.extensionUri, 'media', 'alisio.svg');
  context.subscriptions.push(participant);
  const model = { id: 'alisio', name: 'Alisio', family: 'alisio', version: '1', maxInputTokens: 128000, maxOutputTokens: 4096,
    tooltip: 'The alisio-lsp agent', capabilities: { toolCalling: true, imageInput: false } };
  context.subscriptions.push(lm.registerLanguageModelChatProvider('alisio', {
    provideLanguageModelChatInformation: () => [model],
    provideLanguageModelChatResponse: async (_m: unknown, messages: { role: number; content: unknown[] }[], _o: unknown,
      progress: vscode.Progress<unknown>, token: vscode.CancellationToken) => {
      const last = [...messages].reverse().find((m) => m.role === vscode.LanguageModelChatMessageRole.User);
      const text = (last?.content || []).map((p) => (p instanceof api.LanguageModelTextPart ? (p as { value: string }).value : '')).join('');
      await agent.turn(text, (ev) => {
        if (ev.type === 'delta' && ev.text) {
          progress.report(new api.LanguageModelTextPart(String(ev.text)));
        }
      }, token);
    },
    provideTokenCount: async (_m: unknown, text: unknown) => Math.ceil(String(typeof text === 'string' ? text : JSON.stringify(text)).length / 4),
  }));
  // Loaded now, so that the chat has a model when the user first types @alisio.
  void lm.selectChatModels?.({ vendor: 'alisio' });
  return true;
}
