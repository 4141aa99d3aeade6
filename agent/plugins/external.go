package plugins

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/alisio-lsp/alisio-lsp/agent/tools"
	"github.com/alisio-lsp/alisio-lsp/compaction"
	"github.com/alisio-lsp/alisio-lsp/config"
	"github.com/alisio-lsp/alisio-lsp/internal/osproc"
)

// protocolVersion is the "v" of the JSON an external hook reads on stdin (docs/plugins.md).
const protocolVersion = 1

// External is a hook program in any language: each hook call runs Config.Command once, writes one JSON object
// on its stdin and reads one JSON object from its stdout (docs/plugins.md). The process inherits only the
// safe part of the environment (no API keys) plus Config.Env.
type External struct {
	Config config.Plugin
}

// Name is the configured name.
func (e *External) Name() string { return e.Config.Name }

// BeforeCompact asks the program for instructions and output fields.
func (e *External) BeforeCompact(ctx context.Context, in compaction.HookInput) (compaction.BeforeResult, error) {
	var out compaction.BeforeResult
	err := e.call(ctx, "beforeCompact", in, &out)
	return out, err
}

// AfterCompact gives the program the checkpoint and its fields.
func (e *External) AfterCompact(ctx context.Context, in compaction.HookInput) (compaction.AfterResult, error) {
	var out compaction.AfterResult
	err := e.call(ctx, "afterCompact", in, &out)
	return out, err
}

func (e *External) call(ctx context.Context, hook string, in compaction.HookInput, out any) error {
	payload, err := json.Marshal(struct {
		V    int    `json:"v"`
		Hook string `json:"hook"`
		compaction.HookInput
	}{protocolVersion, hook, in})
	if err != nil {
		return fmt.Errorf("encoding the %s input: %w", hook, err)
	}
	cmd := exec.CommandContext(ctx, e.Config.Command, e.Config.Args...)
	cmd.Env = tools.SafeEnv(os.Environ())
	for k, v := range e.Config.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Dir = in.Workspace
	// The hook's whole process group goes when its time is up, and its output is not waited for after that.
	osproc.Group(cmd)
	cmd.WaitDelay = time.Second
	cmd.Stdin = bytes.NewReader(payload)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("command %q not found: install it or fix plugins[].command", e.Config.Command)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%s: %v%s", hook, err, tail(stderr.String()))
	}
	dec := json.NewDecoder(&stdout)
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil {
		return fmt.Errorf("%s wrote invalid JSON on stdout (%v); expected one object as docs/plugins.md describes", hook, err)
	}
	return nil
}

// tail is the end of a hook's stderr, for the error.
func tail(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	if len(s) > 300 {
		s = "…" + s[len(s)-300:]
	}
	return " (stderr: " + s + ")"
}
