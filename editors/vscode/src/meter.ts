// The logic of the status bar meter, its tooltip, the event messages and the context breakdown: plain
// functions of alisio-lsp's payloads (docs/protocol.md), with no dependency on VS Code, so that they are
// unit-tested under Node.

import type { AlisioEvent, ContextPart, Status, ToolsDescription } from './protocol';

export type { AlisioEvent, ContextPart, Status, ToolsDescription };

export type Level = 'ok' | 'warning' | 'error';

/** The share of the compaction threshold in use: the closer of the two rules. */
export function fraction(st: Status): number {
  return Math.max(st.windowFraction || 0, st.charsFraction || 0);
}

/** The share of limitTokens at which compaction starts: the threshold, or less in a window too small to keep
 * the reply's room up to it. */
export function compactsAt(st: Status): number {
  return st.compactsAt || st.threshold || 1;
}

/** The colour of the meter: a warning from 75 % of the threshold, an error when something needs the user. */
export function level(st: Status): Level {
  if (st.overHardLimit || (st.uncertainCalls && st.uncertainCalls.length > 0)) {
    return 'error';
  }
  return fraction(st) >= 0.75 || st.lastCheckpointPartial ? 'warning' : 'ok';
}

export function human(n: number | undefined): string {
  if (n === undefined || n === null) {
    return '?';
  }
  if (n >= 1_000_000) {
    return (n / 1_000_000).toFixed(1) + 'M';
  }
  if (n >= 10_000) {
    return Math.round(n / 1000) + 'k'; // 12k, 220k
  }
  if (n >= 1000) {
    return (n / 1000).toFixed(1).replace(/\.0$/, '') + 'k'; // 2.7k, 3k: as the daemon's sentences write them
  }
  return String(n);
}

/** The share of the limit the request fills (tokens of limitTokens; past 1 when over). */
export function used(st: Status): number {
  return st.limitTokens > 0 ? (st.tokens || 0) / st.limitTokens : fraction(st) * (st.threshold || 1);
}

/** bar draws used(st) in cells, with the compaction threshold as a mark: ▰▰▱▱▱▱▱│▱. */
export function bar(st: Status, cells = 8): string {
  const full = Math.min(cells, Math.round(used(st) * cells));
  const mark = Math.round(compactsAt(st) * cells);
  let out = '';
  for (let i = 0; i < cells; i++) {
    if (i === mark) {
      out += '│';
    }
    out += i < full ? '▰' : '▱';
  }
  return out;
}

/** tokens is a token count for the meter: finer below 10k, where a compaction's change would not show. */
function tokens(n: number): string {
  return n >= 1000 && n < 10_000 ? (n / 1000).toFixed(1).replace(/\.0$/, '') + 'k' : human(n);
}

/** tokensText is "12k/128k" or "2.7k/6k": the request's tokens of the limit. */
export function tokensText(st: Status): string {
  return `${tokens(st.tokens)}/${tokens(st.limitTokens)}`;
}

/** The status bar text before the workspace has a session (the server runs). */
export const noSessionText = '$(pulse) Alisio –';

/** windowKnown: the provider or the settings gave the model's window (else the meter uses limits.maxContextChars). */
export function windowKnown(st: Status): boolean {
  return !!st.window && !(st.windowSource || '').startsWith('maxContextChars');
}

/** The status bar text: a spinner while compacting, "over limit" past the hard limit, else the request's tokens
 * of the limit with a bar that marks where compaction starts. Its colour (level) tells the same story. */
export function statusText(st: Status, compacting: boolean): string {
  if (compacting || st.compacting) {
    return '$(sync~spin) Alisio: compacting…';
  }
  if (st.overHardLimit) {
    return `$(error) Alisio over limit (${human(st.usedChars)}/${human(st.hardLimit)})`;
  }
  let text = `$(pulse) Alisio ${bar(st)} ${tokensText(st)}`;
  if (st.compactingInBackground) {
    text += ' $(sync~spin) compacting in background…';
  }
  if (st.uncertainCalls && st.uncertainCalls.length > 0) {
    text += ` $(warning) ${st.uncertainCalls.length}`;
  }
  return text;
}

/** The rule closest to firing, in words; the share is the meter's (tokens of limitTokens), so that it agrees
 * with the figures beside it. */
