//go:build unix

package osproc

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// secretsFDEnv names the descriptor on which a re-executed process finds the secrets it was started with.
const secretsFDEnv = "ALISIO_SECRETS_FD"

// maxPipedSecrets is what a pipe holds without a reader on every Unix (macOS's smallest pipe buffer).
const maxPipedSecrets = 16 << 10

// HideSecrets keeps the variables isSecret picks (API keys, tokens) out of what other processes can read of
// this one: the environment a process was started with stays readable in /proc/PID/environ (Linux) or with
// `ps eww` (macOS) whatever the program does to it later, so the process starts itself again without them,
// handing them over through a pipe, and keeps them in its own environment copy only (os.Getenv still sees
// them). It also marks the process not dumpable (Linux), so that other processes of the user cannot read its
// memory. Call it first thing in main; it returns only when nothing is left to hide (or hiding failed: the
// error says why, and the process goes on as it was).
func HideSecrets(isSecret func(name string) bool) error {
	notDumpable()
	if fd := os.Getenv(secretsFDEnv); fd != "" {
		return restoreSecrets(fd)
	}
	secrets := map[string]string{}
	var rest []string
	for _, kv := range os.Environ() {
		name, value, _ := strings.Cut(kv, "=")
		if isSecret(name) {
			secrets[name] = value
		} else {
			rest = append(rest, kv)
		}
	}
	if len(secrets) == 0 {
		return nil
	}
	data, _ := json.Marshal(secrets)
	if len(data) > maxPipedSecrets {
		return fmt.Errorf("the environment's secrets (%d bytes) are too large to hand over; they stay in the process environment", len(data))
	}
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("hiding the environment's secrets: %w", err)
	}
	defer r.Close()
	if _, err := w.Write(data); err != nil {
		w.Close()
		return fmt.Errorf("hiding the environment's secrets: %w", err)
	}
	w.Close()
	if _, err := unix.FcntlInt(r.Fd(), unix.F_SETFD, 0); err != nil { // inherited across the exec
		return fmt.Errorf("hiding the environment's secrets: %w", err)
	}
	err = syscall.Exec(Executable(), os.Args, append(rest, secretsFDEnv+"="+strconv.Itoa(int(r.Fd()))))
	return fmt.Errorf("hiding the environment's secrets: starting again: %w", err)
}

// restoreSecrets reads the secrets handed over on descriptor fd into this process's environment copy.
func restoreSecrets(fd string) error {
	_ = os.Unsetenv(secretsFDEnv)
	n, err := strconv.Atoi(fd)
	if err != nil {
		return fmt.Errorf("%s=%q is not a descriptor", secretsFDEnv, fd)
	}
	f := os.NewFile(uintptr(n), "secrets")
	defer f.Close()
	var secrets map[string]string
	if err := json.NewDecoder(f).Decode(&secrets); err != nil {
		return fmt.Errorf("reading the environment's secrets: %w", err)
	}
	for name, value := range secrets {
		if err := os.Setenv(name, value); err != nil {
			return fmt.Errorf("restoring %s: %w", name, err)
		}
	}
	return nil
}
