package shells

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// ErrNotFound means no shell has that id or name.
var ErrNotFound = errors.New("no such shell")

// ErrRefused means the start was refused: shells disabled, limit reached.
var ErrRefused = errors.New("refused")

// StateDir picks the state directory: the flag, else $CSHELL_STATE_DIR,
// else $XDG_STATE_HOME/cshell, else ~/.local/state/cshell.
func StateDir(flag, home string) string {
	switch {
	case flag != "":
		return flag
	case os.Getenv("CSHELL_STATE_DIR") != "":
		return os.Getenv("CSHELL_STATE_DIR")
	case os.Getenv("XDG_STATE_HOME") != "":
		return filepath.Join(os.Getenv("XDG_STATE_HOME"), "cshell")
	}
	return filepath.Join(home, ".local", "state", "cshell")
}

// Manager owns a state directory: the shells recorded there, their ids,
// logs and notices. Its methods are safe for concurrent use, also by
// several cshell processes: changes that must not race take a file lock.
type Manager struct {
	dir string
	log *slog.Logger
	// Warn receives one sentence per shell record that cannot be read.
	Warn func(string)
}

// Open returns the manager of dir, creating it (mode 0700) if needed.
func Open(dir string, log *slog.Logger) (*Manager, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(abs, "shells"), 0o700); err != nil {
		return nil, fmt.Errorf("create the state dir: %w", err)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Manager{dir: abs, log: log, Warn: func(string) {}}, nil
}

// Dir is the state directory.
func (m *Manager) Dir() string { return m.dir }

func (m *Manager) shellDir(id string) string { return filepath.Join(m.dir, "shells", id) }
func (m *Manager) metaPath(id string) string { return filepath.Join(m.shellDir(id), "meta.json") }

// withLock runs f holding the state dir's lock.
func (m *Manager) withLock(f func() error) error {
	unlock, err := lockFile(filepath.Join(m.dir, "lock"))
	if err != nil {
		return fmt.Errorf("lock the state dir: %w", err)
	}
	defer unlock()
	return f()
}

// nextID returns a fresh id; ids are never reused. Call under the lock.
func (m *Manager) nextID() (string, error) {
	path := filepath.Join(m.dir, "next-id")
	n := 1
	if b, err := os.ReadFile(path); err == nil {
		if v, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && v > 0 {
			n = v
		}
	}
	// Never hand out an id whose folder exists (a lost or copied next-id).
	for {
		if _, err := os.Lstat(m.shellDir(strconv.Itoa(n))); errors.Is(err, fs.ErrNotExist) {
			break
		}
		n++
	}
	if err := writeAtomic(path, []byte(strconv.Itoa(n+1)+"\n")); err != nil {
		return "", err
	}
	return strconv.Itoa(n), nil
}

// List returns every readable shell record, oldest first, with lost
// supervisors noticed. Unreadable records are named through Warn.
func (m *Manager) List() []*Meta {
	entries, err := os.ReadDir(filepath.Join(m.dir, "shells"))
	if err != nil {
		return nil
	}
	var out []*Meta
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		meta, err := readMeta(m.metaPath(e.Name()))
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				m.Warn(fmt.Sprintf("skipped shell %s: its record %s cannot be read; remove that folder if it is stale", e.Name(), m.metaPath(e.Name())))
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
		return nil, fmt.Errorf("%w: give a shell id or name", ErrUsage)
	}
	if _, err := strconv.Atoi(ref); err == nil {
		meta, err := readMeta(m.metaPath(ref))
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w %s; cshell ps --all lists the shells", ErrNotFound, ref)
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
		return nil, fmt.Errorf("%w named %q; cshell ps --all lists the shells", ErrNotFound, ref)
	}
	return found, nil
}

// refresh notices a shell whose supervisor died and records it as lost.
func (m *Manager) refresh(meta *Meta) *Meta {
	if meta.Finished() {
		meta.fill(time.Now())
		return meta
	}
	alive := meta.Supervisor > 0 && processAlive(meta.Supervisor, meta.SupervisorTime)
	if meta.Status == StatusStarting && meta.Supervisor == 0 && time.Since(meta.StartedAt) < 10*time.Second {
		alive = true // being started right now
	}
	if alive {
		meta.fill(time.Now())
		return meta
	}
	_ = m.withLock(func() error {
		cur, err := readMeta(m.metaPath(meta.ID))
		if err != nil || cur.Finished() {
			if cur != nil {
				meta = cur
			}
			return err
		}
		now := time.Now()
		cur.Status, cur.EndedAt = StatusLost, &now
		meta = cur
		return writeMeta(m.metaPath(cur.ID), cur)
	})
	cleanupLost(meta)
	meta.fill(time.Now())
	return meta
}