export function closestRule(st: Status): string {
  const starts = st.compactsAtText || `compaction starts at ${pct(st.threshold)}`;
  if ((st.windowFraction || 0) >= (st.charsFraction || 0)) {
    return windowKnown(st)
      ? `the request fills ${pct(used(st))} of the ${human(st.window)}-token window; ${starts}`
      : `the request, tool catalog included, fills ${pct(used(st))} of what alisio.limits.maxContextChars allows (the model's window is unknown); ${starts}`;
  }
  return `instructions + transcript fill ${pct((st.charsFraction || 0) * st.threshold)} of limits.maxContextChars; ${starts}`;
}

/** The next model call's action, in words. */
export function nextAction(st: Status): string {
  if (st.nextCall) {
    return st.nextCall; // the daemon's words
  }
  switch (st.nextAction) {
    case 'none':
      return 'sent as is';
    case 'compact':
      return 'compacts first';
    case 'compact (reserve)':
      return 'compacts first, to leave room for the reply';
  }
  return st.nextAction;
}

function pct(x: number): string {
  return `${Math.round((x || 0) * 100)}%`;
}

/** The tooltip (markdown with command links; the MarkdownString must be trusted for them). */
export function tooltip(st: Status): string {
  const lines = [
    `**Alisio** — session \`${st.session}\` (${st.messages} messages)`,
    '',
    `| | |`,
    `|---|---|`,
    `| tokens | ${human(st.tokens)} of ${human(st.limitTokens)} (${st.tokensSource === 'calibrated' ? "calibrated from the provider's counts" : 'estimated at about 4 chars a token'}); compaction at ${pct(compactsAt(st))} |`,
    `| chars | ${human(st.usedChars)} of ${human(st.hardLimit)} (instructions ${human(st.instructionsChars)}, transcript ${human(st.transcriptChars)}) |`,
    `| tool catalog | ${human(st.toolsChars)} chars |`,
    ...(st.cache ? [`| prompt cache | ${st.cache.text.replace(/^prompt cache: /, '')} |`] : []),
    windowKnown(st)
      ? `| window | ${human(st.window)} tokens (${st.windowFrom || st.windowSource}) |`
      : '| window | unknown: the provider did not report it; [Alisio: Set Up Provider](command:alisio.setUpProvider) or [set alisio.provider.contextWindow](command:workbench.action.openSettings?%5B%22alisio.provider.contextWindow%22%5D) |',
    '',
    `Closest to firing: ${closestRule(st)}. Next model call: ${nextAction(st)}.` + (st.auto ? '' : ' Automatic compaction is off.') +
      (st.compactingInBackground ? " The next compaction's summary is being written in the background: it will not make you wait." : ''),
  ];
  if (st.overHardLimit) {
    lines.splice(1, 0, '', `$(error) **Over the hard limit**: ${human(st.usedChars)} of ${human(st.hardLimit)} chars. The next model call compacts first; [compact now](command:alisio.compact).`);
  }
  // The daemon's sentences about the session's state, each with the action it names.
  for (const n of st.notices || []) {
    const link = n.kind === 'uncertainCalls' ? ' [Recover](command:alisio.recover)'
      : n.kind === 'partialCheckpoint' ? ' [Open the setting](command:workbench.action.openSettings?%5B%22alisio.compaction.maxOutputTokens%22%5D)' : '';
    lines.push('', `$(warning) ${n.text}${link}`);
  }
  lines.push('', 'Click for the Alisio menu.');
  return lines.join('\n');
}

/** What to tell the user about an event (undefined: nothing): the daemon's sentence (summary), at the level
 * the event calls for. */
export function eventMessage(ev: AlisioEvent): { level: 'info' | 'warning' | 'error'; text: string; raiseBudget?: boolean } | undefined {
  const text = `Alisio: ${ev.summary ?? ''}`;
  switch (ev.type) {
    case 'compaction_completed':
      return ev.partial ? { level: 'warning', text, raiseBudget: true } : { level: 'info', text };
    case 'compaction_failed':
      return { level: 'error', text };
    case 'compaction_skipped':
      return ev.reason === 'manual' ? { level: 'info', text } : undefined;
    case 'context_reduced':
      return { level: 'info', text };
    case 'plugin_hook_failed':
      return { level: 'warning', text };
  }
  return undefined;
}

