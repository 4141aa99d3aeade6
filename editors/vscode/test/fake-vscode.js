// A small stand-in for the `vscode` module, enough for the bundled extension and the real
// vscode-languageclient inside it to run under plain Node: what the extension shows is recorded, what it
// asks the user is answered from `answers`, and anything else is a harmless no-op.
const { EventEmitter: NodeEmitter } = require('node:events');

class Disposable {
  constructor(fn) { this.fn = fn; }
  static from(...ds) { return new Disposable(() => ds.forEach((d) => d && d.dispose && d.dispose())); }
  dispose() { if (this.fn) { this.fn(); this.fn = undefined; } }
}

class EventEmitter {
  constructor() { this.e = new NodeEmitter(); this.event = (listener) => { this.e.on('x', listener); return new Disposable(() => this.e.off('x', listener)); }; }
  fire(v) { this.e.emit('x', v); }
  dispose() { this.e.removeAllListeners(); }
}

class CancellationTokenSource {
  constructor() { const em = new EventEmitter(); this.token = { isCancellationRequested: false, onCancellationRequested: em.event }; this.em = em; }
  cancel() { this.token.isCancellationRequested = true; this.em.fire(); }
  dispose() {}
}

class Uri {
  constructor(scheme, fsPath) { this.scheme = scheme; this.fsPath = fsPath; this.path = fsPath; this.authority = ''; this.query = ''; this.fragment = ''; }
  static file(p) { return new Uri('file', p); }
  static from(c) { return new Uri(c.scheme, c.path); }
  static joinPath(u, ...parts) { return new Uri(u.scheme, require('node:path').join(u.fsPath, ...parts)); }
  static parse(s) { const u = new URL(s); return new Uri(u.protocol.replace(':', ''), decodeURIComponent(u.pathname)); }
  get path() { return this.fsPath; }
  set path(v) { this.fsPath = v; }
  toString() { return `${this.scheme}://${encodeURI(this.fsPath)}`; }
  with() { return this; }
  toJSON() { return { scheme: this.scheme, path: this.fsPath }; }
}

/** A webview view as VS Code gives a provider: what the extension posts is recorded; send() plays the page. */
function webviewView() {
  const posted = [];
  let receive = () => {};
  const webview = {
    options: {}, html: '', cspSource: 'vscode-webview://fake',
    asWebviewUri: (u) => u, postMessage: async (m) => { posted.push(m); return true; },
    onDidReceiveMessage: (fn) => { receive = fn; return new Disposable(); },
  };
  return { webview, posted, send: (m) => receive(m), onDidDispose: () => new Disposable(), visible: true, onDidChangeVisibility: () => new Disposable() };
}

class MarkdownString { constructor(value, supportThemeIcons) { this.value = value; this.supportThemeIcons = supportThemeIcons; this.isTrusted = false; } }
class ThemeColor { constructor(id) { this.id = id; } }
class Range { constructor(sl, sc, el, ec) { this.start = { line: sl, character: sc }; this.end = { line: el, character: ec }; } }

// noop is a function and an object at once: any property is another noop, any call returns a disposable noop.
function noop() {
  const f = function () { return noop(); };
  return new Proxy(f, {
    get(target, prop) {
      if (prop === 'then') return undefined;
      if (prop === 'dispose') return () => {};
      if (prop === Symbol.iterator) return function* () {};
      if (prop === 'length') return 0;
      return noop();
    },
  });
}

