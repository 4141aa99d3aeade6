// What the daemon's alisio/event notifications do: the compaction's progress and its sentence (made by the
// daemon), the turn's stream into the chat and the agent's output.
import * as vscode from 'vscode';
import { Ctx } from './ctx';
import * as meter from './meter';
import { AlisioEvent } from './protocol';
import { render } from './status';

export function onEvent(ctx: Ctx, ev: AlisioEvent) {
  switch (ev.type) {
    case 'compaction_started':
      ctx.compacting = true;
      render(ctx, undefined);
      if (!ctx.endProgress) {
        void vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `Alisio: ${ev.summary ?? 'compacting…'}` },
          () => new Promise<void>((resolve) => { ctx.endProgress = resolve; }));
      }
      break;
    case 'compaction_completed':
    case 'compaction_failed':
    case 'compaction_skipped':
      ctx.compacting = false;
      ctx.endProgress?.();
      ctx.endProgress = undefined;
      render(ctx, undefined);
      break;
    case 'delta':
      ctx.turnListener?.(ev);
      if (ev.text) {
        ctx.agentOutput.append(String(ev.text));
        ctx.chat.post({ type: 'delta', text: ev.text });
      }
      return;
    case 'tool_call':
      ctx.turnListener?.(ev);
      ctx.agentOutput.appendLine(`\n→ ${ev.name} ${ev.arguments}`);
      ctx.chat.post({ type: 'tool_call', id: ev.id, name: ev.name, arguments: ev.arguments });
      return;
    case 'tool_result':
      ctx.agentOutput.appendLine(`← ${ev.name}${ev.isError ? ' (failed)' : ''}, ${ev.chars} chars`);
      ctx.chat.post({ type: 'tool_result', id: ev.id, isError: ev.isError, chars: ev.chars, exitCode: ev.exitCode });
      return;
  }
  const msg = meter.eventMessage(ev);
  if (!msg) {
    return;
  }
  if (msg.level === 'error') {
    void vscode.window.showErrorMessage(msg.text);
  } else if (msg.level === 'warning') {
    void vscode.window.showWarningMessage(msg.text, ...(msg.raiseBudget ? ['Open the Output Budget Setting'] : [])).then((c) => {
      if (c) {
        void vscode.commands.executeCommand('workbench.action.openSettings', 'alisio.compaction.maxOutputTokens');
      }
    });
  } else {
    void vscode.window.showInformationMessage(msg.text);
  }
}
