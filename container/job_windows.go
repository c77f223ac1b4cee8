package container

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// processRunner runs the command in a job object, so that every process
// it starts can be ended together. Windows has no process-group signals:
// every stop is forced.
type processRunner struct{}

var _ Runner = processRunner{}

func (processRunner) Isolation() Isolation { return Process }

func (processRunner) Start(s *Spec) (Shell, error) {
	if s.Held {
		return nil, fmt.Errorf("%w: a process-group shell cannot be held", ErrSandbox)
	}
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return nil, fmt.Errorf("create job object: %w", err)
	}
	// Closing the job's last handle (cshell exiting) ends its processes.
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{}
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return nil, fmt.Errorf("set up job object: %w", err)
	}
	argv := shellArgs(exec.LookPath, s.Command)
	viaCmd := false
	if _, err := exec.LookPath("bash"); err != nil {
		comspec := os.Getenv("ComSpec") // cmd.exe's own path, not one found in PATH
		if comspec == "" || !filepath.IsAbs(comspec) {
			comspec = filepath.Join(os.Getenv("SystemRoot"), "System32", "cmd.exe")
		}
		argv, viaCmd = []string{comspec, "/d", "/s", "/c", s.Command}, true
	}
	if len(s.Argv) > 0 {
		argv, viaCmd = s.Argv, false // the program and its arguments, as given
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	if viaCmd {
		// cmd reads its own command line: the command goes to it as
		// written, inside the quotes /s takes off (Go's quoting of an
		// argument, backslashes before quotes, is not cmd's).
		cmd.SysProcAttr = &syscall.SysProcAttr{CmdLine: `"` + argv[0] + `" /d /s /c "` + s.Command + `"`}
	}
	cmd.Dir = s.FS.Start
	cmd.Env = s.Env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = s.Stdin, s.Stdout, s.Stderr
	if err := cmd.Start(); err != nil {
		windows.CloseHandle(job)
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(cmd.Process.Pid))
	if err == nil {
		// A child started before this line escapes the job; the shell has
		// barely begun by then.
		err = windows.AssignProcessToJobObject(job, h)
		windows.CloseHandle(h)
	}
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		windows.CloseHandle(job)
		return nil, fmt.Errorf("put the command in a job object: %w", err)
	}
	return &jobShell{cmd: cmd, job: job}, nil
}

// jobShell is a command and its descendants in one job object.
type jobShell struct {
	cmd  *exec.Cmd
	job  windows.Handle
	once sync.Once
}

func (j *jobShell) Pid() int          { return j.cmd.Process.Pid }
func (j *jobShell) Console() *os.File { return nil }

// Signal ends the whole job: Windows cannot deliver unix signals.
func (j *jobShell) Signal(os.Signal) error { return j.Kill() }

func (j *jobShell) Kill() error {
	err := windows.TerminateJobObject(j.job, 1)
	if errors.Is(err, windows.ERROR_ACCESS_DENIED) {
		return nil // already ended
	}
	return err
}

func (j *jobShell) Wait() (Exit, error) {
	err := j.cmd.Wait()
	if j.cmd.ProcessState == nil {
		return Exit{}, err
	}
	return Exit{Code: j.cmd.ProcessState.ExitCode()}, nil
}

func (j *jobShell) Close() error {
	var err error
	j.once.Do(func() { err = windows.CloseHandle(j.job) })
	return err
}

// Sweep has nothing to do on Windows: a job object ends whole.
func Sweep(token string, pgid int) []int { return nil }
