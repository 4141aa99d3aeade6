package tools

import "strings"

// allowedEnv are the variables a command inherits by name; allowedEnvPrefixes by prefix (toolchains,
// locales). Everything else is dropped, so that no API key or token of the daemon's environment reaches a
// command, and through its output the model.
var (
	allowedEnv = map[string]bool{"PATH": true, "HOME": true, "USER": true, "LOGNAME": true, "SHELL": true, "LANG": true,
		"LANGUAGE": true, "TERM": true, "COLORTERM": true, "TZ": true, "TMPDIR": true, "EDITOR": true, "PAGER": true,
		"CC": true, "CXX": true, "CFLAGS": true, "CXXFLAGS": true, "LDFLAGS": true, "PKG_CONFIG_PATH": true,
		"LD_LIBRARY_PATH": true, "MAKEFLAGS": true, "JAVA_HOME": true, "NODE_PATH": true, "NVM_DIR": true,
		"CARGO_HOME": true, "RUSTUP_HOME": true, "PYENV_ROOT": true, "VIRTUAL_ENV": true, "CONDA_PREFIX": true,
		"PYTHONPATH": true,
		// Windows: without these, cmd.exe and most programs cannot start or find their files.
		"SYSTEMROOT": true, "SYSTEMDRIVE": true, "WINDIR": true, "COMSPEC": true, "PATHEXT": true, "TEMP": true,
		"TMP": true, "USERPROFILE": true, "USERNAME": true, "HOMEDRIVE": true, "HOMEPATH": true, "APPDATA": true,
		"LOCALAPPDATA": true, "PROGRAMDATA": true, "PROGRAMFILES": true, "PROGRAMFILES(X86)": true,
		"PROGRAMW6432": true, "COMMONPROGRAMFILES": true, "NUMBER_OF_PROCESSORS": true,
		"PROCESSOR_ARCHITECTURE": true, "OS": true}
	allowedEnvPrefixes = []string{"LC_", "GO", "XDG_"}
	// secretMarkers drop a variable even when its name is allowed (GOPRIVATE_TOKEN, XDG_…_KEY).
	secretMarkers = []string{"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH", "COOKIE", "SESSION"}
)

// SafeEnv is the allowed part of environ: what a command or a plugin process inherits.
func SafeEnv(environ []string) []string {
	out := make([]string, 0, len(allowedEnv)+2)
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if envAllowed(name) {
			out = append(out, kv)
		}
	}
	return out
}

// SecretName reports whether a variable's name marks it as a secret (an API key, a token, a password …).
func SecretName(name string) bool {
	upper := strings.ToUpper(name)
	for _, m := range secretMarkers {
		if strings.Contains(upper, m) {
			return true
		}
	}
	return false
}

func envAllowed(name string) bool {
	if SecretName(name) {
		return false
	}
	upper := strings.ToUpper(name)
	if allowedEnv[upper] { // names are compared in upper case: Windows spells PATH "Path"
		return true
	}
	for _, p := range allowedEnvPrefixes {
		if strings.HasPrefix(upper, p) {
			return true
		}
	}
	return false
}
