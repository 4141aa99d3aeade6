package compaction

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Plugin extends compactions (SPEC PH1). BeforeCompact adds instructions and output fields to the same
// summarizer call (no second call); AfterCompact receives the checkpoint and the plugin's own fields, and may
// return context to place after the checkpoint and a report for the user. Compact only calls plugins: what
// they do (run a process, write the store) is theirs, and any failure becomes a plugin_hook_failed event while
// the compaction goes on (PH2). Time limits and panics are the caller's to contain (agent/plugins.Guard).
type Plugin interface {
	Name() string
	BeforeCompact(ctx context.Context, in HookInput) (BeforeResult, error)
	AfterCompact(ctx context.Context, in HookInput) (AfterResult, error)
}

// HookInput is what a hook is told about the compaction.
type HookInput struct {
	Session   string `json:"session,omitempty"`
	Workspace string `json:"workspace,omitempty"`
	Reason    Reason `json:"reason,omitempty"`
	Focus     string `json:"focus,omitempty"`
	// Checkpoint (the one just written) and Fields (the plugin's own output fields) are set for AfterCompact.
	Checkpoint *Checkpoint                `json:"checkpoint,omitempty"`
	Fields     map[string]json.RawMessage `json:"fields,omitempty"`
}

// BeforeResult extends the summarizer call: Instructions are added to its instructions, OutputFields (name →
// JSON Schema of the value) to the checkpoint schema.
type BeforeResult struct {
	Instructions string                     `json:"instructions,omitempty"`
	OutputFields map[string]json.RawMessage `json:"outputFields,omitempty"`
	// Anchors add kinds to the fidelity ledger (kind → the strings the checkpoint must keep, such as ticket
	// numbers): their coverage is measured like the built-in kinds', and those the checkpoint lacks join its
	// discoveries.
	Anchors map[string][]string `json:"anchors,omitempty"`
}

// AfterResult is what a plugin gives back: InjectContext is placed after the checkpoint, Report is shown to
// the user with compaction_completed.
type AfterResult struct {
	InjectContext string        `json:"injectContext,omitempty"`
	Report        *PluginReport `json:"report,omitempty"`
}

// PluginReport is a plugin's account of what it did, in compaction_completed's "plugins".
type PluginReport struct {
	Plugin  string `json:"plugin"`
	Summary string `json:"summary"`
}

// extension is what the BeforeCompact hooks added to a compaction.
type extension struct {
	instructions []string
	// fields maps each output field to its plugin, its schema (raw, for the request) and its validator.
	fields  map[string]extField
	plugins []Plugin // the plugins whose BeforeCompact succeeded, in order
	// anchors are the plugins' ledger kinds (Ledger.Extra).
	anchors map[string][]string
}

type extField struct {
	plugin string
	schema json.RawMessage
	check  *jsonschema.Schema
}

// beforeHooks runs every plugin's BeforeCompact and merges what they ask for. A hook that fails, or asks for a
// field that clashes with the checkpoint's or another plugin's, or whose schema does not compile, is left out
// with a plugin_hook_failed event.
func beforeHooks(ctx context.Context, opts Options, emit Emitter) extension {
	ext := extension{fields: map[string]extField{}}
	for _, p := range opts.Plugins {
		res, err := p.BeforeCompact(ctx, opts.hookInput())
		if err == nil {
			var fields map[string]extField
			if fields, err = compileFields(p.Name(), res.OutputFields, ext.fields); err == nil {
				for name, f := range fields {
					ext.fields[name] = f
				}
				if s := strings.TrimSpace(res.Instructions); s != "" {
					ext.instructions = append(ext.instructions, fmt.Sprintf("From the %s plugin: %s", p.Name(), s))
				}
				for kind, list := range res.Anchors {
					if ext.anchors == nil {
						ext.anchors = map[string][]string{}
					}
					ext.anchors[kind] = append(ext.anchors[kind], list...)
				}
				ext.plugins = append(ext.plugins, p)
				continue
			}
		}
		emit.emit(hookFailed(p.Name(), "beforeCompact", opts.Reason, err))
	}
	return ext
}

// hookFailed is the plugin_hook_failed event of plugin's hook in a compaction for reason: cause holds the
// failure's own words, message a sentence for the user.
func hookFailed(plugin, hook string, reason Reason, err error) Event {
	return Event{Type: EventHookFailed, Plugin: plugin, Hook: hook, Reason: reason, Cause: err.Error(),
		Message: fmt.Sprintf("the %s plugin's %s hook failed (%v); the compaction went on without it", plugin, hook, err)}
}

