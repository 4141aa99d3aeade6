package tools

import (
	"encoding/base64"
	"unicode/utf16"
)

// powershellCmdLine is the command line that runs command in Windows PowerShell: encoded (UTF-16LE, base64) so
// that no quoting of the command line can change it, with no profile and no prompt.
func powershellCmdLine(command string) string {
	units := utf16.Encode([]rune(command))
	raw := make([]byte, 2*len(units))
	for i, u := range units {
		raw[2*i], raw[2*i+1] = byte(u), byte(u>>8)
	}
	return "powershell.exe -NoLogo -NoProfile -NonInteractive -ExecutionPolicy Bypass -EncodedCommand " + base64.StdEncoding.EncodeToString(raw)
}
