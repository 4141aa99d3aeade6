package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"testing"
	"time"

	"github.com/alisio-lsp/alisio-lsp/transcript/synthetic"

	"github.com/alisio-lsp/alisio-lsp/config"
	"github.com/alisio-lsp/alisio-lsp/server"
	"github.com/alisio-lsp/alisio-lsp/server/servertest"
	"github.com/alisio-lsp/alisio-lsp/storage"
)

// BenchmarkIdleMemory is the daemon's memory with ten open sessions of 10k messages each, idle: the sessions
// are stored, the daemon is started over a JSON-RPC stream, and each session is opened as an editor opens it
// (alisio/status, then alisio/session). After two idle seconds and a collection it reports the heap in use and
// the process's resident memory (Linux: all of it, and the part not backed by files, which leaves out the
// store's mapped tables and the binary) beside the size of the ten effective views (their messages as stored
// JSON), and fails when the heap in use or the resident memory not backed by files is more than that size
// plus 100 MiB. Run it with -benchtime 1x.
func BenchmarkIdleMemory(b *testing.B) {
	const sessions, perSession = 10, 10_000
	opts := storage.DefaultOptions(filepath.Join(b.TempDir(), "store")).WithSyncWrites(false)
	st, err := storage.Open(opts)
	if err != nil {
		b.Fatal(err)
	}
	ids := make([]string, sessions)
	viewBytes := 0
	for i := range ids {
		cfg := synthetic.Default(perSession) // the shape of `alisio-lsp sessions generate`
		cfg.Seed = uint64(i + 1)
		msgs := synthetic.Generate(cfg)[:perSession]
		for _, m := range msgs {
			raw, _ := json.Marshal(m)
			viewBytes += len(raw)
		}
		sess, err := st.CreateSession(storage.Session{Title: "s" + strconv.Itoa(i)}, msgs)
		if err != nil {
			b.Fatal(err)
		}
		ids[i] = sess.ID
	}
	// The daemon starts on a store written earlier, as an editor finds it: the buffers of the writes above
	// (Badger's table builders, pooled while writes continue) are not the idle daemon's.
	if err := st.Close(); err != nil {
		b.Fatal(err)
	}
	if st, err = storage.Open(opts); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	ctx := context.Background()
	for b.Loop() {
		c := servertest.Start(b, server.Options{Config: config.Default(), Store: st})
		if _, err := c.Initialize(ctx, b.TempDir(), nil, false, false); err != nil {
			b.Fatal(err)
		}
		for _, id := range ids {
			var view json.RawMessage
			if err := c.Call(ctx, "alisio/status", map[string]any{"session": id}, nil); err != nil {
				b.Fatal(err)
			}
			if err := c.Call(ctx, "alisio/session", map[string]any{"session": id}, &view); err != nil {
				b.Fatal(err)
			}
		}
		time.Sleep(2 * time.Second) // idle: the status notifications and the store's flushes settle
		runtime.GC()
		debug.FreeOSMemory()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		views, heap := float64(viewBytes)/(1<<20), float64(ms.HeapInuse)/(1<<20)
		b.ReportMetric(views, "views-MiB")
		b.ReportMetric(heap, "heap-inuse-MiB")
		held, anonMiB := heap, 0.0
		if all, anon, ok := resident(); ok {
			anonMiB = float64(anon) / (1 << 20)
			b.ReportMetric(float64(all)/(1<<20), "rss-MiB")
			b.ReportMetric(float64(anon)/(1<<20), "rss-anon-MiB")
			held = max(held, float64(anon)/(1<<20))
		}
		if held > views+100 {
			b.Errorf("the idle daemon holds %.0f MiB (heap in use %.0f MiB, resident not backed by files %.0f MiB) for %.0f MiB of open views (limit: views + 100 MiB)", held, heap, anonMiB, views)
		}
	}
}

// resident is the process's resident memory from /proc (false where there is none): all of it, and the part
// not backed by files (the heap, stacks, the runtime's own; not the store's mapped tables or the binary).
func resident() (all, anon uint64, ok bool) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		for name, dst := range map[string]*uint64{"VmRSS:": &all, "RssAnon:": &anon} {
			if rest, found := bytes.CutPrefix(sc.Bytes(), []byte(name)); found {
				kb, err := strconv.ParseUint(string(bytes.TrimSuffix(bytes.TrimSpace(rest), []byte(" kB"))), 10, 64)
				*dst, ok = kb<<10, err == nil
			}
		}
	}
	return all, anon, ok && all > 0 && anon > 0
}
