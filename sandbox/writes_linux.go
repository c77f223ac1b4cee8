package sandbox

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cshell/cshell/container"
	"github.com/cshell/cshell/policy"
)

// writes tells of the opens with write intent that the kernel refuses a
// shell because the path is read-only or hidden there: once a path, each
// with what would allow it. It judges as the call is handed over, before
// it goes on (the kernel decides it; this is telling only), from this
// side, through the caller's /proc entries, which lead into the shell's
// own view of the files; a path its policy makes writable costs no
// system call.
type writes struct {
	record func(policy.Violation)
	// writable and readOnly are the places the shell's policy makes
	// writable (the working directory, --rw paths, the caches, its own
	// tmpfs) and, within them, read-only or hidden: an open in the first
	// and not the second is judged without a system call.
	writable, readOnly []string
	mu                 sync.Mutex
	told               map[string]bool

	// The working directory of the process that opened last, looked at
	// most every cwdFor: a burst of opens (an install, an unpack) comes
	// from one process, and reading /proc/PID/cwd costs each open more
	// than the rest of its judgment.
	cwdPid  int
	cwd     string
	cwdRead time.Time
}

// cwdFor is how long a process's working directory is taken as read.
const cwdFor = 50 * time.Millisecond

// dirOf returns where o's relative path starts, as the shell sees it.
func (w *writes) dirOf(o container.OpenCall) (string, error) {
	if !strings.HasSuffix(o.Dir, "/cwd") {
		return os.Readlink(o.Dir) // a directory descriptor: read each time
	}
	if o.Pid == w.cwdPid && time.Since(w.cwdRead) < cwdFor {
		return w.cwd, nil
	}
	cwd, err := os.Readlink(o.Dir)
	if err == nil {
		w.cwdPid, w.cwd, w.cwdRead = o.Pid, cwd, time.Now()
	}
	return cwd, err
}

func newWrites(fsys policy.Filesystem, record func(policy.Violation)) *writes {
	w := &writes{record: record, writable: append([]string{fsys.Workdir, "/tmp", "/run", "/dev/shm"}, fsys.Write...)}
	for _, c := range fsys.Caches {
		w.writable = append(w.writable, c.Path)
	}
	w.readOnly = append(append(w.readOnly, fsys.Read...), fsys.Hide...)
	for _, m := range fsys.Missing {
		w.readOnly = append(w.readOnly, m.Path)
	}
	return w
}

// maxToldWrites bounds the paths remembered as told.
const maxToldWrites = 4096

func (w *writes) judge(o container.OpenCall) {
	// The path on this machine (through /proc) and as the shell sees it.
	host, shown := o.Root+o.Path, filepath.Clean(o.Path)
	if !filepath.IsAbs(o.Path) {
		base, err := w.dirOf(o)
		if err != nil {
			return
		}
		host, shown = o.Dir+"/"+o.Path, filepath.Join(base, o.Path)
	}
	if !filepath.IsAbs(shown) || underAny(shown, "/proc", "/sys", "/dev", container.InitDir) {
		return // the kernel's own files, or cshell's: not the user's to give
	}
	if underAny(shown, w.writable...) && !underAny(shown, w.readOnly...) {
		return // writable by the shell's policy: nothing to tell
	}
	target, name := host, shown
	var st unix.Stat_t
	err := unix.Lstat(target, &st)
	if errors.Is(err, unix.ENOENT) {
		if o.Flags&(unix.O_CREAT|unix.O_TMPFILE&^unix.O_DIRECTORY) == 0 {
			return // not created: it fails as missing
		}
		target, name = filepath.Dir(host), filepath.Dir(shown)
		err = unix.Lstat(target, &st)
	}
	if errors.Is(err, unix.EACCES) {
		// Beneath a hidden folder (its stand-in lets no one in): name
		// the folder, as root, whom it lets in, finds it.
		for target != "/" && errors.Is(err, unix.EACCES) {
			target, name = filepath.Dir(target), filepath.Dir(name)
			err = unix.Lstat(target, &st)
		}
		if err != nil || st.Mode&0o7777 != 0 {
			return
		}
	}
	hidden := err == nil && st.Mode&0o7777 == 0
	if err != nil {
		return // missing, or gone meanwhile: not a refused write
	}
	if !hidden {
		var fsst unix.Statfs_t
		if unix.Statfs(target, &fsst) != nil || fsst.Flags&unix.ST_RDONLY == 0 {
			return // writable: the write was not refused for its place
		}
	}
	if w.first(name) {
		w.record(WriteViolation(name, hidden))
	}
}

// first reports whether key is told for the first time (of the last
// maxToldWrites).
func (w *writes) first(key string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.told == nil || len(w.told) >= maxToldWrites {
		w.told = map[string]bool{}
	}
	seen := w.told[key]
	w.told[key] = true
	return !seen
}

// refused tells of a call the filter refused for what it would leave on
// the host, once a call and path.
func (w *writes) refused(r container.RefusedCall) {
	if w.first(r.Call + "\x00" + r.Path) {
		w.record(PrivilegeViolation(r))
	}
}

// PrivilegeViolation is the record of a call refused because what it
// makes would count on the host: a setuid or setgid mode, or an extended
// attribute (a file capability) in a shell started by root with its own
// user namespaces.
func PrivilegeViolation(r container.RefusedCall) policy.Violation {
	v := policy.Violation{Time: time.Now().UTC(), Method: "privilege"}
	path := policy.Printable(cmp.Or(r.Path, "a path it could not read"), 1024)
	if r.Xattr {
		v.Rule = fmt.Sprintf("%s on %s: a shell started by root with --allow-userns sets no extended attribute (a file capability would count on the host)", r.Call, path)
		return v
	}
	v.Rule = fmt.Sprintf("%s %04o on %s: no file in a shell gets a setuid or setgid bit (it could count on the host)", r.Call, r.Mode, path)
	return v
}

// WriteViolation is the record of a write refused at path: read-only in
// the shell (--rw would allow it), or hidden.
func WriteViolation(path string, hidden bool) policy.Violation {
	v := policy.Violation{Time: time.Now().UTC(), Method: "write"}
	path = policy.Printable(path, 1024)
	if hidden {
		v.Rule = fmt.Sprintf("%s is hidden from shells", path)
		return v
	}
	v.Rule = fmt.Sprintf("%s is read-only in the shell", path)
	v.Hint = "--rw " + path + " lets shells write there"
	return v
}

func underAny(p string, roots ...string) bool {
	for _, r := range roots {
		if p == r || strings.HasPrefix(p, r+"/") {
			return true
		}
	}
	return false
}
