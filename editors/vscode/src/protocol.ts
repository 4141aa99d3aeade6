// The alisio/* protocol as the extension reads it: a mirror of the Go package api (docs/protocol.md). The Go
// test api.TestTypeScriptMirror compares each interface here with its Go struct, field by field, so the two
// cannot drift apart; the extension decides on an error's kind, never on its sentence.

/** The alisio/status result and notification: the meter of a session. */
export interface Status {
  v: number;
  session: string;
  messages: number;
  usedChars: number;
  instructionsChars: number;
  transcriptChars: number;
  toolsChars: number;
  hardLimit: number;
  estimatedTokens: number;
  calibratedTokens?: number;
  lastReportedTokens?: number;
  window: number;
  windowSource: string;
  threshold: number;
  /** The request size in tokens at which the window's compaction fires (threshold × window, or less in a
   * window too small to keep the reply's room there). */
  compactsAtTokens?: number;
  windowFraction: number;
  charsFraction: number;
  nextAction: string;
  auto: boolean;
  overHardLimit: boolean;
  lastCheckpointPartial: boolean;
  /** Raised by every compaction, reduction, undo or checkpoint edit of the session; never goes back. */
  epoch?: number;
  uncertainCalls: string[] | null;
  compacting: boolean;
  /** Set on a meter sent because another window or the command line wrote the session since the last one. */
  changedElsewhere?: boolean;
  /** The daemon's sentences about the session's state (uncertain calls, a partial checkpoint). */
  notices?: Notice[];
  /** The request's size in tokens — one figure: "calibrated" from the provider's counts, or "estimated". */
  tokens: number;
  tokensSource: 'calibrated' | 'estimated';
  /** The limit of the rule closest to firing, in tokens (the window, or limits.maxContextChars in tokens);
   * compaction starts at compactsAt of it. */
  limitTokens: number;
  /** The share of limitTokens at which compaction starts (the threshold, or less in a small window), and the
   * daemon's sentence saying so. */
  compactsAt?: number;
  compactsAtText?: string;
  /** In the daemon's words: where the window came from, and what the next model call does first. */
  windowFrom?: string;
  nextCall?: string;
  /** The input the provider reported over the session and for the last reply (storage.UsageTotals). */
  usage?: UsageTotals;
  /** What the provider's prompt cache did, with its sentence (api.CacheMeter). */
  cache?: CacheMeter;
  /** Set while the next compaction's summary is written in the background. */
  compactingInBackground?: boolean;
  /** The project's rules every request sends (AGENTS.md), part of instructionsChars. */
  rules?: ProjectRules;
}

/** The project's rules file as requests send it (agent.ProjectRules). */
export interface ProjectRules {
  /** The files sent, joined ("AGENTS.md, parser/AGENTS.md"); files lists them, the root's first. */
  file?: string;
  files?: string[];
  chars?: number;
  fileChars?: number;
  limit?: number;
  cut?: boolean;
}

/** The input tokens the provider reported: all, read from its prompt cache, written to it; the last reply's. */
export interface UsageTotals {
  input: number;
  cached?: number;
  cacheWrite?: number;
  last: { promptTokens: number; completionTokens: number; cachedTokens?: number; cacheWriteTokens?: number; requestChars?: number };
}

/** One kind of the fidelity ledger: how many anchors the replaced messages held, how many the summary kept, how many were added. */
export interface Coverage {
  anchors: number;
  covered: number;
  added?: number;
}

/** The prompt cache's figures for the last request and the session, and the sentence a user reads. */
export interface CacheMeter {
  lastInput: number;
  lastCached: number;
  lastCacheWrite?: number;
  input: number;
  cached: number;
  cacheWrite?: number;
  text: string;
}

/** A sentence of the daemon's about a session's state; its kind says which action goes with it. */
export interface Notice {
  kind: 'uncertainCalls' | 'partialCheckpoint' | 'projectRules';
  text: string;
}

/** An alisio/event notification: its type says which fields are set (compaction events carry the
 * compaction's figures; delta text and reasoning; tool_call id, name and arguments; tool_result id, name,
 * isError, declined (the user did not approve it: it did not run) and chars; reply text). */
export interface AlisioEvent {
  v: number;
  session: string;
  type: string;
  /** The sentence a user reads for a compaction event, made by the daemon. */
  summary?: string;
  reason?: string;
  rule?: string;
  beforeChars?: number;
  beforeTokens?: number;
  afterChars?: number;
  afterTokens?: number;
  spanMessages?: number;
  /** spanMessages begin with the earlier checkpoint (a later compaction folds it in). */
  spanCheckpoint?: boolean;
  spanChars?: number;
  checkpointChars?: number;
  chunks?: number;
  /** The compaction took a summary written in the background. */
  ahead?: boolean;
  partial?: boolean;
  missingFields?: string[];
  recoveredFields?: string[];
  /** How much of what the replaced messages did the summary kept, by kind (files, constraints, commands, errors, a plugin's). */
  fidelity?: Record<string, Coverage>;
  textOnly?: boolean;
  messages?: number;
  uncertainCalls?: string[];
  durationMs?: number;
  plugins?: unknown[];
  plugin?: string;
  hook?: string;
  /** Why: a failed plugin hook's error, or `stopped` on compaction_failed when the user stopped it. */
  cause?: string;
  message?: string;
  error?: string;
  text?: string;
  reasoning?: string;
  id?: string;
  name?: string;
  arguments?: string;
  isError?: boolean;
  declined?: boolean;
  chars?: number;
  exitCode?: number;
}

