package server

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/alisio-lsp/alisio-lsp/agent"
	"github.com/alisio-lsp/alisio-lsp/api"
)

// How a client answers approval questions, as it announces in initialize
// (capabilities.experimental.alisio.approve).
const (
	// approveByRequest: it answers the alisio/approve request (VS Code).
	approveByRequest = "request"
	// approveByNotification: it gets alisio/approve as a notification and answers with alisio/approvalAnswer
	// (Neovim: before 0.10 a handler of a server's request must answer at once, before the user has read the
	// change).
	approveByNotification = "notification"
)

// approvals are the questions of notification form waiting for their answer, by approval ID.
type approvals struct {
	mu      sync.Mutex // guards waiting and seq
	waiting map[string]chan bool
	seq     int
}

// approvalContext returns ctx carrying the turn's approval policy: tools.approval when set, else "ask" for a
// client that announced it answers approval questions and "auto" for the others.
func (s *Server) approvalContext(ctx context.Context) context.Context {
	policy := agent.ApprovalPolicy(s.settings().Tools.Approval)
	if policy == "" {
		policy = agent.ApproveAuto
		if s.approveMode() != "" {
			policy = agent.ApproveAsk
		}
	}
	if policy == agent.ApproveAuto {
		return ctx
	}
	return agent.WithApproval(ctx, policy, s.askEditor)
}

func (s *Server) approveMode() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.caps.approve
}

// askEditor asks the editor about req and waits for the answer, at most tools.approvalTimeoutSeconds.
func (s *Server) askEditor(ctx context.Context, req agent.ApprovalRequest) agent.Approval {
	timeout := agent.DefaultApprovalTimeout
	if n := s.settings().Tools.ApprovalTimeoutSeconds; n > 0 {
		timeout = time.Duration(n) * time.Second
	}
	p := api.ApproveParams{V: api.SchemaVersion, Session: req.Session, Kind: api.ApproveCommand, Call: req.Call, TimeoutSeconds: int(timeout / time.Second)}
	if req.Path != "" {
		p.Kind, p.Path, p.Exists, p.NewText = api.ApproveEdit, req.Path, req.Existed, req.After
	} else {
		p.Command = req.Command
	}
	wait, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	approved, err := s.ask(wait, p)
	switch {
	case err == nil:
		return agent.Approval{Approved: approved}
	case ctx.Err() != nil:
		return agent.Approval{Reason: "The turn was stopped while the call waited for the user's answer"}
	case errors.Is(err, context.DeadlineExceeded):
		return agent.Approval{Reason: fmt.Sprintf("No answer from the editor within %v", timeout)}
	}
	s.log.Warn("asking the editor for approval failed", zap.Error(err))
	return agent.Approval{Reason: "The editor could not ask the user (it does not answer approval requests; tools.approval \"auto\" lets calls run unasked)"}
}

// ask sends p in the form the client announced and waits for the answer.
func (s *Server) ask(ctx context.Context, p api.ApproveParams) (bool, error) {
	if s.approveMode() != approveByNotification {
		var r api.ApproveResult
		id, err := s.conn.Call(ctx, "alisio/approve", p, &r)
		if ctx.Err() != nil { // the editor closes its question
			_ = s.conn.Notify(s.connCtx, "$/cancelRequest", map[string]any{"id": &id})
		}
		return r.Approved, err
	}
	s.approvals.mu.Lock()
	if s.approvals.waiting == nil {
		s.approvals.waiting = map[string]chan bool{}
	}
	s.approvals.seq++
	p.Approval = fmt.Sprintf("a%d", s.approvals.seq)
	answer := make(chan bool, 1)
	s.approvals.waiting[p.Approval] = answer
	s.approvals.mu.Unlock()
	defer func() {
		s.approvals.mu.Lock()
		delete(s.approvals.waiting, p.Approval)
		s.approvals.mu.Unlock()
	}()
	if err := s.conn.Notify(ctx, "alisio/approve", p); err != nil {
		return false, err
	}
	select {
	case ok := <-answer:
		return ok, nil
	case <-ctx.Done():
		// The editor closes its question.
		_ = s.conn.Notify(s.connCtx, "alisio/approvalWithdrawn", map[string]any{"approval": p.Approval})
		return false, ctx.Err()
	}
}

// approvalAnswer takes the answer to the notification form of alisio/approve.
func (s *Server) approvalAnswer(_ context.Context, _ *agent.Agent, p *api.ApprovalAnswerParams) (*api.ApproveResult, error) {
	s.approvals.mu.Lock()
	answer, ok := s.approvals.waiting[p.Approval]
	s.approvals.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("that change no longer waits for an answer (it timed out or its turn stopped)")
	}
	answer <- p.Approved
	return &api.ApproveResult{Approved: p.Approved}, nil
}

// undoTurn restores the files the session's last turn wrote.
func (s *Server) undoTurn(_ context.Context, ag *agent.Agent, p *api.UndoTurnParams) (*api.UndoTurnResult, error) {
	res, err := ag.UndoTurn(p.Session, p.Force)
	s.changed(p.Session)
	if err != nil {
		return nil, err
	}
	return &api.UndoTurnResult{Session: p.Session, UndoResult: res}, nil
}

// undoCompaction restores the session's transcript as it was before its last compaction.
func (s *Server) undoCompaction(_ context.Context, ag *agent.Agent, p *api.UndoCompactionParams) (*api.UndoCompactionResult, error) {
	res, err := ag.UndoCompaction(p.Session)
	s.changed(p.Session)
	if err != nil {
		return nil, err
	}
	return &api.UndoCompactionResult{Session: p.Session, CompactionUndo: res, Message: api.UndoSentence(res, p.Session, s.words())}, nil
}

// checkProvider asks the configured provider for its model list (Alisio: Set Up Provider checks with it).
func (s *Server) checkProvider(ctx context.Context, ag *agent.Agent, _ *api.CheckProviderParams) (*api.CheckProviderResult, error) {
	res, err := ag.CheckProvider(ctx)
	if err != nil {
		return nil, s.explainNoProvider(err)
	}
	return &res, nil
}
