package tools

import (
	"slices"
	"testing"
)

// TestSafeEnv_WindowsNames: Windows spells variables in mixed case (Path, SystemRoot); they pass the
// allow-list as their upper-case names do, and secrets are dropped whatever their case.
func TestSafeEnv_WindowsNames(t *testing.T) {
	got := SafeEnv([]string{`Path=C:\Windows`, `SystemRoot=C:\Windows`, `ComSpec=C:\Windows\system32\cmd.exe`,
		"OpenAI_Api_Key=sk-1", "GITHUB_TOKEN=t", "RANDOM_THING=1", "GOFLAGS=-mod=mod"})
	want := []string{`Path=C:\Windows`, `SystemRoot=C:\Windows`, `ComSpec=C:\Windows\system32\cmd.exe`, "GOFLAGS=-mod=mod"}
	if !slices.Equal(got, want) {
		t.Fatalf("SafeEnv = %q, want %q", got, want)
	}
}