/** What a failed request's error carries (its data): the kind, and the figures that kind needs. */
export interface ErrorData {
  kind: ErrorKind;
  session?: string;
  calls?: string[];
  chars?: number;
  limit?: number;
  window?: number;
  toolsChars?: number;
  sources?: { Name: string; Tools: number; Chars: number }[];
  /** checkpointChanged: the ID of the checkpoint in force. */
  checkpoint?: string;
}

/** The kinds of failure (api.ErrorKind). */
export type ErrorKind = 'contextBudget' | 'toolCatalog' | 'uncertainCalls' | 'noProvider' | 'modelCall' | 'sessionNotFound' | 'storeLocked' | 'nothingToUndo'
  | 'storeTooNew' | 'memoryNotFound' | 'diskFull' | 'nothingToCompact' | 'invalidCheckpoint' | 'noCheckpoint' | 'checkpointChanged' | 'noSession' | 'failed';

/** The kind of a request's error, from its data ('failed' when it carries none). */
export function errorKind(err: unknown): ErrorKind {
  const data = (err as { data?: { kind?: ErrorKind } } | undefined)?.data;
  return data?.kind ?? 'failed';
}

/** One kind of content of a transcript and its size (alisio/context). */
export interface ContextPart {
  name: string;
  chars: number;
}

/** The alisio/context result. */
export interface ContextResult {
  session: string;
  parts: ContextPart[];
}

/** One origin of tools in the catalog (alisio/tools). */
export interface ToolSource {
  source: string;
  count: number;
  chars: number;
  tools?: string[];
  problem?: string;
}

/** The alisio/tools result. */
export interface ToolsDescription {
  sources: ToolSource[];
  catalogChars: number;
  confinement: string;
}

/** The alisio/prompt result. */
export interface PromptResult {
  session: string;
  reply: string;
  modelCalls: number;
  cut: boolean;
}

/** A line of the alisio/sessions result. */
export interface SessionSummary {
  id: string;
  title: string;
  workspace: string;
  createdAt: string;
  updatedAt: string;
  messages: number;
  compactedMessages: number;
}

/** The alisio/sessions result. */
export interface SessionsResult {
  sessions: SessionSummary[];
}

/** The alisio/newSession result. */
export interface NewSessionResult {
  session: string;
}

/** The alisio/checkpoint result; checkpoint is null when the session has none. */
export interface CheckpointResult {
  session: string;
  id?: string;
  createdAt?: string;
  checkpoint: Record<string, unknown> | null;
  partial?: boolean;
  text?: string;
  replacedMessages?: number;
  relevantFilesChangedSince?: string[];
  /** The checkpoint as the document a user edits (alisio/setCheckpoint takes it back). */
  editable?: Record<string, unknown>;
}

/** The alisio/recover result. */
export interface RecoverResult {
  session: string;
  recovered: number;
  calls: { id: string; name: string; arguments: string }[];
}

/** How a tool call of alisio/session's page ended (api.CallState). */
export type CallState = 'done' | 'failed' | 'declined' | 'uncertain' | 'running';

/** What became of one tool call: the index of its result in the page's messages (-1: none), and its state. */
export interface CallOutcome {
  result: number;
  state: CallState;
  /** A command's exit status. */
  exitCode?: number;
}

/** alisio/approve's params: a call that waits for the user before it runs — an edit (path, newText) or a
 * command. */
export interface ApproveParams {
  v: number;
  session: string;
  kind: 'edit' | 'command';
  call: { id: string; name: string; arguments: string };
  path?: string;
  exists?: boolean;
  newText?: string;
  command?: string;
  approval?: string;
  timeoutSeconds: number;
}

/** What alisio/undoCompaction did, and the daemon's sentence for it. */
export interface UndoCompactionResult {
  session: string;
  /** "compaction", "reduction" or "checkpoint edit". */
  kind: string;
  restored: number;
  kept: number;
  more: boolean;
  willCompact: boolean;
  overHardLimit: boolean;
  message: string;
}

/** What alisio/undoTurn did: the files put back, and those changed since the turn (left alone unless forced). */
export interface UndoTurnResult {
  session: string;
  restored: string[] | null;
  changedSince: string[] | null;
}
