package storage

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alisio-lsp/alisio-lsp/internal/osproc"

	"github.com/alisio-lsp/alisio-lsp/transcript"
	"github.com/alisio-lsp/alisio-lsp/transcript/transcripttest"
)

func benchStore(b *testing.B) *Store {
	s, err := Open(DefaultOptions(filepath.Join(b.TempDir(), "store")))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	return s
}

// BenchmarkAppendDurable appends one ~1 KB message per operation with SyncWrites (fsync per commit).
func BenchmarkAppendDurable(b *testing.B) {
	s := benchStore(b)
	sess, _ := s.CreateSession(Session{}, nil)
	// 1 KB of ordinary text (NUL bytes, as an earlier version used, are escaped by JSON to 6 KB).
	msg := transcript.Message{Role: transcript.RoleTool, ToolCallID: "c", Text: strings.Repeat("go test ./... ok\n", 59)[:1000]}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.Append(sess.ID, msg); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}

func sessionOf(b *testing.B, s *Store, n int) Session {
	cfg := transcripttest.Default(n)
	cfg.ResultChars, cfg.HugeEvery = 400, 0
	sess, err := s.CreateSession(Session{}, transcripttest.Generate(cfg)[:n])
	if err != nil {
		b.Fatal(err)
	}
	return sess
}

// BenchmarkOpenSession reads the record and the effective transcript of a session of n messages.
func BenchmarkOpenSession(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("messages=%d", n), func(b *testing.B) {
			s := benchStore(b)
			sess := sessionOf(b, s, n)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if v, err := s.Transcript(sess.ID); err != nil || len(v.Messages) != n {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkReadPage reads the last 200 messages of a never-compacted 100k-message session: of its transcript
// (what a chat view opens on) and of its history (the same with the compacted flags, which needs one pass over
// the transcript's position entries).
func BenchmarkReadPage(b *testing.B) {
	s := benchStore(b)
	sess := sessionOf(b, s, 100_000)
	for _, history := range []bool{false, true} {
		b.Run(fmt.Sprintf("history=%v", history), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if p, err := s.ReadPage(sess.ID, history, -1, 200); err != nil || len(p.Messages) != 200 {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkTranscriptAfterCompaction reads the effective transcript (a checkpoint and 200 kept messages) of a
// session whose history is n messages: the time must not depend on n.
func BenchmarkTranscriptAfterCompaction(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("history=%d", n), func(b *testing.B) {
			s := benchStore(b)
			sess := sessionOf(b, s, n)
			v, _ := s.Transcript(sess.ID)
			drop := n - 200
			for drop > 0 && !safeAt(v.Messages, drop) {
				drop--
			}
			rw := transcript.Rewrite{BaseEpoch: v.Session.Head.Epoch, BaseLen: n, Drop: drop,
				Insert: []transcript.Message{{Role: transcript.RoleUser, Summary: true, Text: "checkpoint"}}}
			if _, err := s.Apply(sess.ID, rw); err != nil {
				b.Fatal(err)
			}
			want := n - drop + 1
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if v, err := s.Transcript(sess.ID); err != nil || len(v.Messages) != want {
					b.Fatal(err, len(v.Messages))
				}
			}
		})
	}
}

func safeAt(msgs []transcript.Message, p int) bool {
	for _, s := range transcript.SafeBoundaries(msgs) {
		if s == p {
			return true
		}
	}
	return false
}

// BenchmarkRawWriteFdatasync is the baseline for BenchmarkAppendDurable: append 1 KB to a file and fdatasync
// it, on the same disk (the benchmark's temp dir). A durable append cannot be faster than this.
func BenchmarkRawWriteFdatasync(b *testing.B) {
	f, err := os.OpenFile(filepath.Join(b.TempDir(), "raw"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	block := make([]byte, 1000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := f.Write(block); err != nil {
			b.Fatal(err)
		}
		if err := osproc.DataSync(f); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
}
