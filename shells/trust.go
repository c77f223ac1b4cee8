package shells

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/cshell/cshell/container"
	"github.com/cshell/cshell/internal/safefs"
)

// ErrStateDir means the state dir cannot be trusted (cshell did not make
// it, it is a link, it belongs to someone else): nothing in it is used.
var ErrStateDir = errors.New("untrusted state dir")

// trustRecords is the folder of the runtime dir that remembers, for each
// state dir cshell made or first used, which directory it is (device and
// inode). Shells never see the runtime dir, so a state dir that a shell
// replaced (by renaming a parent it could write) is told apart from the
// real one, which keeps its identity wherever it was moved.
const trustRecords = "state-dirs"

// openStateDir opens the state dir at abs, making it (mode 0700) when it
// is missing, and checks that it is the one cshell made: a directory of
// this user's, closed to others, with the identity recorded for its path.
// note is a sentence for the user when a record was set aside.
func openStateDir(abs string) (d *safefs.Dir, note string, err error) {
	made := false
	d, err = safefs.Open(abs)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
			return nil, "", fmt.Errorf("create the state dir %s: %w; choose one with --state-dir or CSHELL_STATE_DIR", abs, err)
		}
		switch err := os.Mkdir(abs, 0o700); {
		case err == nil:
			made = true
		case !errors.Is(err, fs.ErrExist):
			return nil, "", fmt.Errorf("create the state dir %s: %w; choose one with --state-dir or CSHELL_STATE_DIR", abs, err)
		}
		d, err = safefs.Open(abs)
	}
	if err != nil {
		if errors.Is(err, safefs.ErrSymlink) {
			return nil, "", stateDirErr("the state dir %s is a symbolic link; cshell keeps its state in a directory of its own: remove the link, or choose another with --state-dir", abs)
		}
		if errors.Is(err, fs.ErrPermission) {
			return nil, "", stateDirErr("the state dir %s cannot be opened: permission denied; give it back to this user (chmod u+rwx, or chown) or choose another with --state-dir or CSHELL_STATE_DIR", abs)
		}
		return nil, "", fmt.Errorf("open the state dir %s: %w", abs, errors.Unwrap(err))
	}
	fail := func(err error) (*safefs.Dir, string, error) {
		d.Close()
		return nil, "", err
	}
	info, err := d.Info()
	if err != nil {
		return fail(err)
	}
	if runtime.GOOS != "windows" {
		if int(info.Uid) != os.Geteuid() {
			return fail(stateDirErr("the state dir %s belongs to uid %d, not to you; choose another with --state-dir or CSHELL_STATE_DIR", abs, info.Uid))
		}
		if info.Mode.Perm()&0o077 != 0 {
			if err := d.Chmod(0o700); err != nil {
				return fail(err)
			}
		}
	}
	if note, err = checkIdentity(abs, info, made); err != nil {
		return fail(err)
	}
	return d, note, nil
}

// checkIdentity compares the state dir with the identity recorded for its
// path, and records it when there is none yet (or cshell made it now).
// Where there is no runtime dir (off Linux: no container shells to swap
// anything) there is nothing to compare with.
//
// A record also names the runtime dir it was written in. One written in
// another runtime dir (an image in which cshell ran while it was built,
// a runtime dir copied from elsewhere) says nothing of this state dir: no
// shell can move the runtime dir, which none sees, so it is set aside
// (kept beside, ".set-aside") and the state dir recorded as it is, with a
// note. A record of this runtime dir that does not match is refused.
func checkIdentity(abs string, info safefs.Info, made bool) (string, error) {
	rtPath, err := container.RuntimeDir()
	if err != nil {
		return "", nil
	}
	rt, err := safefs.Open(rtPath)
	if err != nil {
		return "", fmt.Errorf("open the runtime dir: %w", err)
	}
	defer rt.Close()
	rtInfo, err := rt.Info()
	if err != nil {
		return "", fmt.Errorf("open the runtime dir: %w", err)
	}
	if err := rt.Mkdir(trustRecords, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("record the state dir: %w", err)
	}
	sum := sha256.Sum256([]byte(abs))
	name := trustRecords + "/" + hex.EncodeToString(sum[:16])
	dirLine := fmt.Sprintf("%d %d %s\n", info.Dev, info.Ino, abs)
	rtLine := fmt.Sprintf("runtime %d %d\n", rtInfo.Dev, rtInfo.Ino)
	b, err := rt.ReadFile(name, 8<<10)
	note := ""
	switch {
	case err == nil && strings.HasPrefix(string(b), dirLine):
		return "", nil
	case err == nil && !made:
		_, recorded, _ := strings.Cut(string(b), "\n")
		if !strings.HasPrefix(recorded, "runtime ") || recorded == rtLine {
			return "", stateDirErr("%s is not the directory cshell made there (it was replaced or moved, as a shell that can write one of its parents could do), so nothing in it is used; check what it holds, then remove %s to trust it", abs, rt.Name(name))
		}
		if err := rt.WriteAtomic(name+".set-aside", b, 0o600); err != nil {
			return "", fmt.Errorf("set the state dir's record aside: %w", err)
		}
		note = fmt.Sprintf("the record of the state dir %s was written in another runtime dir (an image or container where cshell ran before); set it aside as %s and trusting the state dir as it is now", abs, rt.Name(name+".set-aside"))
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("read the state dir's record: %w", err)
	}
	forgetGone(rt)
	if err := rt.WriteAtomic(name, []byte(dirLine+rtLine), 0o600); err != nil {
		return "", fmt.Errorf("record the state dir: %w", err)
	}
	return note, nil
}

// forgetGone drops the records of state dirs that no longer exist.
func forgetGone(rt *safefs.Dir) {
	names, err := rt.Names(trustRecords)
	if err != nil {
		return
	}
	for _, n := range names {
		b, err := rt.ReadFile(trustRecords+"/"+n, 8<<10)
		if err != nil {
			continue
		}
		first, _, _ := strings.Cut(string(b), "\n")
		f := strings.SplitN(first, " ", 3)
		if len(f) != 3 || !filepath.IsAbs(f[2]) {
			continue
		}
		if _, err := os.Lstat(f[2]); errors.Is(err, fs.ErrNotExist) {
			_ = rt.Remove(trustRecords + "/" + n)
		}
	}
}
