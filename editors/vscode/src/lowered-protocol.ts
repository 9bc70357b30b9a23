// The custom request `scl/lowered` of `sclc lsp`, and how its answer is shown.
// Nothing here imports `vscode`, so the rendering runs (and is tested) in plain
// Node: see tests/render.test.js.

/** The method name of the request. */
export const LOWERED_METHOD = 'scl/lowered';

/** The targets `sclc` knows, used only when the server cannot be asked. */
export const KNOWN_TARGETS: readonly string[] = ['docker', 'apptainer', 'conda', 'k8s', 'trainjob', 'compose'];

export interface LoweredParams {
  textDocument: { uri: string };
  /** Zero-based, UTF-16 code units, as everywhere in LSP. */
  position: { line: number; character: number };
  /** `null`: the server's default target (`docker`). */
  target: string | null;
}

export interface LoweredArtifact {
  /** The file the target writes, e.g. `Dockerfile` or `.dockerignore`. */
  path: string;
  text: string;
}

export interface LoweredDiagnostic {
  severity: 'error' | 'warning';
  code: string;
  message: string;
}

export interface LoweredResult {
  /** The env under the cursor (or the file's first env); null when the file has none. */
  env: string | null;
  /** The target that was lowered to. */
  target: string;
  /** Every target the server knows. */
  targets: string[];
  artifacts: LoweredArtifact[];
  diagnostics: LoweredDiagnostic[];
}

/** `text` as `#` comment lines (one per line of `text`, continuation lines indented). */
function commentLines(first: string, text: string): string[] {
  const [head = '', ...rest] = text.split(/\r?\n/);
  return [`# ${first}${head}`, ...rest.map((line) => `#   ${line}`)];
}

/**
 * The preview text: a first line naming the env and the target, the target's
 * diagnostics as comment lines, then each artifact under a `# ── PATH ──` line.
 * `source` names the file (for the first line).
 */
export function renderLowered(result: LoweredResult, source: string): string {
  const lines: string[] = [];
  if (result.env === null) {
    lines.push(`# ${source} declares no env (target ${result.target})`);
  } else {
    lines.push(`# env ${result.env} of ${source}, lowered for target ${result.target}`);
  }
  for (const d of result.diagnostics) {
    lines.push(...commentLines(`${d.severity}[${d.code}]: `, d.message));
  }
  if (result.env !== null && result.artifacts.length === 0) {
    lines.push(`# (the ${result.target} target writes no files for this env)`);
  }
  for (const artifact of result.artifacts) {
    lines.push('', `# ── ${artifact.path} ──`);
    lines.push(artifact.text.replace(/\r?\n$/, ''));
  }
  return lines.join('\n') + '\n';
}

/** The preview text when there is no answer to show: every line a comment. */
export function renderMessage(message: string): string {
  return message
    .split(/\r?\n/)
    .map((line) => (line === '' ? '#' : `# ${line}`))
    .join('\n') + '\n';
}

/** The VS Code language of one artifact; `null` for files that do not decide it. */
function artifactLanguage(path: string): string | null | undefined {
  const name = path.split('/').pop() ?? path;
  const lower = name.toLowerCase();
  // `.dockerignore`, `Dockerfile.dockerignore`: beside a Dockerfile, they do not decide.
  if (lower.endsWith('.dockerignore') || lower.endsWith('ignore')) return null;
  if (lower === 'dockerfile' || lower.startsWith('dockerfile.') || lower.endsWith('.dockerfile')) return 'dockerfile';
  if (lower.endsWith('.yaml') || lower.endsWith('.yml')) return 'yaml';
  if (lower.endsWith('.sh')) return 'shellscript';
  return undefined;
}

/**
 * The language for the preview of `artifacts`: the one language they share
 * (ignore files do not count), else plain text. The `# ──` header lines are
 * comments in Dockerfile, YAML and shell syntax.
 */
export function previewLanguage(artifacts: readonly LoweredArtifact[]): string {
  const languages = new Set<string | undefined>();
  for (const artifact of artifacts) {
    const language = artifactLanguage(artifact.path);
    if (language !== null) languages.add(language);
  }
  if (languages.size === 1) {
    const [language] = [...languages];
    if (language !== undefined) return language;
  }
  return 'plaintext';
}
