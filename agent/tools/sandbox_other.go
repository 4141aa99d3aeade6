//go:build !linux

package tools

import "errors"

func confineThread([]string) error {
	return errors.New("the sandbox needs Linux Landlock")
}

func writableDirs(workspace string) []string { return []string{workspace} }

// Confinement says what run_command's sandbox confines on this system, for the user.
func Confinement(string) string {
	return "run_command is NOT confined on this system (the sandbox needs Linux Landlock)"
}
