// Package cache keeps the package managers' and build tools' caches of
// container shells: one set per working directory, in cshell's cache
// folder, bound over the places the tools keep them in the home (~/.npm,
// ~/.cache, ~/go/pkg, ~/.cargo/registry and the rest). Tools work with
// nothing but --allow-host for their registry, their caches persist
// across the shells of one working directory, and no shell writes the
// user's own cache folders, which the user's own commands read later
// without checking them.
//
// Everything beneath a project's folder was written by shells: it is
// reached only beneath the held cache folder (internal/safefs), never
// through a link, and its sizes are counted, never trusted.
//
// A Store and a Project are safe for concurrent use, also by several
// cshell processes: a project in use holds a shared lock that removal
// must take whole.
package cache

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cshell/cshell/internal/safefs"
	"github.com/cshell/cshell/policy"
)

// Known are the caches bound into a shell, each over its place in the
// home: when that place exists, or when one of the tools that keep it
// there is on the shell's PATH (then cshell makes it, empty, as the tool
// would on its first run). The XDG cache (~/.cache) holds pip's, uv's, Go's
// build cache, yarn 1's, pnpm's metadata, node-gyp's, deno's and many more.
var Known = []Kind{
	{Name: "cache", Rel: ".cache"},
	{Name: "npm", Rel: ".npm", Tools: []string{"npm", "npx"}},
	{Name: "go", Rel: "go/pkg", Tools: []string{"go"}}, // the module cache and the checksum database's
	{Name: "cargo-registry", Rel: ".cargo/registry", Tools: []string{"cargo"}},
	{Name: "cargo-git", Rel: ".cargo/git", Tools: []string{"cargo"}},
	{Name: "gradle", Rel: ".gradle", Tools: []string{"gradle"}},
	{Name: "m2", Rel: ".m2/repository", Tools: []string{"mvn"}},
	{Name: "m2-wrapper", Rel: ".m2/wrapper", Tools: []string{"mvn"}},
	{Name: "pnpm", Rel: ".local/share/pnpm", Tools: []string{"pnpm"}},
	{Name: "yarn", Rel: ".yarn", Tools: []string{"yarn"}},
	{Name: "bun", Rel: ".bun/install/cache", Tools: []string{"bun"}},
}

// Kind is one cache: its folder's name in a project, its place relative
// to the home, and the programs that keep it there.
type Kind struct {
	Name  string
	Rel   string
	Tools []string
}

// ErrInUse refuses to remove a project's caches while a shell uses them.
var ErrInUse = errors.New("in use by a running shell")

// ErrNotFound is a working directory with no caches.
var ErrNotFound = errors.New("no caches")

// Root is the cache folder: $CSHELL_CACHE_DIR, else $XDG_CACHE_HOME/cshell,
// else ~/.cache/cshell; "" when there is no home to put it in.
func Root(home string) string {
	if d := os.Getenv("CSHELL_CACHE_DIR"); d != "" {
		return d
	}
	if x := os.Getenv("XDG_CACHE_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "cshell")
	}
	if home == "" || home == "/" {
		return ""
	}
	return filepath.Join(home, ".cache", "cshell")
}

// Store is the cache folder, held by descriptor.
type Store struct {
	dir  *safefs.Dir
	path string
}

// projects is the folder of the per-working-directory caches; trash the
// one where removed ones go before they are deleted.
const (
	projects = "projects"
	trash    = "trash"
)

