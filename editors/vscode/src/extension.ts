// The SCL extension: starts `sclc lsp` (stdio) with vscode-languageclient and
// offers "SCL: Show lowered output", a read-only preview of what a target
// writes for the env under the cursor (the server's `scl/lowered` request).
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import {
  Executable,
  LanguageClient,
  LanguageClientOptions,
  LSPErrorCodes,
  RequestType,
  ResponseError,
  ServerOptions,
  TransportKind,
} from 'vscode-languageclient/node';
import {
  KNOWN_TARGETS,
  LOWERED_METHOD,
  LoweredParams,
  LoweredResult,
  previewLanguage,
  renderLowered,
  renderMessage,
} from './lowered-protocol';

const LOWERED = new RequestType<LoweredParams, LoweredResult, void>(LOWERED_METHOD);
const PREVIEW_SCHEME = 'scl-lowered';
const DEBOUNCE_MS = 200;

function isScl(document: vscode.TextDocument): boolean {
  return document.languageId === 'scl' && document.uri.scheme !== PREVIEW_SCHEME;
}

function errorText(error: unknown): string {
  if (error instanceof ResponseError) return `${error.message} (code ${error.code})`;
  if (error instanceof Error) return error.message;
  return String(error);
}

/** True for the errors of a request that a newer edit made pointless. */
function superseded(error: unknown): boolean {
  return (
    error instanceof ResponseError &&
    (error.code === LSPErrorCodes.ContentModified || error.code === LSPErrorCodes.RequestCancelled)
  );
}

/** `scl.server.path`: `~` is the home folder; a relative path with a slash is relative to the first workspace folder; a bare name is looked up on PATH. */
function resolveServerPath(configured: string): string {
  let command = configured.trim() || 'sclc';
  if (command === '~' || command.startsWith('~/')) {
    command = path.join(os.homedir(), command.slice(1));
  }
  const hasSeparator = command.includes('/') || (process.platform === 'win32' && command.includes('\\'));
  const folder = vscode.workspace.workspaceFolders?.[0];
  if (hasSeparator && !path.isAbsolute(command) && folder !== undefined && folder.uri.scheme === 'file') {
    command = path.join(folder.uri.fsPath, command);
  }
  return command;
}

/** The language client of `sclc lsp`, restartable. */
class Server implements vscode.Disposable {
  client: LanguageClient | undefined;
  /** Why the last start failed, shown in the preview. */
  startError: string | undefined;
  private watchers: vscode.FileSystemWatcher[] = [];
  private readonly output = vscode.window.createOutputChannel('SCL Language Server');
  private readonly started = new vscode.EventEmitter<void>();
  /** Fires after every (re)start attempt. */
  readonly onDidStart = this.started.event;

  async start(): Promise<void> {
    const config = vscode.workspace.getConfiguration('scl');
    const command = resolveServerPath(config.get<string>('server.path', 'sclc'));
    const extraArgs = config.get<string[]>('server.extraArgs', []).map(String);
    const args = ['lsp', ...extraArgs];
    const executable: Executable = { command, args, transport: TransportKind.stdio };
    const serverOptions: ServerOptions = { run: executable, debug: executable };
    // workspace/didChangeWatchedFiles: other modules and the project file.
    this.watchers = [
      vscode.workspace.createFileSystemWatcher('**/*.env.scl'),
      vscode.workspace.createFileSystemWatcher('**/scl.toml'),
    ];
    const clientOptions: LanguageClientOptions = {
      documentSelector: [
        { scheme: 'file', language: 'scl' },
        { scheme: 'untitled', language: 'scl' },
      ],
      synchronize: { fileEvents: this.watchers },
      outputChannel: this.output,
    };
    // The id `scl` makes the client read the `scl.trace.server` setting.
    const client = new LanguageClient('scl', 'SCL Language Server', serverOptions, clientOptions);
    this.output.appendLine(`Starting ${[command, ...args].join(' ')}`);
    try {
      await client.start();
      this.client = client;
      this.startError = undefined;
    } catch (error) {
      this.startError = `could not start \`${[command, ...args].join(' ')}\`: ${errorText(error)}`;
      this.output.appendLine(this.startError);
      this.disposeWatchers();
      try {
        await client.dispose();
      } catch {
        // Nothing was running.
      }
    }
    this.started.fire();
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client !== undefined) {
      try {
        await client.stop();
      } catch (error) {
        this.output.appendLine(`Stopping the server failed: ${errorText(error)}`);
      }
    }
    this.disposeWatchers();
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  private disposeWatchers(): void {
    for (const watcher of this.watchers) watcher.dispose();
    this.watchers = [];
  }

