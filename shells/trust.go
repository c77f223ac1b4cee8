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
func openStateDir(abs string) (*safefs.Dir, error) {
	made := false
	d, err := safefs.Open(abs)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
			return nil, fmt.Errorf("create the state dir %s: %w", abs, err)
		}
		switch err := os.Mkdir(abs, 0o700); {
		case err == nil:
			made = true
		case !errors.Is(err, fs.ErrExist):
			return nil, fmt.Errorf("create the state dir %s: %w", abs, err)
		}
		d, err = safefs.Open(abs)
	}
	if err != nil {
		if errors.Is(err, safefs.ErrSymlink) {
			return nil, stateDirErr("the state dir %s is a symbolic link; cshell keeps its state in a directory of its own: remove the link, or choose another with --state-dir", abs)
		}
		if errors.Is(err, fs.ErrPermission) {
			return nil, stateDirErr("the state dir %s cannot be opened: permission denied; give it back to this user (chmod u+rwx, or chown) or choose another with --state-dir or CSHELL_STATE_DIR", abs)
		}
		return nil, fmt.Errorf("open the state dir %s: %w", abs, errors.Unwrap(err))
	}
	fail := func(err error) (*safefs.Dir, error) {
		d.Close()
		return nil, err
	}
	info, err := d.Info()
	if err != nil {
		return fail(err)
	}
	if runtime.GOOS != "windows" {
		if int(info.Uid) != os.Geteuid() {
			return fail(stateDirErr("the state dir %s belongs to uid %d, not to you; choose another with --state-dir", abs, info.Uid))
		}
		if info.Mode.Perm()&0o077 != 0 {
			if err := d.Chmod(0o700); err != nil {
				return fail(err)
			}
		}
	}
	if err := checkIdentity(abs, info, made); err != nil {
		return fail(err)
	}
	return d, nil
}

// checkIdentity compares the state dir with the identity recorded for its
// path, and records it when there is none yet (or cshell made it now).
// Where there is no runtime dir (off Linux: no container shells to swap
// anything) there is nothing to compare with.
func checkIdentity(abs string, info safefs.Info, made bool) error {
	rtPath, err := container.RuntimeDir()
	if err != nil {
		return nil
	}
	rt, err := safefs.Open(rtPath)
	if err != nil {
		return fmt.Errorf("open the runtime dir: %w", err)
	}
	defer rt.Close()
	if err := rt.Mkdir(trustRecords, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("record the state dir: %w", err)
	}
	sum := sha256.Sum256([]byte(abs))
	name := trustRecords + "/" + hex.EncodeToString(sum[:16])
	want := fmt.Sprintf("%d %d %s\n", info.Dev, info.Ino, abs)
	b, err := rt.ReadFile(name, 8<<10)
	switch {
	case err == nil && string(b) == want:
		return nil
	case err == nil && !made:
		return stateDirErr("%s is not the directory cshell made there (it was replaced or moved, as a shell that can write one of its parents could do), so nothing in it is used; check what it holds, then remove %s to trust it", abs, rt.Name(name))
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("read the state dir's record: %w", err)
	}
	forgetGone(rt)
	if err := rt.WriteAtomic(name, []byte(want), 0o600); err != nil {
		return fmt.Errorf("record the state dir: %w", err)
	}
	return nil
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
		f := strings.SplitN(strings.TrimSuffix(string(b), "\n"), " ", 3)
		if len(f) != 3 || !filepath.IsAbs(f[2]) {
			continue
		}
		if _, err := os.Lstat(f[2]); errors.Is(err, fs.ErrNotExist) {
			_ = rt.Remove(trustRecords + "/" + n)
		}
	}
}
