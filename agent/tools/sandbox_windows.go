package tools

// Confinement says what confines run_command on this system, for the user.
func Confinement(string) string {
	return "run_command is NOT confined on Windows: a command can read and write anywhere the user can; every process it starts is ended with it (Job Object)"
}