  dispose(): void {
    void this.stop();
    this.output.dispose();
    this.started.dispose();
  }
}

/** Where the preview looks: an SCL document and the cursor in it. */
interface Source {
  uri: vscode.Uri;
  position: vscode.Position;
}

/**
 * The read-only documents `scl-lowered:/SCL lowered (TARGET)?target=TARGET`:
 * the output of `scl/lowered` for the env under the cursor of the last active
 * SCL editor, refreshed (debounced) when its selection or text changes.
 */
class LoweredPreview implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private source: Source | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** The language each preview should have, from its last answer. */
  private readonly languages = new Map<string, string>();
  /** The last text of each preview, kept while an answer is superseded. */
  private readonly texts = new Map<string, string>();
  /** Superseded answers in a row (a server that always says so is not asked forever). */
  private superseded = 0;
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(private readonly server: Server) {
    const editor = vscode.window.activeTextEditor;
    if (editor !== undefined) this.track(editor);
    this.subscriptions.push(
      vscode.window.onDidChangeTextEditorSelection((event) => {
        if (this.track(event.textEditor)) this.schedule();
      }),
      vscode.window.onDidChangeActiveTextEditor((editor) => {
        if (editor !== undefined && this.track(editor)) this.schedule();
      }),
      vscode.workspace.onDidChangeTextDocument((event) => {
        const uri = event.document.uri;
        if (uri.scheme === PREVIEW_SCHEME) {
          void this.applyLanguage(event.document);
        } else if (this.source !== undefined && uri.toString() === this.source.uri.toString()) {
          this.schedule();
        }
      }),
      vscode.workspace.onDidCloseTextDocument((document) => {
        if (document.uri.scheme === PREVIEW_SCHEME) {
          this.languages.delete(document.uri.toString());
          this.texts.delete(document.uri.toString());
        }
      }),
      server.onDidStart(() => this.refresh()),
    );
  }

  static uri(target: string): vscode.Uri {
    return vscode.Uri.from({
      scheme: PREVIEW_SCHEME,
      path: `/SCL lowered (${target})`,
      query: new URLSearchParams({ target }).toString(),
    });
  }

  /** Follows `editor` when it shows SCL; true when it does. */
  track(editor: vscode.TextEditor): boolean {
    if (!isScl(editor.document)) return false;
    this.source = { uri: editor.document.uri, position: editor.selection.active };
    return true;
  }

  private openPreviews(): vscode.TextDocument[] {
    return vscode.workspace.textDocuments.filter((document) => document.uri.scheme === PREVIEW_SCHEME);
  }

  private schedule(): void {
    if (this.openPreviews().length === 0) return;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.refresh();
    }, DEBOUNCE_MS);
  }

  /** Asks VS Code to reload every open preview. */
  refresh(): void {
    for (const document of this.openPreviews()) this.changed.fire(document.uri);
  }

  private async request(target: string | null, token?: vscode.CancellationToken): Promise<LoweredResult> {
    const client = this.server.client;
    if (client === undefined) {
      throw new Error(`the SCL language server is not running${this.server.startError ? `: ${this.server.startError}` : ''}`);
    }
    if (this.source === undefined) {
      throw new Error('no SCL file to follow: put the cursor in a .env.scl file');
    }
    const params: LoweredParams = {
      textDocument: { uri: client.code2ProtocolConverter.asUri(this.source.uri) },
      position: client.code2ProtocolConverter.asPosition(this.source.position),
      target,
    };
    return client.sendRequest(LOWERED, params, token);
  }

  /** The targets to offer (the server's list), the server's default first. */
  async targets(): Promise<{ targets: string[]; fallback?: string }> {
    try {
      const result = await this.request(null);
      const rest = result.targets.filter((t) => t !== result.target);
      return { targets: result.targets.includes(result.target) ? [result.target, ...rest] : result.targets };
    } catch (error) {
      return { targets: [...KNOWN_TARGETS], fallback: errorText(error) };
    }
  }

  async provideTextDocumentContent(uri: vscode.Uri, token: vscode.CancellationToken): Promise<string> {
    const target = new URLSearchParams(uri.query).get('target');
    const key = uri.toString();
    const source = this.source === undefined ? 'no file' : path.basename(this.source.uri.path);
    let text: string;
    try {
      const result = await this.request(target, token);
      this.languages.set(key, previewLanguage(result.artifacts));
      text = renderLowered(result, source);
      this.superseded = 0;
    } catch (error) {
      const previous = this.texts.get(key);
      if (previous !== undefined && (token.isCancellationRequested || superseded(error)) && this.superseded < 5) {
        // The file changed while the server worked on it: keep the last
        // answer and ask again.
        this.superseded += 1;
        this.schedule();
        return previous;
      }
      this.superseded = 0;
      this.languages.set(key, 'plaintext');
      text = renderMessage(`scl/lowered (target ${target ?? 'default'}, ${source}) failed:\n${errorText(error)}`);
    }
    this.texts.set(key, text);
    return text;
  }

  /** Gives the preview the language of its artifacts (Dockerfile, YAML) when they share one. */
  async applyLanguage(document: vscode.TextDocument): Promise<void> {
    const language = this.languages.get(document.uri.toString());
    if (language !== undefined && document.languageId !== language) {
      try {
        await vscode.languages.setTextDocumentLanguage(document, language);
      } catch {
        // The language is not installed: stay plain text.
      }
    }
  }

  dispose(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    for (const subscription of this.subscriptions) subscription.dispose();
    this.changed.dispose();
  }
}

