package tools

import (
	"context"
	"fmt"
	"os/exec"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// endsWithIt tells the model what happens to the processes a command starts.
func endsWithIt() string {
	return "Every process it starts ends with it, background ones included: ask the user to start long-running servers."
}

// shellDescription names the shell commands run in, for the model.
func shellDescription(shell string) string {
	if shell == "powershell" {
		return "Windows PowerShell (use PowerShell commands such as Get-ChildItem, Get-Content, Select-String)"
	}
	return "cmd.exe (Windows Command Prompt: use Windows commands such as dir, type, findstr, or call powershell -Command explicitly)"
}

// shellCommand is the process that runs command in the workspace — cmd.exe /d /s /c "command", or PowerShell
// with the command encoded — started suspended so that runContained can put it in a Job Object before it runs
// anything.
func (s *Set) shellCommand(ctx context.Context, command string) *exec.Cmd {
	exe, line := "cmd.exe", `cmd.exe /d /s /c "`+command+`"`
	if s.limits.Shell == "powershell" {
		exe, line = "powershell.exe", powershellCmdLine(command)
	}
	cmd := exec.CommandContext(ctx, exe)
	cmd.SysProcAttr = &syscall.SysProcAttr{
		CmdLine:       line,
		CreationFlags: windows.CREATE_SUSPENDED | windows.CREATE_NEW_PROCESS_GROUP,
	}
	return cmd
}

// runContained runs cmd inside a Job Object that kills every process in it when its last handle closes
// (JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE): when the command ends, is cancelled, or the daemon dies however it
// dies, every process the command started goes with it.
func (s *Set) runContained(cmd *exec.Cmd) error {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return fmt.Errorf("creating the command's job object: %w", err)
	}
	defer windows.CloseHandle(job)
	limits := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{}
	limits.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&limits)), uint32(unsafe.Sizeof(limits))); err != nil {
		return fmt.Errorf("setting up the command's job object: %w", err)
	}
	cmd.Cancel = func() error { return windows.TerminateJobObject(job, 1) }
	if err := cmd.Start(); err != nil {
		return err
	}
	if err := assignAndResume(job, uint32(cmd.Process.Pid)); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return fmt.Errorf("starting the command in its job object: %w", err)
	}
	err = cmd.Wait()
	_ = windows.TerminateJobObject(job, 1)
	return err
}

// assignAndResume puts the suspended process pid in job, then resumes its threads.
func assignAndResume(job windows.Handle, pid uint32) error {
	proc, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, pid)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(proc)
	if err := windows.AssignProcessToJobObject(job, proc); err != nil {
		return err
	}
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(snap)
	entry := windows.ThreadEntry32{Size: uint32(unsafe.Sizeof(windows.ThreadEntry32{}))}
	for err = windows.Thread32First(snap, &entry); err == nil; err = windows.Thread32Next(snap, &entry) {
		if entry.OwnerProcessID != pid {
			continue
		}
		thread, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, entry.ThreadID)
		if err != nil {
			return err
		}
		_, err = windows.ResumeThread(thread)
		windows.CloseHandle(thread)
		if err != nil {
			return err
		}
	}
	return nil
}
