// The Alisio chat view: a webview (in the secondary side bar, or an editor tab on VS Code versions without
// it) that shows the session's conversation and streams turns; its page is dist/chat.js + media/chat.css.
import * as vscode from 'vscode';
import * as crypto from 'crypto';

/** What the chat asks the extension to do: send a prompt, stop the turn, compact, recover, switch or start a
 * session, show earlier messages, copy a code block, answer the question before a call runs. */
export type ChatAction = { type: 'ready' | 'stop' | 'compact' | 'undoCompaction' | 'editCheckpoint' | 'recover' | 'switch' | 'new' | 'earlier' | 'openFolder' | 'retry' } | { type: 'send' | 'copy'; text: string } | { type: 'answer'; id: string; yes: boolean };

export class ChatView implements vscode.WebviewViewProvider {
  private webviews = new Set<vscode.Webview>();
  /** Messages for the input (an attachment, the focus) sent before any chat page had loaded: delivered by the
   * first that does. */
  private pending: unknown[] = [];
  private ready = new Set<vscode.Webview>();

  constructor(private readonly extensionUri: vscode.Uri, private readonly onAction: (a: ChatAction) => void) {}

  /** resolveWebviewView fills the side bar view (VS Code calls it each time the view is shown after being disposed). */
  resolveWebviewView(view: vscode.WebviewView): void {
    this.attach(view.webview);
    view.onDidDispose(() => this.forget(view.webview));
    // A hidden view's page is unloaded: until it loads again (and says it is ready), messages for the input wait.
    view.onDidChangeVisibility(() => {
      if (!view.visible) {
        this.ready.delete(view.webview);
      }
    });
  }

  /** openPanel shows the chat in an editor tab (VS Code before 1.104 has no secondary side bar for extensions). */
  openPanel(): void {
    const panel = vscode.window.createWebviewPanel('alisio.chatPanel', 'Alisio', vscode.ViewColumn.Beside, {});
    this.attach(panel.webview);
    panel.onDidDispose(() => this.forget(panel.webview));
  }

  /** post sends a message to every open chat. */
  post(msg: unknown): void {
    for (const w of this.webviews) {
      void w.postMessage(msg);
    }
  }

  /** toInput sends a message meant for the input (an attachment, the focus): to the loaded chats, else to the
   * next one that loads, so that one sent while Open Chat loads the view is not lost. */
  toInput(msg: unknown): void {
    if (this.ready.size === 0) {
      this.pending.push(msg);
      return;
    }
    for (const w of this.ready) {
      void w.postMessage(msg);
    }
  }

  private forget(webview: vscode.Webview) {
    this.webviews.delete(webview);
    this.ready.delete(webview);
  }

  private attach(webview: vscode.Webview) {
    webview.options = { enableScripts: true, localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, 'dist'), vscode.Uri.joinPath(this.extensionUri, 'media')] };
    webview.html = this.html(webview);
    webview.onDidReceiveMessage((m: ChatAction) => {
      if (m.type === 'ready') {
        this.ready.add(webview);
        for (const p of this.pending.splice(0)) {
          void webview.postMessage(p);
        }
      }
      this.onAction(m);
    });
    this.webviews.add(webview);
  }

  private html(webview: vscode.Webview): string {
    const nonce = crypto.randomBytes(16).toString('base64');
    const script = webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'dist', 'chat.js'));
    const style = webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'media', 'chat.css'));
    return `<!DOCTYPE html><html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${webview.cspSource}; img-src ${webview.cspSource} data:; script-src 'nonce-${nonce}';">
<meta name="viewport" content="width=device-width, initial-scale=1.0"><link rel="stylesheet" href="${style}"><title>Alisio</title></head>
<body><div id="header"></div><div id="log" role="log" aria-live="polite"></div>
<div id="question" role="alert" hidden></div><div id="composer"><textarea id="input" rows="2" placeholder="Ask the agent — Enter sends, Shift+Enter new line" aria-label="Prompt"></textarea>
<button id="send" title="Send (Enter)">Send</button><button id="stop" title="Stop the turn" hidden>Stop</button></div>
<script nonce="${nonce}" src="${script}"></script></body></html>`;
  }
}
