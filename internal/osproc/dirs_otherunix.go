//go:build unix && !linux && !darwin

package osproc

// dataDirInHome is where the system keeps per-user application data, under the home directory (XDG's default).
const dataDirInHome = ".local/share"