/** The context breakdown (Alisio: Show Context) as markdown with a bar chart. */
export function contextBreakdown(st: Status, transcriptParts: ContextPart[], sources: { source: string; chars: number; count: number }[]): string {
  const rules = st.rules?.chars ?? 0;
  const parts: [string, number][] = [['instructions', st.instructionsChars - rules]];
  if (st.rules?.file) {
    parts.push([`project rules: ${st.rules.file}${st.rules.cut ? ' (cut)' : ''}`, rules]);
  }
  for (const p of transcriptParts) {
    parts.push([p.name, p.chars]);
  }
  for (const s of sources) {
    parts.push([`tool catalog: ${s.source} (${s.count} tools)`, s.chars]);
  }
  const total = parts.reduce((n, [, v]) => n + v, 0) || 1;
  // Size and name first, then a short bar: it stays readable in a narrow chat panel.
  const lines = [st.session ? `**What fills the context** of session \`${st.session}\`` : '**What fills the context** of the first request (no session yet: Alisio: Prompt starts one)', '', '```'];
  const width = Math.max(...parts.map(([k]) => k.length));
  for (const [k, v] of parts) {
    const n = Math.round((20 * v) / total);
    lines.push(`${human(v).padStart(5)}  ${k.padEnd(width)}  ${'█'.repeat(n)}${'·'.repeat(20 - n)}`);
  }
  const window = windowKnown(st) ? ` of a ${human(st.window)}-token window (${st.windowFrom || st.windowSource})`
    : '; the model\'s window is unknown, so alisio.limits.maxContextChars stands in for it';
  lines.push('```', '', `Used ${human(st.usedChars)} of the ${human(st.hardLimit)}-char hard limit; ${tokensText(st)} tokens (${st.tokensSource})${window}.`,
    `Closest to firing: ${closestRule(st)}.`);
  if (st.cache) {
    lines.push('', st.cache.text.charAt(0).toUpperCase() + st.cache.text.slice(1) + '.');
  }
  lines.push('', 'To shrink the tool catalog, turn off unneeded MCP servers or plugins with Alisio: Show Tools.');
  return lines.join('\n');
}

/** A line of Alisio: Show Tools: a tool source, and what picking it toggles (an MCP server or a plugin). */
export interface ToolsItem {
  label: string;
  description: string;
  detail?: string;
  toggle?: { kind: 'mcpServers' | 'plugins'; name: string; disabled: boolean };
}

/** toolsItems lists the built-in tools, each MCP server and each plugin of the settings, with the tool count,
 * catalog size and problem the server reports, enabled or not. */
export function toolsItems(d: ToolsDescription, servers: Record<string, { disabled?: boolean }>, plugins: { name: string; disabled?: boolean }[]): ToolsItem[] {
  const items: ToolsItem[] = [];
  const src = new Map(d.sources.map((s) => [s.source, s]));
  const builtin = src.get('built-in');
  if (builtin) {
    items.push({ label: '$(tools) built-in', description: `${builtin.count} tools · ${human(builtin.chars)} chars`, detail: (builtin.tools || []).join(', ') });
  }
  for (const [name, cfg] of Object.entries(servers)) {
    const s = src.get(name);
    const disabled = !!cfg?.disabled;
    items.push({
      label: `${disabled ? '$(circle-slash)' : '$(server)'} ${name}`,
      description: disabled ? 'MCP server · disabled: pick to enable' : `MCP server · ${s?.count ?? 0} tools · ${human(s?.chars ?? 0)} chars · pick to disable`,
      detail: s?.problem ? `$(error) ${s.problem}` : (s?.tools || []).join(', ') || undefined,
      toggle: { kind: 'mcpServers', name, disabled },
    });
  }
  for (const p of plugins) {
    const disabled = !!p.disabled;
    items.push({ label: `${disabled ? '$(circle-slash)' : '$(plug)'} ${p.name}`, description: `compaction plugin · ${disabled ? 'disabled: pick to enable' : 'pick to disable'}`,
      toggle: { kind: 'plugins', name: p.name, disabled } });
  }
  items.push({ label: `$(info) tool catalog: ${human(d.catalogChars)} chars in every request`, description: '', detail: d.confinement });
  return items;
}
