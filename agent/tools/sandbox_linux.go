package tools

import (
	"fmt"
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
func sandboxPrefix([]string) []string { return nil }

// confineThread restricts the calling OS thread, and every process it starts afterwards, with Landlock: it
// may change the file system only beneath writableDirs and in the few device files commands write to. The
// caller must have locked its goroutine to the thread and must never unlock it (the thread then ends with
// the goroutine). It returns an error, and confines nothing, where Landlock is unavailable.
func confineThread(writableDirs []string) error {
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
	return "run_command writes only in " + strings.Join(writableDirs(workspace), ", ") + " (Landlock" + pathLimit + "); " + unconfined +
		"; every process it starts, detached ones included, ends with it"
}
