package shells

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cshell/cshell/internal/escape"
	"github.com/cshell/cshell/internal/kind"
	"github.com/cshell/cshell/internal/safefs"
)

// ErrNotFound means no shell has that id or name.
var ErrNotFound = errors.New("no such shell")

// ErrRefused means the start was refused: shells disabled, limit reached.
var ErrRefused = kind.Refused

// StateDir picks the state directory: the flag, else $CSHELL_STATE_DIR,
// else $XDG_STATE_HOME/cshell, else ~/.local/state/cshell.
func StateDir(flag, home string) string {
	switch {
	case flag != "":
		return flag
	case os.Getenv("CSHELL_STATE_DIR") != "":
		return os.Getenv("CSHELL_STATE_DIR")
	}
	return DefaultStateDir(home)
}

// DefaultStateDir is the state dir when neither the flag nor
// $CSHELL_STATE_DIR names one: $XDG_STATE_HOME/cshell, else
// ~/.local/state/cshell, else (no home this user can write)
// $XDG_RUNTIME_DIR/cshell-state-UID or $TMPDIR/cshell-state-UID
// (/tmp when TMPDIR is unset).
func DefaultStateDir(home string) string {
	if x := os.Getenv("XDG_STATE_HOME"); x != "" {
		return filepath.Join(x, "cshell")
	}
	if runtime.GOOS == "windows" {
		// The user's local application data, as Windows programs keep
		// state (no ~/.local there).
		if d := os.Getenv("LOCALAPPDATA"); d != "" && filepath.IsAbs(d) {
			return filepath.Join(d, "cshell", "state")
		}
	}
	inHome := filepath.Join(home, ".local", "state", "cshell")
	if homeKeeps(home, inHome) {
		return inHome
	}
	// No home to keep state in (HOME unset, "/", missing or not this
	// user's to write: an arbitrary uid in a CI container): a folder of
	// this user's beside its runtime files, checked as any state dir.
	base := os.Getenv("XDG_RUNTIME_DIR")
	if st, err := os.Stat(base); base == "" || !filepath.IsAbs(base) || err != nil || !st.IsDir() {
		base = os.TempDir()
	}
	return filepath.Join(base, fmt.Sprintf("cshell-state-%d", os.Geteuid()))
}

// homeKeeps reports whether home can hold the state dir at dir: it is
// there already, or home is a directory other than / that this user may
// write.
func homeKeeps(home, dir string) bool {
	if home == "" || !filepath.IsAbs(home) || filepath.Clean(home) == "/" {
		return false
	}
	if _, err := os.Lstat(dir); err == nil {
		return true
	}
	for p := dir; ; p = filepath.Dir(p) {
		// The deepest part that exists must be writable for the rest to be made.
		if st, err := os.Stat(p); err == nil {
			return st.IsDir() && canWrite(p)
		}
		if p == home || p == filepath.Dir(p) {
			return false
		}
	}
}

// Manager owns a state directory: the shells recorded there, their ids,
// logs and notices. It holds the directory by descriptor and reaches every
// file in it without following links (see internal/safefs), so that what
// the state dir's path names later does not matter. Its methods are safe
// for concurrent use, also by several cshell processes: changes that must
// not race take a file lock.
type Manager struct {
	dir  *safefs.Dir
	path string // the state dir's path, for what cshell shows
	log  *slog.Logger
	// Warn receives one sentence per shell record that cannot be read.
	Warn func(string)
	// Notes are what Open did that the user should hear of (a record set
	// aside), one sentence each.
	Notes []string
}

// Open returns the manager of the state dir at path, making it (mode 0700)
// if needed; a state dir that cshell did not make is refused (ErrStateDir).
func Open(path string, log *slog.Logger) (*Manager, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	d, note, err := openStateDir(abs)
	if err != nil {
		return nil, err
	}
	m, err := newManager(d, abs, log)
	if m != nil && note != "" {
		m.Notes = append(m.Notes, note)
	}
	return m, err
}

// openInherited returns the manager of a state dir already opened and
// checked by the parent process (a supervisor's, on an inherited fd).
func openInherited(f *os.File, path string, log *slog.Logger) (*Manager, error) {
	d, err := safefs.FromFile(f, path)
	if err != nil {
		return nil, err
	}
	return newManager(d, path, log)
}

func newManager(d *safefs.Dir, path string, log *slog.Logger) (*Manager, error) {
	for _, sub := range []string{shellsName, exposingName} {
		if err := ensureDir(d, sub); err != nil {
			d.Close()
			return nil, err
		}
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Manager{dir: d, path: path, log: log, Warn: func(string) {}}, nil
}

// ensureDir makes the directory rel of d, or checks that it is one.
func ensureDir(d *safefs.Dir, rel string) error {
	err := d.Mkdir(rel, 0o700)
	if err == nil || !errors.Is(err, fs.ErrExist) {
		return err
	}
	st, err := d.Lstat(rel)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return stateDirErr("%s is not a directory; move it away", d.Name(rel))
	}
	return nil
}

// Close lets go of the state dir.
func (m *Manager) Close() error { return m.dir.Close() }

// Dir is the state directory's path.
func (m *Manager) Dir() string { return m.path }

// logPath is where a shell's log is, as shown to users.
func (m *Manager) logPath(id string) string { return filepath.Join(m.path, shellsName, id, logName) }

// shellDir opens a shell's folder.
func (m *Manager) shellDir(id string) (*safefs.Dir, error) {
	if !validID(id) {
		return nil, fmt.Errorf("%w %s", ErrNotFound, id)
	}
	return m.dir.Sub(shellFile(id))
}

