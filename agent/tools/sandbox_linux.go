package tools

import (
	"fmt"
	"os"
	"strings"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// writeRights are the Landlock file-system rights the sandbox handles: every way of changing the file
// system. Reading and executing are not handled, so they stay allowed everywhere.
func writeRights(abi int) (dirRights, fileRights uint64) {
	fileRights = ll.AccessFSWriteFile
	dirRights = fileRights | ll.AccessFSRemoveDir | ll.AccessFSRemoveFile | ll.AccessFSMakeChar | ll.AccessFSMakeDir |
		ll.AccessFSMakeReg | ll.AccessFSMakeSock | ll.AccessFSMakeFifo | ll.AccessFSMakeBlock | ll.AccessFSMakeSym
	if abi >= 2 {
		dirRights |= ll.AccessFSRefer
	}
	if abi >= 3 {
		fileRights |= ll.AccessFSTruncate
		dirRights |= ll.AccessFSTruncate
	}
	return dirRights, fileRights
}

// sandboxPrefix: Linux confines the command's thread (Landlock), not through a sandbox command.
func sandboxPrefix([]string, string) []string { return nil }

// confineThread restricts the calling OS thread, and every process it starts afterwards, with Landlock: it
// may change the file system only beneath the workspace, writableDirs and in the few device files commands
// write to. The workspace's rule is made from the directory the session opened (workspace), not from its
// path, so that a workspace path replaced by a symlink since leads nowhere new. The caller must have locked its
// goroutine to the thread and must never unlock it (the thread then ends with the goroutine). It returns an
// error, and confines nothing, where Landlock is unavailable.
func confineThread(workspace *os.File, writableDirs []string) error {
	abi, err := ll.LandlockGetABIVersion()
	if err != nil || abi < 1 {
		return fmt.Errorf("no Landlock on this system (%v)", err)
	}
	dirRights, fileRights := writeRights(abi)
	ruleset, err := ll.LandlockCreateRuleset(&ll.RulesetAttr{HandledAccessFS: dirRights}, 0)
	if err != nil {
		return fmt.Errorf("creating the Landlock ruleset: %w", err)
	}
	defer unix.Close(ruleset)
	add := func(path string, rights uint64) error {
		fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil // a path that does not exist needs no rule
		}
		defer unix.Close(fd)
		return ll.LandlockAddPathBeneathRule(ruleset, &ll.PathBeneathAttr{AllowedAccess: rights, ParentFd: fd}, 0)
	}
	if err := ll.LandlockAddPathBeneathRule(ruleset, &ll.PathBeneathAttr{AllowedAccess: dirRights, ParentFd: int(workspace.Fd())}, 0); err != nil {
		return fmt.Errorf("allowing writes in the workspace %s: %w", workspace.Name(), err)
	}
	for _, dir := range writableDirs {
		if err := add(dir, dirRights); err != nil {
			return fmt.Errorf("allowing writes in %s: %w", dir, err)
		}
	}
	for _, dev := range []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty"} {
		if err := add(dev, fileRights); err != nil {
			return fmt.Errorf("allowing writes to %s: %w", dev, err)
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("setting no_new_privs: %w", err)
	}
	if err := ll.LandlockRestrictSelf(ruleset, 0); err != nil {
		return fmt.Errorf("restricting the command's thread: %w", err)
	}
	return nil
}

// Confinement says what run_command's sandbox confines on this system, for the user.
func Confinement(workspace string) string {
	if abi, err := ll.LandlockGetABIVersion(); err != nil || abi < 1 {
		return "run_command is NOT confined: Landlock is unavailable on this kernel; commands can write anywhere the user can; " + unconfined +
			"; every process it starts, detached ones included, ends with it"
	}
	writes := "run_command writes only in " + strings.Join(writableDirs(workspace), ", ") + " (Landlock" + pathLimit + "); "
	if !scopesAvailable() {
		return writes + unconfined + "; every process it starts, detached ones included, ends with it, unless it kills its own wrapper (this kernel lacks Landlock's scopes, Linux 6.12)"
	}
	return writes + unconfinedScoped + "; every process it starts, detached ones included, ends with it"
}

// scopeThread puts the calling thread, and every process it starts afterwards, in a Landlock domain of its own
// that may neither signal nor reach an abstract Unix socket of a process outside it (Landlock ABI 6, Linux
// 6.12): a command cannot stop or kill its wrapper (which would leave its children running), the daemon or the
// user's other programs. It changes nothing where the kernel lacks these scopes. The caller must have locked
// its goroutine to the thread and must never unlock it.
func scopeThread() error {
	if !scopesAvailable() {
		return nil
	}
	ruleset, err := ll.LandlockCreateRuleset(&ll.RulesetAttr{Scoped: ll.ScopeSignal | ll.ScopeAbstractUnixSocket}, 0)
	if err != nil {
		return fmt.Errorf("creating the Landlock scope: %w", err)
	}
	defer unix.Close(ruleset)
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("setting no_new_privs: %w", err)
	}
	if err := ll.LandlockRestrictSelf(ruleset, 0); err != nil {
		return fmt.Errorf("scoping the command's thread: %w", err)
	}
	return nil
}

// scopesAvailable reports whether this kernel has Landlock's scopes (signals, abstract sockets: ABI 6).
func scopesAvailable() bool {
	abi, err := ll.LandlockGetABIVersion()
	return err == nil && abi >= 6
}
