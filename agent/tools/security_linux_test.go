package tools

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// detached starts `sleep 1000` detached from the command in the way its name says; the sleeping process
// writes its PID to the file "pid" first.
var detached = map[string]string{
	"setsid":                `setsid sh -c 'echo $$ > pid; exec sleep 1000' >/dev/null 2>&1 &`,
	"subshell":              `(sh -c 'echo $$ > pid; exec sleep 1000' >/dev/null 2>&1 &)`,
	"nohup":                 `nohup sh -c 'echo $$ > pid; exec sleep 1000' >/dev/null 2>&1 &`,
	"double fork":           `sh -c 'setsid sh -c "echo \$\$ > pid; exec sleep 1000" >/dev/null 2>&1 &'`,
	"setsid holding output": `setsid sh -c 'echo $$ > pid; exec sleep 1000' &`,
}

// waitUntilRunning is appended to a command so that it ends only once its detached process runs.
const waitUntilRunning = "\nwhile [ ! -s pid ]; do sleep 0.05; done; echo started"

// TestRunCommand_DetachedProcessesEndWithTheCommand: whatever way a command detaches a process (a new
// session, a subshell, nohup, a double fork), the process is gone when run_command returns: the wrapper
// adopts it as a subreaper and kills it. They used to survive the turn and the daemon.
func TestRunCommand_DetachedProcessesEndWithTheCommand(t *testing.T) {
	for name, command := range detached {
		t.Run(name, func(t *testing.T) {
			s, ws := workspace(t)
			out, isErr := s.Run(context.Background(), "run_command", `{"command":`+strconv.Quote(command+waitUntilRunning)+`,"timeoutSeconds":20}`)
			if isErr || !strings.HasPrefix(out, "exit code 0") || !strings.Contains(out, "started") {
				t.Fatalf("%s", out)
			}
			expectGone(t, readPID(t, ws))
		})
	}
}

// TestRunCommand_DetachedProcessesEndOnTimeout: a command stopped by its timeout takes its detached
// processes with it.
func TestRunCommand_DetachedProcessesEndOnTimeout(t *testing.T) {
	s, ws := workspace(t)
	out, isErr := s.Run(context.Background(), "run_command", `{"command":`+strconv.Quote(detached["setsid"]+waitUntilRunning+"\nsleep 60")+`,"timeoutSeconds":2}`)
	if !isErr || !strings.Contains(out, "did not finish within 2s") {
		t.Fatalf("%v %s", isErr, out)
	}
	expectGone(t, readPID(t, ws))
}

func readPID(t *testing.T, ws string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(ws, "pid"))
	must(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	must(t, err)
	return pid
}