// lockWait bounds every wait for one of the state dir's locks: nothing
// holds one for long, so a longer wait means something is stuck.
const lockWait = 10 * time.Second

// ErrBusy means a lock stayed taken past lockWait.
var ErrBusy = errors.New("busy")

// withLock runs f holding the state dir's lock. Never call it with the
// lock held: a second flock of the same file waits for the first.
func (m *Manager) withLock(f func() error) error {
	unlock, err := lockIn(m.dir, lockName, "the state dir")
	if err != nil {
		return err
	}
	defer unlock()
	return f()
}

// lockIn takes the exclusive lock of the file rel of d, waiting at most
// lockWait; the holder writes its pid into the file, so that a waiter that
// gives up can say what holds it.
func lockIn(d *safefs.Dir, rel, what string) (func(), error) {
	f, err := d.OpenFile(rel, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", what, err)
	}
	deadline := time.Now().Add(lockWait)
	pause := time.Millisecond
	for {
		ok, err := tryLock(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", what, err)
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			b := make([]byte, 64)
			n, _ := f.ReadAt(b, 0)
			holder := strings.TrimSpace(string(b[:n]))
			f.Close()
			if holder == "" {
				holder = "another process"
			}
			return nil, kind.Errorf(ErrBusy, "%s is locked by %s for more than %s; if that process hangs, stop it and try again", what, escape.Line(holder), lockWait)
		}
		time.Sleep(pause)
		pause = min(2*pause, 50*time.Millisecond)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(fmt.Sprintf("pid %d\n", os.Getpid())), 0)
	}
	return func() { f.Close() }, nil // closing releases the lock
}

// nextID returns a fresh id; ids are never reused. Call under the lock.
func (m *Manager) nextID() (string, error) {
	n := 1
	if b, err := m.dir.ReadFile(nextIDName, 64); err == nil {
		if v, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && v > 0 && v < 1e9-1 {
			n = v
		}
	}
	// Never hand out an id whose folder exists (a lost or copied next-id).
	for {
		if _, err := m.dir.Lstat(shellFile(strconv.Itoa(n))); errors.Is(err, fs.ErrNotExist) {
			break
		}
		n++
	}
	if err := m.dir.WriteAtomic(nextIDName, []byte(strconv.Itoa(n+1)+"\n"), 0o600); err != nil {
		return "", err
	}
	return strconv.Itoa(n), nil
}

// ids lists the shell folders, in no order; other names are not shells.
func (m *Manager) ids() []string {
	names, err := m.dir.Names(shellsName)
	if err != nil {
		return nil
	}
	return slicesFilter(names, validID)
}

func slicesFilter(s []string, keep func(string) bool) []string {
	out := s[:0]
	for _, v := range s {
		if keep(v) {
			out = append(out, v)
		}
	}
	return out
}

// List returns every readable shell record, oldest first, with lost
// supervisors noticed. Unreadable records are named through Warn.
func (m *Manager) List() []*Meta {
	var out []*Meta
	for _, id := range m.ids() {
		meta, err := m.readMeta(id)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				m.Warn(fmt.Sprintf("skipped shell %s: its record %s cannot be read (%v); remove that folder if it is stale", id, m.dir.Name(shellFile(id, metaName)), errors.Unwrap(err)))
			}
			continue
		}
		out = append(out, m.refresh(meta))
	}
	sort.Slice(out, func(i, j int) bool {
		a, _ := strconv.Atoi(out[i].ID)
		b, _ := strconv.Atoi(out[j].ID)
		return a < b
	})
	return out
}

// Find resolves an id or a name. A name picks the newest shell bearing it.
func (m *Manager) Find(ref string) (*Meta, error) {
	if ref == "" {
		return nil, usageErr("give a shell id or name")
	}
	if _, err := strconv.Atoi(ref); err == nil {
		if !validID(ref) {
			return nil, fmt.Errorf("%w %s", ErrNotFound, ref)
		}
		meta, err := m.readMeta(ref)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w %s", ErrNotFound, ref)
		}
		if err != nil {
			return nil, err
		}
		return m.refresh(meta), nil
	}
	var found *Meta
	for _, meta := range m.List() {
		if meta.Name == ref {
			found = meta
		}
	}
	if found == nil {
		return nil, fmt.Errorf("%w named %q", ErrNotFound, escape.Line(ref))
	}
	return found, nil
}

// refresh notices a shell whose supervisor died and records it as lost.
// It takes no lock: only a live supervisor writes its shell's record, so
// once it is dead, marking the record lost cannot race it (and two
// callers marking it at once write the same).
func (m *Manager) refresh(meta *Meta) *Meta {
	if meta.Finished() {
		meta.fill(time.Now())
		return meta
	}
	alive := meta.Supervisor > 0 && processAlive(meta.Supervisor, meta.SupervisorTime)
	if meta.Status == StatusStarting && meta.Supervisor == 0 && time.Since(meta.StartedAt) < answerTimeout {
		alive = true // being started right now
	}
	if alive {
		meta.fill(time.Now())
		return meta
	}
	if cur, err := m.readMeta(meta.ID); err == nil {
		meta = cur
		if !cur.Finished() {
			now := time.Now()
			cur.Status, cur.EndedAt = StatusLost, &now
			_ = m.writeMeta(cur)
			m.lost(cur)
		}
	}
	meta.fill(time.Now())
	return meta
}

func usageErr(format string, a ...any) error { return kind.Errorf(ErrUsage, format, a...) }

func refusedErr(format string, a ...any) error { return kind.Errorf(ErrRefused, format, a...) }

func stateDirErr(format string, a ...any) error { return kind.Errorf(ErrStateDir, format, a...) }
