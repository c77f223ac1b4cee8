package container

import (
	"bytes"
	"os"
	"slices"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// setParentDeath makes the kernel kill the command when cshell dies.
func setParentDeath(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }

// Sweep kills every process of this user that carries token in its
// environment (TokenVar), and returns the pids of those outside the
// process group pgid (0: any). A process that was given a fresh
// environment cannot be found this way; nothing else is killed.
func Sweep(token string, pgid int) []int {
	if token == "" {
		return nil
	}
	mark := []byte(TokenVar + "=" + token + "\x00")
	var escaped []int
	for round := 0; round < 5; round++ { // they may fork while we look
		found := 0
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid <= 1 || pid == os.Getpid() {
				continue
			}
			var st unix.Stat_t
			if unix.Stat("/proc/"+e.Name(), &st) != nil || int(st.Uid) != os.Geteuid() {
				continue
			}
			env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
			if err != nil || !bytes.Contains(append([]byte{0}, env...), append([]byte{0}, mark...)) {
				continue
			}
			if pg, err := unix.Getpgid(pid); err == nil && pg != pgid && !slices.Contains(escaped, pid) {
				escaped = append(escaped, pid)
			}
			_ = unix.Kill(pid, unix.SIGKILL)
			found++
		}
		if found == 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	return escaped
}