function create(settings, root, answers) {
  const shown = { info: [], warning: [], error: [], documents: [], previews: [], clipboard: [], statusMessages: [], statusBar: [], outputs: {}, viewProviders: {}, updates: [], fileSystems: {}, opened: [] };
  const commands = new Map();
  // The built-in Markdown extension's preview: it records what it would render.
  commands.set('markdown.showPreview', async (uri) => { shown.previews.push(providers.get(uri.scheme).provideTextDocumentContent(uri)); });
  const providers = new Map();
  // Settings changed through the API are written into settings, and the listeners told (as VS Code does).
  const configListeners = [];
  const statusItem = { text: '', tooltip: undefined, backgroundColor: undefined, command: undefined, visible: false, show() { this.visible = true; shown.statusBar.push(this.text); }, hide() { this.visible = false; }, dispose() {} };
  const channel = (name) => {
    shown.outputs[name] = '';
    const add = (s) => { shown.outputs[name] += s; };
    return new Proxy({ name, append: add, appendLine: (s) => add(s + '\n'), show() {}, dispose() {}, replace: add, clear() {} }, {
      get(t, p) { return p in t ? t[p] : (typeof p === 'string' ? () => {} : undefined); },
    });
  };
  const ask = (kind) => (...args) => {
    const a = answers[kind];
    return Promise.resolve(typeof a === 'function' ? a(...args) : a);
  };
  const message = (kind) => (text, ...items) => { shown[kind].push(text); return ask(kind + 'Choice')(text, ...items); };
  const getConfiguration = (section) => {
    const value = section ? settings[section] ?? {} : settings;
    return new Proxy({ get: (key, def) => key.split('.').reduce((o, k) => (o == null ? undefined : o[k]), value) ?? def, has: () => true, update: async (key, v, target) => {
      shown.updates.push({ section, key, value: v, target });
      const path = (section ? section + '.' + key : key).split('.');
      let o = settings;
      for (const k of path.slice(0, -1)) o = o[k] ??= {};
      o[path.at(-1)] = v;
      for (const l of configListeners) l({ affectsConfiguration: (s) => (section ? section + '.' + key : key).startsWith(s) });
    }, inspect: () => undefined }, {
      ownKeys: () => Reflect.ownKeys(value).concat(['get', 'has', 'update', 'inspect']),
      getOwnPropertyDescriptor: (t, p) => (p in value ? { enumerable: true, configurable: true, value: value[p] } : Reflect.getOwnPropertyDescriptor(t, p)),
      get: (t, p) => (p in t ? t[p] : value[p]),
    });
  };
  // JSON.stringify of the configuration object: only the settings.
  // No root: a window without a folder.
  const workspaceFolder = root && { uri: Uri.file(root), name: 'ws', index: 0 };
  const vscode = {
    version: '1.91.0',
    Disposable, EventEmitter, CancellationTokenSource, Uri, MarkdownString, ThemeColor, Range,
    FileType: { File: 1, Directory: 2 }, FileChangeType: { Changed: 1, Created: 2, Deleted: 3 },
    FileSystemError: { NoPermissions: (m) => new Error(m), Unavailable: (m) => new Error(m), FileNotFound: (m) => new Error(m) },
    StatusBarAlignment: { Left: 1, Right: 2 },
    ProgressLocation: { SourceControl: 1, Window: 10, Notification: 15 },
    DiagnosticSeverity: { Error: 0, Warning: 1, Information: 2, Hint: 3 },
    ViewColumn: { Active: -1, Beside: -2, One: 1 },
    ConfigurationTarget: { Global: 1, Workspace: 2, WorkspaceFolder: 3 },
    TextDocumentSaveReason: { Manual: 1, AfterDelay: 2, FocusOut: 3 },
    env: { appName: 'fake', language: 'en', machineId: 'm', sessionId: 's', uriScheme: 'vscode', openExternal: async () => true,
      clipboard: { writeText: async (t) => { shown.clipboard.push(t); }, readText: async () => shown.clipboard.at(-1) ?? '' } },
    window: {
      createStatusBarItem: () => statusItem,
      createOutputChannel: (name) => channel(name),
      showInformationMessage: message('info'),
      showWarningMessage: message('warning'),
      showErrorMessage: message('error'),
      showInputBox: ask('inputBox'),
      showQuickPick: ask('quickPick'),
      showTextDocument: async (doc) => { shown.documents.push(doc.getText()); shown.untitled = (shown.untitled || 0) + (doc.isUntitled ? 1 : 0); return {}; },
      setStatusBarMessage: (text) => { shown.statusMessages.push(text); return new Disposable(); },
      withProgress: (opts, task) => task({ report() {} }, new CancellationTokenSource().token),
      activeTextEditor: undefined, visibleTextEditors: [], tabGroups: noop(),
      onDidChangeActiveTextEditor: () => new Disposable(), onDidChangeVisibleTextEditors: () => new Disposable(),
      createWebviewPanel: noop(), registerUriHandler: () => new Disposable(),
      registerWebviewViewProvider: (id, provider) => { shown.viewProviders[id] = provider; return new Disposable(); },
    },
    workspace: {
      workspaceFolders: root ? [workspaceFolder] : undefined,
      getWorkspaceFolder: () => workspaceFolder,
      asRelativePath: (uri) => (root && uri.fsPath.startsWith(root + '/') ? uri.fsPath.slice(root.length + 1) : uri.fsPath),
      textDocuments: [],
      getConfiguration,
      openTextDocument: async (opts) => {
        if (opts instanceof Uri && shown.fileSystems[opts.scheme]) { // a document of a file system provider: its bytes
          shown.opened.push(opts);
          const text = new TextDecoder().decode(await shown.fileSystems[opts.scheme].readFile(opts));
          return { uri: opts, getText: () => text, isUntitled: false };
        }
        return opts instanceof Uri
          ? { uri: opts, getText: () => providers.get(opts.scheme).provideTextDocumentContent(opts), isUntitled: false }
          : { getText: () => opts.content, languageId: opts.language, isUntitled: true };
      },
      registerFileSystemProvider: (scheme, p) => { shown.fileSystems[scheme] = p; return new Disposable(() => delete shown.fileSystems[scheme]); },
      registerTextDocumentContentProvider: (scheme, p) => { providers.set(scheme, p); return new Disposable(() => providers.delete(scheme)); },
      onDidChangeConfiguration: (l) => { configListeners.push(l); return new Disposable(() => configListeners.splice(configListeners.indexOf(l), 1)); },
      onDidOpenTextDocument: () => new Disposable(), onDidCloseTextDocument: () => new Disposable(),
      onDidChangeTextDocument: () => new Disposable(), onDidSaveTextDocument: () => new Disposable(),
      onWillSaveTextDocument: () => new Disposable(), onDidChangeWorkspaceFolders: () => new Disposable(),
      onDidCreateFiles: () => new Disposable(), onDidDeleteFiles: () => new Disposable(), onDidRenameFiles: () => new Disposable(),
      onWillCreateFiles: () => new Disposable(), onWillDeleteFiles: () => new Disposable(), onWillRenameFiles: () => new Disposable(),
      onDidOpenNotebookDocument: () => new Disposable(), onDidCloseNotebookDocument: () => new Disposable(),
      onDidChangeNotebookDocument: () => new Disposable(), onDidSaveNotebookDocument: () => new Disposable(),
      notebookDocuments: [],
      createFileSystemWatcher: () => ({ onDidCreate: () => new Disposable(), onDidChange: () => new Disposable(), onDidDelete: () => new Disposable(), dispose() {} }),
      fs: noop(),
    },
    languages: { createDiagnosticCollection: () => ({ set() {}, delete() {}, clear() {}, dispose() {}, forEach() {} }), match: () => 10, getLanguages: async () => [] },
    commands: {
      registerCommand: (id, fn) => { commands.set(id, fn); return new Disposable(() => commands.delete(id)); },
      executeCommand: async (id, ...args) => { const fn = commands.get(id); return fn ? fn(...args) : undefined; },
      getCommands: async () => [...commands.keys()],
    },
    extensions: { getExtension: () => undefined, all: [], onDidChange: () => new Disposable() },
    l10n: { t: (s, ...args) => (typeof s === 'string' ? s.replace(/\{(\d+)\}/g, (_, i) => String(args[i])) : s.message) },
    notebooks: noop(),
  };
  return { vscode: new Proxy(vscode, { get: (t, p) => (p in t ? t[p] : noop()) }), shown, statusItem, commands };
}

module.exports = { create, webviewView };
