//go:build unix

package tools

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"github.com/alisio-lsp/alisio-lsp/internal/osproc"
)

// containEnv marks a process started by run_command as the wrapper of one command; the wrapper removes it
// before the command runs, so that nothing the command starts takes it for a wrapper.
const containEnv = "ALISIO_CONTAIN_COMMAND"

// Every binary that runs tools (the daemon, the CLI, their tests) is also the wrapper of the commands it
// runs: started again with containEnv set, it runs contain instead of its main.
func init() {
	if os.Getenv(containEnv) == "1" && len(os.Args) > 1 {
		os.Exit(contain(os.Args[len(os.Args)-1]))
	}
}

// contain runs command with /bin/sh in a process group of its own and waits until it ends, the daemon asks
// it to stop (SIGTERM: a timeout or a cancel) or the daemon dies (the pipe on fd 3, whose other end only
// the daemon holds, reaches its end). Then it kills every process the command started, including those
// that detached with setsid, nohup or a double fork (Linux: the wrapper adopts them as a subreaper; other
// systems: the command's process group), and exits with the command's status.
func contain(command string) int {
	_ = os.Unsetenv(containEnv)
	osproc.BecomeSubreaper()
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT)
	daemonGone := make(chan os.Signal, 1)
	go func() {
		_, _ = os.NewFile(3, "alisio-daemon").Read(make([]byte, 1))
		daemonGone <- syscall.SIGTERM
	}()
	sh, err := startScoped(command)
	if err != nil {
		fmt.Fprintf(os.Stderr, "alisio: could not start /bin/sh: %v\n", err)
		return 127
	}
	exited := make(chan int, 1)
	go func() { exited <- exitStatus(sh.Wait()) }()
	code := 128 + int(syscall.SIGTERM)
	select {
	case code = <-exited:
	case <-stop:
	case <-daemonGone:
	}
	killAll(sh.Pid)
	return code
}

// startScoped starts /bin/sh -c command in a process group of its own, from a thread scoped so that the
// command cannot signal this wrapper or anything outside its sandbox (see scopeThread). The thread is never
// given back: it ends with its goroutine.
func startScoped(command string) (*os.Process, error) {
	type started struct {
		p   *os.Process
		err error
	}
	result := make(chan started, 1)
	go func() {
		runtime.LockOSThread()
		if err := scopeThread(); err != nil {
			fmt.Fprintf(os.Stderr, "alisio: %v\n", err)
		}
		p, err := os.StartProcess("/bin/sh", []string{"/bin/sh", "-c", command}, &os.ProcAttr{
			Env: os.Environ(), Files: []*os.File{os.Stdin, os.Stdout, os.Stderr}, Sys: &syscall.SysProcAttr{Setpgid: true}})
		result <- started{p, err}
	}()
	r := <-result
	return r.p, r.err
}

// exitStatus is the status a shell reports for a process that ended with st: its exit code, or 128 plus
// the signal that killed it.
func exitStatus(st *os.ProcessState, err error) int {
	if err != nil {
		return 128 + int(syscall.SIGKILL)
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return st.ExitCode()
}

// killAll kills the command's process group (led by group) and then, until none is left, every process
// still below the wrapper, reaping them as they end.
func killAll(group int) {
	_ = syscall.Kill(-group, syscall.SIGKILL)
	for range 500 { // a few seconds at most, however fast something forks
		left := osproc.Descendants(os.Getpid())
		for _, pid := range left {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if pid <= 0 || errors.Is(err, syscall.ECHILD) {
				break
			}
		}
		if len(left) == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}