// Open opens the cache folder at path, making it (mode 0700) when missing:
// a directory of this user's, closed to others, never a link.
func Open(path string) (*Store, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	d, err := safefs.Open(abs)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
			return nil, fmt.Errorf("create the cache folder %s: %w", abs, err)
		}
		if err := os.Mkdir(abs, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("create the cache folder %s: %w", abs, err)
		}
		d, err = safefs.Open(abs)
	}
	if errors.Is(err, safefs.ErrSymlink) {
		return nil, fmt.Errorf("the cache folder %s is a symbolic link; remove it, or choose another with CSHELL_CACHE_DIR", abs)
	}
	if err != nil {
		return nil, fmt.Errorf("open the cache folder: %w", err)
	}
	if info, err := d.Info(); err != nil || !info.IsDir() || runtime.GOOS != "windows" && (int(info.Uid) != os.Geteuid() || info.Mode.Perm()&0o077 != 0) {
		d.Close()
		return nil, fmt.Errorf("the cache folder %s must be a directory of yours closed to others (mode 0700); remove it, or choose another with CSHELL_CACHE_DIR", abs)
	}
	for _, sub := range []string{projects, trash} {
		if err := d.Mkdir(sub, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			d.Close()
			return nil, fmt.Errorf("create %s: %w", d.Name(sub), err)
		}
	}
	return &Store{dir: d, path: abs}, nil
}

// Path is where the cache folder is.
func (s *Store) Path() string { return s.path }

// Close lets go of the folder.
func (s *Store) Close() error { return s.dir.Close() }

// Key names a working directory's caches: a hash of its path.
func Key(workdir string) string {
	h := sha256.Sum256([]byte(filepath.Clean(workdir)))
	return hex.EncodeToString(h[:8])
}

// A project's folder holds the working directory's path, a lock held by
// every shell using it, a file whose time says when one last started, and
// a folder per cache (Kind.Name).
const (
	workdirFile = "workdir"
	lockFile    = "lock"
	usedFile    = "used"
	cachesDir   = "caches"
	maxWorkdir  = 4096
)

// Project is one working directory's caches, in use (locked) until Close.
type Project struct {
	store *Store
	key   string
	lock  *os.File
}

// Use opens (making it when new) the caches of workdir and holds them in
// use until Close: they cannot be removed meanwhile.
func (s *Store) Use(workdir string) (*Project, error) {
	key := Key(workdir)
	rel := projects + "/" + key
	for attempt := 0; ; attempt++ {
		if err := s.dir.Mkdir(rel, 0o700); err == nil {
			if err := s.dir.WriteAtomic(rel+"/"+workdirFile, []byte(workdir), 0o600); err != nil {
				return nil, err
			}
		} else if !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		lock, err := s.dir.OpenFile(rel+"/"+lockFile, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, err
		}
		if err := lockShared(lock); err != nil {
			lock.Close()
			return nil, fmt.Errorf("lock %s: %w", s.dir.Name(rel), err)
		}
		// A removal may have moved the folder away while this waited for
		// the lock: use it only if it is still the project's.
		if same(lock, s.dir, rel+"/"+lockFile) {
			p := &Project{store: s, key: key, lock: lock}
			now := time.Now()
			if f, err := s.dir.OpenFile(rel+"/"+usedFile, os.O_WRONLY|os.O_CREATE, 0o600); err == nil {
				_ = os.Chtimes(f.Name(), now, now) // f.Name is the path: reached again, but only this user writes here
				f.Close()
			}
			return p, nil
		}
		lock.Close()
		if attempt == 3 {
			return nil, fmt.Errorf("the caches of %s keep being removed while a shell starts; try again", workdir)
		}
	}
}

// same reports whether f is the file rel names beneath d now.
func same(f *os.File, d *safefs.Dir, rel string) bool {
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	info, err := d.Lstat(rel)
	return err == nil && sameFile(fi, info)
}

// Key names the project.
func (p *Project) Key() string { return p.key }

// Root is the cache folder the project is in.
func (p *Project) Root() string { return p.store.path }

// LockFile is the project's lock, for a process that is to hold the
// caches in use after this one (a background shell's supervisor).
func (p *Project) LockFile() *os.File { return p.lock }

// Close lets the caches go.
func (p *Project) Close() error { return p.lock.Close() }

