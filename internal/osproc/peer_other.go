//go:build !linux

package osproc

import "net"

// AgentPeer: outside Linux the daemon does not inspect its peers. On macOS the sandbox profile keeps commands
// from connecting to the daemon's socket at all; Windows does not confine commands.
func AgentPeer(net.Conn) string { return "" }
