package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/alisio-lsp/alisio-lsp/transcript/synthetic"

	"github.com/alisio-lsp/alisio-lsp/config"
	"github.com/alisio-lsp/alisio-lsp/server"
	"github.com/alisio-lsp/alisio-lsp/server/servertest"
	"github.com/alisio-lsp/alisio-lsp/storage"
)

func benchStore(b *testing.B, messages int) (*storage.Store, string) {
	st, err := storage.Open(storage.DefaultOptions(filepath.Join(b.TempDir(), "store")).WithSyncWrites(false))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	cfg := synthetic.Default(messages)
	cfg.ResultChars, cfg.HugeEvery = 400, 0
	msgs := synthetic.Generate(cfg)[:messages]
	ws := b.TempDir()
	sess, err := st.CreateSession(storage.Session{Workspace: ws}, msgs)
	if err != nil {
		b.Fatal(err)
	}
	return st, sess.ID
}

// BenchmarkStatusUnderLoad measures alisio/status latency while a compaction of a 100k-message session runs
// and 50 other requests (session reads) are in flight. Each iteration imports a fresh copy of the large
// session, so every iteration compacts 100k messages.
func BenchmarkStatusUnderLoad(b *testing.B) {
	st, _ := benchStore(b, 10)
	small, err := st.CreateSession(storage.Session{Title: "small"}, synthetic.Generate(synthetic.Default(20)))
	if err != nil {
		b.Fatal(err)
	}
	cfg := synthetic.Default(100_000)
	cfg.ResultChars, cfg.HugeEvery = 400, 0
	bigMsgs := synthetic.Generate(cfg)
	c := servertest.Start(b, server.Options{Config: config.Default(), Store: st})
	ctx := context.Background()
	if _, err := c.Initialize(ctx, b.TempDir(), nil, false, false); err != nil {
		b.Fatal(err)
	}
	var latencies []time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		big, err := st.CreateSession(storage.Session{Title: "big"}, bigMsgs)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		var wg sync.WaitGroup
		stop := make(chan struct{})
		compacted := make(chan struct{})
		go func() {
			defer close(compacted)
			if err := c.Call(ctx, "alisio/compact", map[string]any{"session": big.ID}, nil); err != nil {
				b.Error(err)
			}
		}()
		for k := 0; k < 50; k++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					_ = c.Call(ctx, "alisio/session", map[string]any{"session": small.ID}, nil)
				}
			}()
		}
	sample:
		for {
			select {
			case <-compacted:
				break sample
			default:
			}
			t0 := time.Now()
			if err := c.Call(ctx, "alisio/status", map[string]any{"session": small.ID}, nil); err != nil {
				b.Fatal(err)
			}
			latencies = append(latencies, time.Since(t0))
		}
		close(stop)
		wg.Wait()
	}
	b.StopTimer()
	sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
	b.ReportMetric(float64(len(latencies)), "samples")
	b.ReportMetric(float64(latencies[len(latencies)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(latencies[len(latencies)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkStartup100k measures daemon start to the initialize reply with a 100k-message session in the
// store, and the heap held afterwards.
func BenchmarkStartup100k(b *testing.B) {
	st, _ := benchStore(b, 100_000)
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c := servertest.Start(b, server.Options{Config: config.Default(), Store: st})
		if _, err := c.Initialize(ctx, b.TempDir(), nil, false, false); err != nil {
			b.Fatal(err)
		}
		if err := c.Call(ctx, "alisio/sessions", nil, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	b.ReportMetric(float64(m.HeapAlloc)/(1<<20), "heap-MiB")
}

// BenchmarkSessionPage100k measures alisio/session on a never-compacted 100k-message session: the default
// page (its last 200 messages) and a history page, each a round trip over the JSON-RPC stream, and the heap the
// daemon holds afterwards compared with before the requests (after a GC).
func BenchmarkSessionPage100k(b *testing.B) {
	st, id := benchStore(b, 100_000)
	ctx := context.Background()
	c := servertest.Start(b, server.Options{Config: config.Default(), Store: st})
	if _, err := c.Initialize(ctx, b.TempDir(), nil, false, false); err != nil {
		b.Fatal(err)
	}
	heap := func() float64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return float64(m.HeapAlloc) / (1 << 20)
	}
	for _, history := range []bool{false, true} {
		b.Run(fmt.Sprintf("includeCompacted=%v", history), func(b *testing.B) {
			before := heap()
			for i := 0; i < b.N; i++ {
				var page struct {
					Messages []json.RawMessage
					Total    int
				}
				if err := c.Call(ctx, "alisio/session", map[string]any{"session": id, "includeCompacted": history}, &page); err != nil || len(page.Messages) != server.DefaultPageMessages {
					b.Fatalf("%v: %d messages", err, len(page.Messages))
				}
			}
			b.StopTimer()
			b.ReportMetric(heap()-before, "heap-growth-MiB")
		})
	}
}
