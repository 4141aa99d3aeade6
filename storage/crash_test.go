package storage

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/alisio-lsp/alisio-lsp/transcript/synthetic"

	"github.com/alisio-lsp/alisio-lsp/transcript"
)

// crashRewrite is the deterministic rewrite the crash child applies: a new checkpoint replaces the first
// message, and every fifth kept message is replaced by a reduced copy.
func crashRewrite(v View, round int) transcript.Rewrite {
	rw := transcript.Rewrite{BaseEpoch: v.Session.Head.Epoch, BaseLen: len(v.Messages), Drop: 1,
		Insert:  []transcript.Message{{ID: fmt.Sprintf("ckpt-%d", round), Role: transcript.RoleUser, Summary: true, Text: "checkpoint"}},
		Replace: map[int]transcript.Message{}}
	for i := 1; i < len(v.Messages); i += 5 {
		m := v.Messages[i]
		m.ID, m.OriginalID, m.Truncated = fmt.Sprintf("r%d-%d", round, i), v.Messages[i].ID, true
		rw.Replace[i] = m
	}
	return rw
}

// TestMain lets the test binary act as the crash child: it appends one message, reports it, then applies a
// large rewrite until the parent kills it.
func TestMain(m *testing.M) {
	if dir := os.Getenv("ALISIO_CRASH_CHILD"); dir != "" {
		os.Exit(crashChild(dir, os.Getenv("ALISIO_CRASH_SESSION"), os.Getenv("ALISIO_CRASH_ROUND")))
	}
	if dir := os.Getenv("ALISIO_CLOSE_CHILD"); dir != "" {
		os.Exit(closeChild(dir, os.Getenv("ALISIO_CLOSE_SESSION")))
	}
	os.Exit(m.Run())
}

func crashChild(dir, id, round string) int {
	s, err := Open(DefaultOptions(dir))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	added, err := s.Append(id, transcript.Message{ID: "ack-" + round, Role: transcript.RoleUser, Text: "acked " + round})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Printf("acked %s\n", added[0].ID)
	v, err := s.Transcript(id)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	var r int
	fmt.Sscan(round, &r)
	if _, err := s.Apply(id, crashRewrite(v, r)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Println("applied")
	if os.Getenv("ALISIO_CRASH_UNDO") != "" {
		if _, err := s.Undo(id); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		fmt.Println("undone")
	}
	_ = s.Close()
	return 0
}

// closeChild appends messages to session id of the store in dir, says "appended", waits for a line on its
// standard input (the disk is filled meanwhile), closes the store and prints what Close returned.
func closeChild(dir, id string) int {
	s, err := Open(DefaultOptions(dir))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	for i := range 50 {
		if _, err := s.Append(id, transcript.Message{Role: transcript.RoleUser, Text: fmt.Sprintf("kept %d %s", i, strings.Repeat("x", 20_000))}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
	}
	fmt.Println("appended")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	fmt.Println("close:", s.Close())
	return 0
}

// TestStore_CrashDuringLargeRewrite kills a child process with SIGKILL at random moments while it applies a
// rewrite of 50k messages (every third round also undoing it), and checks after each kill that the session is
// entirely before or after it — an undo brings it back whole — and that no acknowledged message is missing (G4).
func TestStore_CrashDuringLargeRewrite(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns and kills processes for a while")
	}
	dir := filepath.Join(t.TempDir(), "store")
	s, err := Open(DefaultOptions(dir))
	if err != nil {
		t.Fatal(err)
	}
	cfg := synthetic.Default(50_000)
	cfg.ResultChars, cfg.HugeEvery = 120, 0
	sess, err := s.CreateSession(Session{Title: "crash"}, synthetic.Generate(cfg))
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Close()

	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("ALISIO_CRASH_SEED"); v != "" {
		fmt.Sscan(v, &seed)
	}
	t.Logf("kill timing seed %d (rerun with ALISIO_CRASH_SEED)", seed)
	r := rand.New(rand.NewPCG(seed, seed))
	full := 1500 * time.Millisecond // rough duration of one child run; refined by runs that complete
	var acked []string
	kills, completed := 0, 0
	for round := 1; kills < 20 && round < 60; round++ {
		s, err := Open(DefaultOptions(dir))
		if err != nil {
			t.Fatalf("round %d: reopening: %v", round, err)
		}
		before, err := s.Transcript(sess.ID)
		_ = s.Close()
		if err != nil {
			t.Fatal(err)
		}

		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "ALISIO_CRASH_CHILD="+dir, "ALISIO_CRASH_SESSION="+sess.ID, fmt.Sprintf("ALISIO_CRASH_ROUND=%d", round))
		undoes := round%3 == 0 // every third round undoes its rewrite: killed during the undo, or not
		if undoes {
			cmd.Env = append(cmd.Env, "ALISIO_CRASH_UNDO=1")
		}
		out, _ := cmd.StdoutPipe()
		cmd.Stderr = os.Stderr
		start := time.Now()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string, 4)
		go func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		delay := time.Duration(r.Int64N(int64(full)))
		timer := time.NewTimer(delay)
		var got []string
		killed := false
	wait:
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					break wait
				}
				got = append(got, l)
			case <-timer.C:
				_ = cmd.Process.Signal(syscall.SIGKILL)
				killed = true
			}
		}
		_ = cmd.Wait()
		timer.Stop()
		if killed {
			kills++
		} else {
			completed++
			full = time.Since(start)
		}
		ackedNow, undone := false, false
		for _, l := range got {
			undone = undone || l == "undone"
			if id, ok := strings.CutPrefix(l, "acked "); ok {
				acked = append(acked, id)
				ackedNow = true
			}
		}

		s, err = Open(DefaultOptions(dir))
		if err != nil {
			t.Fatalf("round %d: reopening after kill: %v", round, err)
		}
		after, err := s.Transcript(sess.ID)
		if err != nil {
			t.Fatalf("round %d: reading after kill: %v", round, err)
		}
		hist, err := s.History(sess.ID)
		if err == nil {
			err = s.VerifyTotals(sess.ID)
		}
		_ = s.Close()
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		withAck := append(append([]transcript.Message{}, before.Messages...),
			transcript.Message{ID: fmt.Sprintf("ack-%d", round), Role: transcript.RoleUser, Text: fmt.Sprintf("acked %d", round)})
		rw := crashRewrite(View{Session: after.Session, Messages: withAck}, round)
		states := map[string]string{
			fmt.Sprint(ids(before.Messages)):   "before the append",
			fmt.Sprint(ids(withAck)):           "after the append, before the rewrite",
			fmt.Sprint(ids(rw.Apply(withAck))): "after the rewrite",
		}
		state, ok := states[fmt.Sprint(ids(after.Messages))]
		if !ok {
			t.Fatalf("round %d (killed=%v after %v): the session is a mix: %d messages", round, killed, delay, len(after.Messages))
		}
		if undone && state != "after the append, before the rewrite" {
			t.Fatalf("round %d: the rewrite was undone, yet the session is %s", round, state)
		}
		if ackedNow && state == "before the append" {
			t.Fatalf("round %d: acknowledged message ack-%d is missing", round, round)
		}
		seen := map[string]bool{}
		for _, m := range hist {
			seen[m.ID] = true
		}
		for _, id := range acked {
			if !seen[id] {
				t.Fatalf("round %d: acknowledged message %s missing from history", round, id)
			}
		}
		t.Logf("round %d: killed=%v after %v → %s", round, killed, delay.Round(time.Millisecond), state)
	}
	if kills < 20 {
		t.Fatalf("only %d kills", kills)
	}
}
