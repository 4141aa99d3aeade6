package tools

import (
	"encoding/base64"
	"strings"
	"testing"
	"unicode/utf16"
)

// TestPowershellCmdLine: the command reaches PowerShell exactly, quotes and non-ASCII included, through
// -EncodedCommand (UTF-16LE in base64), with no profile and no prompt.
func TestPowershellCmdLine(t *testing.T) {
	command := `Get-ChildItem "C:\My Files" | Where-Object { $_.Name -like '*ñ*' }; exit 3`
	line := powershellCmdLine(command)
	prefix := "powershell.exe -NoLogo -NoProfile -NonInteractive -ExecutionPolicy Bypass -EncodedCommand "
	if !strings.HasPrefix(line, prefix) {
		t.Fatalf("command line %q", line)
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(line, prefix))
	must(t, err)
	units := make([]uint16, len(raw)/2)
	for i := range units {
		units[i] = uint16(raw[2*i]) | uint16(raw[2*i+1])<<8
	}
	if got := string(utf16.Decode(units)); got != command {
		t.Fatalf("decoded %q, want %q", got, command)
	}
}
