// Package osproc holds what alisio asks of the operating system about processes and files, one small file per
// OS: process groups (so a command's descendants die with it), detaching the shared daemon, exclusive file
// locks, and free disk space. Callers stay free of build tags.
package osproc
