package osproc

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// AgentPeer reports why the process at the other end of conn, a Unix socket connection, must not drive this
// one: it belongs to another user, it runs below a command wrapper (a command the agent runs, or anything
// it started), or it runs below this process (a tool, an MCP server or a plugin it started). The peer is
// named by the kernel (SO_PEERCRED) and its ancestry read from /proc; a peer that cannot be told is refused.
// "" means none of these holds.
func AgentPeer(conn net.Conn) string {
	uc, ok := conn.(*net.UnixConn)
	if !ok {
		return ""
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return "its credentials cannot be read: " + err.Error()
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) { cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED) }); err != nil || cerr != nil {
		return fmt.Sprintf("its credentials cannot be read: %v", errors.Join(err, cerr))
	}
	if int(cred.Uid) != os.Geteuid() {
		return fmt.Sprintf("it runs as another user (uid %d)", cred.Uid)
	}
	self := os.Getpid()
	for pid, depth := int(cred.Pid), 0; pid > 1 && depth < 4096; depth++ {
		if pid == self && depth > 0 { // the daemon itself (its tests) may connect to it
			return fmt.Sprintf("process %d was started by this daemon (a tool, an MCP server or a plugin)", cred.Pid)
		}
		if isWrapper(pid) {
			return fmt.Sprintf("process %d runs inside a command the agent runs", cred.Pid)
		}
		_, parent, err := procStat(pid)
		if err != nil {
			return fmt.Sprintf("the ancestry of process %d cannot be read: %v", cred.Pid, err)
		}
		pid = parent
	}
	return ""
}

// isWrapper reports whether pid is a command wrapper: a program started as `PROGRAM alisio-command …`.
func isWrapper(pid int) bool {
	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return false
	}
	args := bytes.Split(cmdline, []byte{0})
	return len(args) > 1 && string(args[1]) == WrapperArg
}
