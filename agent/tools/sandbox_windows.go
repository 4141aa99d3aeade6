package tools

// Confinement says what confines run_command on this system, for the user.
func Confinement(string) string {
	return "run_command is NOT confined on Windows: a command can write anywhere the user can; " + unconfined + "; every process it starts ends with it (Job Object)"
}
