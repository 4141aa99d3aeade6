//go:build unix

package tools

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"

	"github.com/alisio-lsp/alisio-lsp/internal/osproc"
)

// shellDescription names the shell commands run in, for the model (Unix always uses /bin/sh).
func shellDescription(string) string { return "/bin/sh (POSIX shell)" }

// commandWrapper runs the command ($1) in the background of a shell that leads the command's process group,
// and kills that group when the daemon dies by any signal: a watcher reads a pipe (fd 3) whose other end only
// the daemon holds, and reads its end when the daemon is gone; SIGTERM or SIGHUP (Linux's parent-death signal)
// do the same. The daemon kills the group itself when the command ends.
const commandWrapper = `trap 'kill -KILL 0' TERM HUP
(read _ <&3; kill -KILL 0) >/dev/null 2>&1 </dev/null &
/bin/sh -c "$1" 3<&- &
wait $!`

// shellCommand is the process that runs command in dir: the wrapper, inside the system's sandbox command
// where it has one (macOS).
func (s *Set) shellCommand(ctx context.Context, command string) *exec.Cmd {
	argv := append(sandboxPrefix(writableDirs(s.dir)), "/bin/sh", "-c", commandWrapper, "alisio-command", command)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	osproc.Group(cmd)
	osproc.DieWithParent(cmd)
	return cmd
}

// runContained starts cmd from a thread of its own, confined to writing in the workspace where the system
// confines threads (Linux Landlock), waits for it on that thread, and then kills what is left of its process
// group: nothing the command started outlives it. The parent-death signal fires when the thread that started
// the command ends, so the thread lives as long as the command; it is never returned to the runtime.
func (s *Set) runContained(cmd *exec.Cmd) error {
	alive, held, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("starting the command: %w", err)
	}
	defer held.Close()
	cmd.ExtraFiles = []*os.File{alive}
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: a confined thread ends with this goroutine
		if err := confineThread(writableDirs(s.dir)); err != nil && s.RequireSandbox {
			done <- fmt.Errorf("refusing to run unconfined: %w", err)
			return
		}
		err := cmd.Start()
		alive.Close()
		if err != nil {
			done <- err
			return
		}
		err = cmd.Wait()
		_ = osproc.KillGroup(cmd.Process.Pid)
		done <- err
	}()
	return <-done
}
