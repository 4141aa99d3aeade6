// The read-only documents of Show Context and Show Checkpoint (alisio:context.md, alisio:checkpoint.md).
import * as vscode from 'vscode';

export class Docs implements vscode.TextDocumentContentProvider {
  private readonly contents = new Map<string, string>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.contents.get(uri.path) ?? '';
  }

  /** isOpen: an editor or a preview holds the document name. */
  isOpen(name: string): boolean {
    const uri = vscode.Uri.parse(`alisio:${name}`).toString();
    return vscode.workspace.textDocuments.some((d) => d.uri.toString() === uri);
  }

  /** update gives the open document name new content (its Markdown preview follows) without showing it. */
  update(name: string, content: string) {
    const uri = vscode.Uri.parse(`alisio:${name}`);
    if (this.contents.get(uri.path) !== content) {
      this.contents.set(uri.path, content);
      this.changed.fire(uri);
    }
  }

  /** show opens the document name with content, in a preview editor; rendered, in the Markdown preview (its
   * source where the built-in Markdown extension is disabled). */
  async show(name: string, content: string, rendered = false) {
    const uri = vscode.Uri.parse(`alisio:${name}`);
    this.contents.set(uri.path, content);
    this.changed.fire(uri);
    // An open document takes the new content a moment later: wait for it, so that nothing shows the old one.
    const doc = await vscode.workspace.openTextDocument(uri);
    if (doc.getText() !== content) {
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          listener.dispose();
          resolve();
        };
        const listener = vscode.workspace.onDidChangeTextDocument((e) => {
          if (e.document.uri.toString() === uri.toString() && e.document.getText() === content) {
            done();
          }
        });
        const timer = setTimeout(done, 3000);
      });
    }
    if (rendered) {
      try {
        // (Its extension activates on the command: before that, getCommands does not list it.)
        await vscode.commands.executeCommand('markdown.showPreview', uri);
        return;
      } catch {
        // the built-in Markdown extension is disabled: the source below
      }
    }
    await vscode.window.showTextDocument(doc, { preview: true });
  }

  dispose() {
    this.changed.dispose();
  }
}
