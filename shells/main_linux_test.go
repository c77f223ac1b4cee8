package shells

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// leftBehind waits up to within for the processes that carry this run's
// mark to end, then kills the rest and names them.
func leftBehind(within time.Duration) []string {
	deadline := time.Now().Add(within)
	for {
		left := marked()
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			var out []string
			for _, pid := range left {
				cmd, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
				out = append(out, fmt.Sprintf("%d %q", pid, bytes.ReplaceAll(cmd, []byte{0}, []byte{' '})))
				_ = unix.Kill(pid, unix.SIGKILL)
			}
			return out
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// marked lists the processes other than this one whose environment holds
// this run's mark.
func marked() []int {
	mark := []byte("\x00" + markVar + "=" + testMark + "\x00")
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !bytes.Contains(append(append([]byte{0}, env...), 0), mark) {
			continue
		}
		if st, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil && bytes.Contains(st, []byte(") Z ")) {
			continue // a zombie runs nothing; its parent reaps it
		}
		pids = append(pids, pid)
	}
	return pids
}