async function showLowered(preview: LoweredPreview): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (editor !== undefined) preview.track(editor);
  const { targets, fallback } = await preview.targets();
  const items: vscode.QuickPickItem[] = targets.map((target, i) => ({
    label: target,
    description: fallback === undefined && i === 0 ? 'default' : undefined,
  }));
  const picked = await vscode.window.showQuickPick(items, {
    title: 'SCL: Show lowered output',
    placeHolder: fallback === undefined ? 'Target to lower the env under the cursor to' : `Target (the server did not answer: ${fallback})`,
  });
  if (picked === undefined) return;
  const document = await vscode.workspace.openTextDocument(LoweredPreview.uri(picked.label));
  await vscode.window.showTextDocument(document, {
    viewColumn: vscode.ViewColumn.Beside,
    preserveFocus: true,
    preview: false,
  });
  await preview.applyLanguage(document);
}

let server: Server | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  server = new Server();
  const preview = new LoweredPreview(server);
  context.subscriptions.push(
    server,
    preview,
    vscode.workspace.registerTextDocumentContentProvider(PREVIEW_SCHEME, preview),
    vscode.commands.registerCommand('scl.showLowered', () => showLowered(preview)),
    vscode.commands.registerCommand('scl.restartServer', () => server?.restart()),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration('scl.server')) void server?.restart();
    }),
  );
  // Not awaited: a slow or missing server must not hold up activation (and
  // with it the commands).
  void server.start();
}

export async function deactivate(): Promise<void> {
  await server?.stop();
  server = undefined;
}