func compileFields(plugin string, raw map[string]json.RawMessage, taken map[string]extField) (map[string]extField, error) {
	out := map[string]extField{}
	for name, schema := range raw {
		if contains(Fields, name) || name == "text" {
			return nil, fmt.Errorf("output field %q clashes with the checkpoint's own field", name)
		}
		if other, ok := taken[name]; ok {
			return nil, fmt.Errorf("output field %q clashes with the %s plugin's", name, other.plugin)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
		if err != nil {
			return nil, fmt.Errorf("output field %q: its schema is not JSON: %v", name, err)
		}
		c := jsonschema.NewCompiler()
		url := plugin + "-" + name + ".json"
		if err := c.AddResource(url, doc); err != nil {
			return nil, fmt.Errorf("output field %q: %v", name, err)
		}
		sch, err := c.Compile(url)
		if err != nil {
			return nil, fmt.Errorf("output field %q: invalid JSON Schema: %v", name, err)
		}
		out[name] = extField{plugin: plugin, schema: schema, check: sch}
	}
	return out, nil
}

// schema is the checkpoint schema with the plugins' fields added (required, so that the model writes them).
func (ext extension) schema() json.RawMessage {
	base := CheckpointSchema(nil)
	if len(ext.fields) == 0 {
		return base
	}
	var s map[string]any
	_ = json.Unmarshal(base, &s)
	props := s["properties"].(map[string]any)
	required, _ := s["required"].([]any)
	for _, name := range ext.fieldNames() {
		props[name] = ext.fields[name].schema
		required = append(required, name)
	}
	s["required"] = required
	out, _ := json.Marshal(s)
	return out
}

func (ext extension) fieldNames() []string {
	names := make([]string, 0, len(ext.fields))
	for n := range ext.fields {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// system adds the plugins' instructions to the summarizer's.
func (ext extension) system(base string) string {
	if len(ext.instructions) == 0 {
		return base
	}
	return base + "\n\nAlso fill the extra fields " + strings.Join(ext.fieldNames(), ", ") + " of the schema:\n- " +
		strings.Join(ext.instructions, "\n- ")
}

// collect adds the plugin fields of one summarizer reply to got: arrays from several chunks are joined, other
// values are taken from the latest reply.
func (ext extension) collect(reply string, got map[string]json.RawMessage) {
	if len(ext.fields) == 0 {
		return
	}
	po := ParsePartial(reply)
	for name := range ext.fields {
		raw, ok := po.Fields[name]
		if !ok {
			continue
		}
		if prev, had := got[name]; had {
			var a, b any
			if json.Unmarshal(prev, &a) == nil && json.Unmarshal(raw, &b) == nil {
				raw, _ = json.Marshal(combine(a, b))
			}
		}
		got[name] = raw
	}
}

// afterHooks gives each plugin the checkpoint and its own fields, validated against its schemas, and returns
// the context to inject and the reports, in plugin order.
func afterHooks(ctx context.Context, ext extension, opts Options, cp Checkpoint, got map[string]json.RawMessage, emit Emitter) (inject []string, reports []PluginReport) {
	for _, p := range ext.plugins {
		in := opts.hookInput()
		in.Checkpoint, in.Fields = &cp, map[string]json.RawMessage{}
		var err error
		for _, name := range ext.fieldNames() {
			f := ext.fields[name]
			raw, ok := got[name]
			if f.plugin != p.Name() || !ok {
				continue
			}
			v, verr := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
			if verr == nil {
				verr = f.check.Validate(v)
			}
			if verr != nil {
				err = fmt.Errorf("the summarizer's %q does not match the plugin's schema: %s", name, strings.Join(strings.Fields(verr.Error()), " "))
				break
			}
			in.Fields[name] = raw
		}
		var res AfterResult
		if err == nil {
			res, err = p.AfterCompact(ctx, in)
		}
		if err != nil {
			emit.emit(hookFailed(p.Name(), "afterCompact", opts.Reason, err))
			continue
		}
		if s := strings.TrimSpace(res.InjectContext); s != "" {
			inject = append(inject, fmt.Sprintf("## Context from the %s plugin\n%s", p.Name(), s))
		}
		if res.Report != nil && res.Report.Summary != "" {
			reports = append(reports, PluginReport{Plugin: p.Name(), Summary: res.Report.Summary})
		}
	}
	return inject, reports
}

func (o Options) hookInput() HookInput {
	return HookInput{Session: o.Session, Workspace: o.Workspace, Reason: o.Reason, Focus: o.Focus}
}
