package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/alisio-lsp/alisio-lsp/transcript/transcripttest"
)

// decodeChildEnv names the file a child of BenchmarkImport decodes with plain encoding/json.
const decodeChildEnv = "ALISIO_BENCH_DECODE"

// decodeChild reads file and decodes it whole into generic values, as a plain JSON load does.
func decodeChild(file string) int {
	data, err := os.ReadFile(file)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// BenchmarkImport imports the generated 100k-message session (and the largest real transcript of
// ../shared/transcripts when present) with `alisio-lsp sessions import`, each run beside a plain
// encoding/json decode of the same file into generic values; both run as child processes, so that their
// wall time and peak resident memory (getrusage) are measured alike. Run with:
//
//	go test -run '^$' -bench BenchmarkImport -benchtime 3x ./cmd/alisio-lsp
func BenchmarkImport(b *testing.B) {
	gen := filepath.Join(b.TempDir(), "generated-100k.json")
	f, err := os.Create(gen)
	if err != nil {
		b.Fatal(err)
	}
	// Written by a child straight to the file: Linux counts the parent's peak memory in a child's.
	cmd := exec.Command(binary, "sessions", "generate", "--messages", "100000")
	cmd.Stdout = f
	if err := cmd.Run(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	files := []string{gen}
	var largest os.FileInfo
	for _, c := range transcripttest.Corpus(b) {
		if st, err := os.Stat(c.Path); err == nil && c.Shared && (largest == nil || st.Size() > largest.Size()) {
			largest = st
			files = append(files[:1], c.Path)
		}
	}
	for _, file := range files {
		st, err := os.Stat(file)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(filepath.Base(file), func(b *testing.B) {
			var dec, imp run
			for i := 0; i < b.N; i++ {
				// Interleaved, so that both see the same load on a shared machine.
				dec.add(b, exec.Command(os.Args[0], "-test.run=^$"), decodeChildEnv+"="+file)
				imp.add(b, exec.Command(binary, "--data-dir", filepath.Join(b.TempDir(), "data"), "sessions", "import", file))
			}
			mb := float64(st.Size()) / (1 << 20)
			b.ReportMetric(mb, "file-MB")
			b.ReportMetric(dec.seconds(b.N), "decode-s")
			b.ReportMetric(dec.peakMB, "decode-peak-MB")
			b.ReportMetric(imp.seconds(b.N), "import-s")
			b.ReportMetric(imp.peakMB, "import-peak-MB")
			b.ReportMetric(imp.seconds(b.N)/dec.seconds(b.N), "import/decode")
			b.ReportMetric(imp.peakMB/mb, "import-peak/file")
		})
	}
}

// run sums the wall time and keeps the largest peak resident memory of child processes.
type run struct {
	wall   time.Duration
	peakMB float64
}

func (r *run) add(b *testing.B, cmd *exec.Cmd, env ...string) {
	b.Helper()
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		b.Fatalf("%s: %v", cmd, err)
	}
	r.wall += time.Since(start)
	r.peakMB = max(r.peakMB, peakRSSMB(cmd.ProcessState))
}

func (r *run) seconds(n int) float64 { return r.wall.Seconds() / float64(n) }