// Binds are the caches of this project bound into a shell whose home is
// home and whose PATH (in env) finds its tools: for each Kind whose place
// exists, or whose tool is found (its place is then made, empty, beneath
// the home, without following a link), the bind of the project's folder
// over it. The places are as they are spelt: policy resolves them.
func (p *Project) Binds(home string, env []string) []policy.CacheBind {
	if home == "" || home == "/" {
		return nil
	}
	h, err := safefs.Open(home)
	if err != nil {
		return nil
	}
	defer h.Close()
	path := policy.EnvValue(env, "PATH")
	var binds []policy.CacheBind
	for _, k := range Known {
		info, err := h.Lstat(k.Rel)
		exists := err == nil
		if !exists && !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if exists && !info.IsDir() {
			continue // a link or a file: policy would refuse it anyway
		}
		if !exists {
			if k.Tools != nil && !slices.ContainsFunc(k.Tools, func(t string) bool { return onPath(t, path) }) {
				continue
			}
			if mkdirBeneath(h, k.Rel) != nil {
				continue // a home this user cannot write: the tool fails as before
			}
		}
		src := projects + "/" + p.key + "/" + cachesDir + "/" + k.Name
		if err := mkdirBeneath(p.store.dir, src); err != nil {
			continue
		}
		binds = append(binds, policy.CacheBind{Path: filepath.Join(home, k.Rel), Source: p.store.dir.Name(src)})
	}
	return binds
}

// mkdirBeneath makes rel and its missing parents beneath d, none through
// a link.
func mkdirBeneath(d *safefs.Dir, rel string) error {
	parts := strings.Split(rel, "/")
	for i := range parts {
		err := d.Mkdir(strings.Join(parts[:i+1], "/"), 0o700)
		if err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	info, err := d.Lstat(rel)
	if err == nil && !info.IsDir() {
		return fmt.Errorf("%s is not a directory", d.Name(rel))
	}
	return err
}

// onPath reports whether an executable name is in one of path's folders.
func onPath(name, path string) bool {
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			continue
		}
		if st, err := os.Stat(filepath.Join(dir, name)); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return true
		}
	}
	return false
}

// Entry is one working directory's caches as listed.
type Entry struct {
	Workdir  string    `json:"workdir"`
	Key      string    `json:"key"`
	Path     string    `json:"path"`
	Bytes    int64     `json:"bytes"`
	Partial  bool      `json:"partial,omitempty"` // the count stopped at its bound: at least Bytes
	LastUsed time.Time `json:"last_used"`
	InUse    bool      `json:"in_use"`
	Caches   []Part    `json:"caches"`
}

// Part is one cache of a project.
type Part struct {
	Name  string `json:"name"`
	Bytes int64  `json:"bytes"`
}

// List describes every project's caches, the most recently used first,
// with their sizes when sizes is set (counted on disk: a sparse file
// counts what it takes, never what it claims).
func (s *Store) List(sizes bool) ([]Entry, error) {
	names, err := s.dir.Names(projects)
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, key := range names {
		rel := projects + "/" + key
		if info, err := s.dir.Lstat(rel); err != nil || !info.IsDir() {
			continue
		}
		e := Entry{Key: key, Path: s.dir.Name(rel)}
		if b, err := s.dir.ReadFile(rel+"/"+workdirFile, maxWorkdir); err == nil {
			e.Workdir = string(b)
		}
		if f, err := s.dir.OpenFile(rel+"/"+usedFile, os.O_RDONLY, 0); err == nil {
			if st, err := f.Stat(); err == nil {
				e.LastUsed = st.ModTime()
			}
			f.Close()
		}
		e.InUse = s.inUse(rel)
		if sizes {
			budget := maxCounted
			for _, k := range Known {
				n, partial := s.size(rel+"/"+cachesDir+"/"+k.Name, &budget)
				if n > 0 || partial {
					e.Caches = append(e.Caches, Part{Name: k.Name, Bytes: n})
				}
				e.Bytes += n
				e.Partial = e.Partial || partial
			}
		}
		out = append(out, e)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].LastUsed.After(out[j].LastUsed) })
	return out, nil
}

// maxCounted bounds the files counted in one project's caches.
const maxCounted = 2_000_000

