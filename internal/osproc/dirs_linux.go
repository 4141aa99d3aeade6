package osproc

// dataDirInHome is where the system keeps per-user application data, under the home directory.
const dataDirInHome = ".local/share"
