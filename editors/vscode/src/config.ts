// Where the extension finds its settings and its server.
import * as vscode from 'vscode';
import * as fs from 'fs';
import * as path from 'path';

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
