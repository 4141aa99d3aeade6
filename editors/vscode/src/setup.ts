// First run: "Alisio: Set Up Provider" asks what the provider is (a kind with its usual URL and key variable,
// then the URL, the model and the key's variable), writes the alisio.provider settings, and checks that the
// provider answers. The first "no provider" error offers it.
import * as vscode from 'vscode';
import type { Ctx } from './ctx';

interface Preset extends vscode.QuickPickItem {
  providerKind: 'openai' | 'anthropic';
  baseURL: string;
  keyEnv: string;
  model: string;
}

const presets: Preset[] = [
  { label: 'OpenAI', detail: 'api.openai.com', providerKind: 'openai', baseURL: 'https://api.openai.com/v1', keyEnv: 'OPENAI_API_KEY', model: 'gpt-4.1' },
  { label: 'Anthropic', detail: 'api.anthropic.com', providerKind: 'anthropic', baseURL: 'https://api.anthropic.com', keyEnv: 'ANTHROPIC_API_KEY', model: 'claude-sonnet-4-5' },
  { label: 'OpenRouter', detail: 'openrouter.ai, OpenAI-compatible', providerKind: 'openai', baseURL: 'https://openrouter.ai/api/v1', keyEnv: 'OPENROUTER_API_KEY', model: '' },
  { label: 'A local server', detail: 'llama.cpp, vLLM, Ollama, LM Studio: OpenAI-compatible, no key', providerKind: 'openai', baseURL: 'http://localhost:11434/v1', keyEnv: '', model: '' },
  { label: 'alisio-testprovider', detail: 'the scripted test model of the alisio-lsp sources, to try without a key: alisio-testprovider --addr 127.0.0.1:40123 (README)', providerKind: 'openai', baseURL: 'http://127.0.0.1:40123/v1', keyEnv: '', model: 'alisio-test' },
];

/** setUpProvider walks the user through the provider settings, writes them (user settings) and checks them. */
export async function setUpProvider(ctx: Ctx) {
  const preset: Preset | undefined = await vscode.window.showQuickPick<Preset>(presets, { title: 'Alisio: Set Up Provider (1/4)', placeHolder: 'Which provider serves the model?' });
  if (!preset) {
    return;
  }
  const cfg = vscode.workspace.getConfiguration('alisio');
  const baseURL = await vscode.window.showInputBox({ title: 'Alisio: Set Up Provider (2/4)', prompt: 'The base URL (alisio.provider.baseURL)',
    value: preset.baseURL, ignoreFocusOut: true, validateInput: (v) => (/^https?:\/\/\S+$/.test(v.trim()) ? undefined : 'a URL starting with http:// or https://') });
  if (baseURL === undefined) {
    return;
  }
  const model = await vscode.window.showInputBox({ title: 'Alisio: Set Up Provider (3/4)', prompt: 'The model (alisio.provider.model)',
    value: preset.model || cfg.get<string>('provider.model') || '', ignoreFocusOut: true, validateInput: (v) => (v.trim() ? undefined : 'the model name the provider serves') });
  if (model === undefined) {
    return;
  }
  const keyEnv = await vscode.window.showInputBox({ title: 'Alisio: Set Up Provider (4/4)',
    prompt: 'The environment variable holding the API key (alisio.provider.apiKeyEnv; empty: none). The key itself is never stored.',
    value: preset.keyEnv, ignoreFocusOut: true, validateInput: (v) => (v === '' || /^[A-Za-z_][A-Za-z0-9_]*$/.test(v) ? undefined : 'a variable name such as OPENAI_API_KEY') });
  if (keyEnv === undefined) {
    return;
  }
  const target = vscode.ConfigurationTarget.Global;
  await cfg.update('provider.kind', preset.providerKind, target);
  await cfg.update('provider.baseURL', baseURL.trim(), target);
  await cfg.update('provider.model', model.trim(), target);
  await cfg.update('provider.apiKeyEnv', keyEnv, target);
  if (keyEnv && !process.env[keyEnv]) {
    void vscode.window.showWarningMessage(`Alisio: ${keyEnv} is not set in VS Code's environment: set it where VS Code starts (your shell profile), then restart VS Code.`);
  }
  await checkProvider(ctx);
}

/** checkProvider asks the daemon to reach the provider and says what it found. */
export async function checkProvider(ctx: Ctx) {
  // The settings reach the daemon as a didChangeConfiguration; the check is sent after it.
  await new Promise((r) => setTimeout(r, 300));
  const res = await ctx.request<{ model: string; window: number }>('alisio/checkProvider', {});
  if (res) {
    void vscode.window.showInformationMessage(`Alisio: the provider answers: ${res.model}${res.window ? `, a ${Math.round(res.window / 1000)}k-token window` : ''}. Send a prompt in the chat.`);
  }
}
