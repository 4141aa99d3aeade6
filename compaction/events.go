package compaction

// Event types of SPEC §9.
const (
	EventStarted    = "compaction_started"
	EventCompleted  = "compaction_completed"
	EventSkipped    = "compaction_skipped"
	EventFailed     = "compaction_failed"
	EventReduced    = "context_reduced"
	EventHookFailed = "plugin_hook_failed"
	// The background summary of the span the next compaction would replace (SummarizeAhead): started, written
	// (the next automatic compaction takes it while the view still begins with that span), thrown away
	// (Message says why).
	EventAheadStarted   = "compaction_background_started"
	EventAheadReady     = "compaction_background_ready"
	EventAheadDiscarded = "compaction_background_discarded"
)

// Reason says why a compaction runs.
type Reason string

// Compaction reasons.
const (
	ReasonManual Reason = "manual"
	ReasonAuto   Reason = "auto"
	ReasonBudget Reason = "budget"
)

// Event is one notification of SPEC §9. Zero fields are omitted on the wire.
type Event struct {
	Type   string `json:"type"`
	Reason Reason `json:"reason,omitempty"`
	Rule   Rule   `json:"rule,omitempty"`

	BeforeChars  int `json:"beforeChars,omitempty"`
	BeforeTokens int `json:"beforeTokens,omitempty"`
	AfterChars   int `json:"afterChars,omitempty"`
	AfterTokens  int `json:"afterTokens,omitempty"`
	// SpanMessages and SpanChars size the summarized span; CheckpointChars the checkpoint written.
	// SpanCheckpoint says the span begins with the earlier checkpoint (a later compaction folds it in).
	SpanMessages    int  `json:"spanMessages,omitempty"`
	SpanCheckpoint  bool `json:"spanCheckpoint,omitempty"`
	SpanChars       int  `json:"spanChars,omitempty"`
	CheckpointChars int  `json:"checkpointChars,omitempty"`
	// Chunks is the number of summarizer calls a span too large for one call took.
	Chunks int `json:"chunks,omitempty"`
	// Ahead says the span and its summary were written in the background, before the compaction was needed.
	Ahead   bool `json:"ahead,omitempty"`
	Partial bool `json:"partial,omitempty"`
	// MissingFields are checkpoint fields a cut summary lacks; RecoveredFields those the follow-up call supplied.
	MissingFields   []string `json:"missingFields,omitempty"`
	RecoveredFields []string `json:"recoveredFields,omitempty"`
	TextOnly        bool     `json:"textOnly,omitempty"`
	// Fidelity is how much of the replaced span's ledger the summarizer's checkpoint covered, and what was added.
	Fidelity Fidelity `json:"fidelity,omitempty"`
	// Messages is how many messages a reduction cut (R6).
	Messages       int      `json:"messages,omitempty"`
	UncertainCalls []string `json:"uncertainCalls,omitempty"`
	DurationMs     int64    `json:"durationMs,omitempty"`
	// Plugins are the plugins' reports (compaction_completed); Plugin and Hook name the hook that failed and
	// Cause says why (plugin_hook_failed, whose Reason is the compaction's, like every event's).
	Plugins []PluginReport `json:"plugins,omitempty"`
	Plugin  string         `json:"plugin,omitempty"`
	Hook    string         `json:"hook,omitempty"`
	Cause   string         `json:"cause,omitempty"`
	// Message is a sentence for the user; Error the underlying error when something failed.
	Message string `json:"message,omitempty"`
	Error   string `json:"error,omitempty"`
}

// CauseStopped is the Cause of a compaction_failed event when the compaction was stopped (its context
// cancelled): the session is as it was.
const CauseStopped = "stopped"

// Emitter receives events as they happen.
type Emitter func(Event)

func (e Emitter) emit(ev Event) {
	if e != nil {
		e(ev)
	}
}
