package tools

import "errors"

// sandboxPrefix: Windows has no sandbox command alisio uses.
func sandboxPrefix([]string) []string { return nil }

func confineThread([]string) error {
	return errors.New("Windows has no write confinement alisio can use")
}

// Confinement says what confines run_command on this system, for the user.
func Confinement(string) string {
	return "run_command is NOT confined on Windows: a command can read and write anywhere the user can; every process it starts is ended with it (Job Object)"
}