// inUse reports whether a shell holds the project's lock.
func (s *Store) inUse(rel string) bool {
	f, err := s.dir.OpenFile(rel+"/"+lockFile, os.O_RDWR, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if err := lockExclusive(f); err != nil {
		return true
	}
	return false
}

// Find returns the key of the caches of dir: a working directory (as it
// was when its shells ran) or a key itself.
func (s *Store) Find(dir string) (string, error) {
	entries, err := s.List(false)
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		if e.Key == dir || e.Workdir == dir {
			return e.Key, nil
		}
	}
	if abs, err := filepath.Abs(dir); err == nil {
		for _, e := range entries {
			if e.Workdir == abs {
				return e.Key, nil
			}
		}
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			for _, e := range entries {
				if e.Workdir == real {
					return e.Key, nil
				}
			}
		}
	}
	return "", fmt.Errorf("%w for %s", ErrNotFound, dir)
}

// Remove deletes a project's caches, unless a shell uses them: the
// folder is moved aside under the exclusive lock (a shell that starts
// meanwhile makes a new one), then deleted, never following a link.
func (s *Store) Remove(key string) error {
	rel := projects + "/" + key
	if strings.ContainsAny(key, "/.") || key == "" {
		return fmt.Errorf("%w for %s", ErrNotFound, key)
	}
	f, err := s.dir.OpenFile(rel+"/"+lockFile, os.O_RDWR|os.O_CREATE, 0o600)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w for %s", ErrNotFound, key)
	}
	if err != nil {
		return err
	}
	if err := lockExclusive(f); err != nil {
		f.Close()
		return ErrInUse
	}
	gone := trash + "/" + key + "-" + fmt.Sprint(time.Now().UnixNano())
	err = s.dir.Rename(rel, gone)
	f.Close()
	if err != nil {
		return err
	}
	return s.dir.RemoveAll(gone)
}

// Prune removes the caches of the least recently used projects that no
// shell uses until the rest take at most keep bytes (keep 0: remove every
// one not in use). It returns what it removed.
func (s *Store) Prune(keep int64) ([]Entry, error) {
	entries, err := s.List(true)
	if err != nil {
		return nil, err
	}
	_ = s.dir.RemoveAll(trash) // what an interrupted removal left
	_ = s.dir.Mkdir(trash, 0o700)
	var total int64
	for _, e := range entries {
		total += e.Bytes
	}
	var removed []Entry
	for i := len(entries) - 1; i >= 0 && (keep == 0 || total > keep); i-- { // oldest first
		e := entries[i]
		if e.InUse {
			continue
		}
		if err := s.Remove(e.Key); err != nil {
			if errors.Is(err, ErrInUse) {
				continue
			}
			return removed, err
		}
		total -= e.Bytes
		removed = append(removed, e)
	}
	return removed, nil
}

// pruneEvery is how often a shell's end looks at the caches' total.
const pruneEvery = 10 * time.Minute

// prunedFile's time says when the total was last looked at.
const prunedFile = "pruned"

// PruneDue reports whether MaybePrune would look now (its last look is
// pruneEvery old, or there was none): one stat, for a caller that would
// rather hand the walk to another process.
func (s *Store) PruneDue() bool {
	f, err := s.dir.OpenFile(prunedFile, os.O_RDONLY, 0)
	if err != nil {
		return true
	}
	defer f.Close()
	st, err := f.Stat()
	return err != nil || st.Size() == 0 || time.Since(st.ModTime()) >= pruneEvery
}

// MaybePrune keeps the caches within max bytes, looking at most once every
// ten minutes (a shell's end calls it; counting costs a walk of them all).
func (s *Store) MaybePrune(max int64) {
	if max <= 0 {
		return
	}
	f, err := s.dir.OpenFile(prunedFile, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > 0 && time.Since(st.ModTime()) < pruneEvery {
		return
	}
	if lockExclusive(f) != nil {
		return // another cshell is at it
	}
	_, _ = f.WriteAt([]byte("1"), 0)
	now := time.Now()
	_ = os.Chtimes(f.Name(), now, now)
	_, _ = s.Prune(max)
}
