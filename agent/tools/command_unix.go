//go:build unix

package tools

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"

	"github.com/alisio-lsp/alisio-lsp/internal/osproc"
)

// shellDescription names the shell commands run in, for the model (Unix always uses /bin/sh).
func shellDescription(string) string { return "/bin/sh (POSIX shell)" }

// shellCommand is the process that runs command in dir: this program again as the command's wrapper (see
// contain), inside the system's sandbox command where it has one (macOS). Cancelling ctx asks the wrapper
// to stop (SIGTERM), so that it kills what the command started before it exits.
func (s *Set) shellCommand(ctx context.Context, command string) *exec.Cmd {
	argv := append(sandboxPrefix(writableDirs(s.dir), s.DaemonSocket), osproc.Executable(), osproc.WrapperArg, command)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	osproc.Group(cmd)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	return cmd
}

// runContained starts cmd from a thread of its own, confined to writing in the workspace where the system
// confines threads (Linux Landlock), and waits for it on that thread. The wrapper gets the read end of a
// pipe whose write end only this process holds, so that it notices the daemon's death however it dies.
func (s *Set) runContained(cmd *exec.Cmd) error {
	alive, held, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("starting the command: %w", err)
	}
	defer held.Close()
	cmd.ExtraFiles = []*os.File{alive}
	cmd.Env = append(cmd.Env, containEnv+"=1")
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: a confined thread ends with this goroutine
		if err := confineThread(s.held, writableDirs(s.dir)[1:]); err != nil && s.RequireSandbox {
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
		_ = osproc.KillGroup(cmd.Process.Pid) // the wrapper's group, should it have been killed before cleaning up
		done <- err
	}()
	return <-done
}

// endsWithIt tells the model what happens to the processes a command starts.
func endsWithIt() string {
	if runtime.GOOS == "linux" { // the wrapper adopts detached processes (a subreaper)
		return "Every process it starts ends with it, background and detached ones (nohup, setsid) included: ask the user to start long-running servers."
	}
	return "Processes it starts in the background end with it."
}
