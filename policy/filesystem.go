package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/cshell/cshell/internal/kind"
)

// DefaultHidden are the secrets hidden in every shell, relative to each
// home directory ($HOME, and the passwd database's when it differs). A
// trailing slash marks a directory. One that does not exist is made empty
// at the start (see Filesystem.Missing), unless its parent is missing too,
// so that a secret written there while the shell runs stays hidden.
var DefaultHidden = []string{
	".ssh/", ".gnupg/", ".aws/", ".azure/", ".config/gcloud/", ".kube/", ".docker/",
	".netrc", ".git-credentials", ".config/gh/hosts.yml", ".cargo/credentials.toml",
	".vault-token", ".pgpass",
	".1password/", // 1Password's SSH agent socket: a shell would sign with the user's keys
}

// SystemHidden are the host's own secrets, hidden in every shell whoever
// started it: a shell started by root is the host's uid 0 without
// capabilities, and owner permissions would let it read root-only files.
// Patterns are shell globs, matched at the start; none is ever made.
var SystemHidden = []string{
	"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-",
	"/etc/ssh/ssh_host_*_key", "/etc/ssl/private", "/etc/sudoers", "/etc/sudoers.d",
}

// hiddenIfPresent are secrets hidden when they exist but never made:
// cargo reads the old credentials file in preference to the new one, so
// an empty one made here would hide the user's real credentials from cargo
// itself.
//
// Bitwarden's SSH agent socket lies in the home itself: hidden when it is
// there at the start (a socket made later is a new file the shell sees;
// a stand-in made now would be taken for a stale socket and removed).
var hiddenIfPresent = []string{".cargo/credentials", ".bitwarden-ssh-agent.sock"}

// ErrPath marks a path given by the user that cannot be used (missing,
// relative ~user form…); callers treat it as bad input.
var ErrPath = errors.New("bad path")

// FilesystemRequest is what the user asked for, before any path is resolved.
type FilesystemRequest struct {
	Home       string // the invoking user's home directory ($HOME)
	PasswdHome string // the home the passwd database names, when it differs
	Cwd        string // where cshell was started
	Workdir    string // -w; empty means Cwd
	// Start is where the command starts: the working directory (empty)
	// or a directory inside it, absolute or relative to it.
	Start  string
	RW     []string
	RO     []string
	Hide   []string
	Config *Config // may be nil
	// Private are cshell's own directories (its state dirs): hidden in
	// every shell, since they hold the other shells' logs and the sockets
	// that stop them. The working directory and writable paths may not be
	// inside one.
	Private []string
	// Protect are cshell's own paths a shell may read but never change
	// (its configuration), even inside a writable path.
	Protect []string
	// System are the host's secrets to hide; nil: SystemHidden.
	System []string
	// Sockets are the caller's agent sockets (SSH_AUTH_SOCK): hidden when
	// they exist where the shell would see them.
	Sockets []string
	// Show are files the shell is to read where it would not see them
	// otherwise (its private /tmp and /run): the certificates its TLS
	// clients are told to trust (TrustFiles). Missing ones are left out;
	// one through a link a shell could have planted, or under a hidden
	// path, is left out with a warning.
	Show []string
}

// privateDirs are the host's directories a container shell has its own of.
var privateDirs = []string{"/tmp", "/run"}

// Filesystem is the resolved filesystem view of one shell: absolute,
// cleaned paths with symlinks resolved. Everything not listed is the host's
// filesystem, read-only.
type Filesystem struct {
	Workdir string   // writable
	Start   string   // where the command starts: Workdir or a directory inside it
	Write   []string // more writable paths
	Read    []string // read-only paths (inside writable ones, or in private /tmp)
	Hide    []string // unreadable; existing paths
	// Caches are writable folders seen in place of the home's cache
	// folders (resolved places; hidden paths beneath them are dropped:
	// the host's files there are not seen anyway).
	Caches []CacheBind
	// Missing are hidden paths that do not exist yet: the sandbox makes
	// each (empty, without following links) before it hides it.
	Missing []MissingPath

	// Warnings name the project's allowWrite entries that were ignored
	// because they lead, through a symlink, out of the global ones.
	Warnings []string
}

// Writable returns the writable path (the working directory or a Write
// entry) that p is or lies beneath, or "" when a shell may not write p.
func (f Filesystem) Writable(p string) string {
	roots := append([]string{f.Workdir}, f.Write...)
	for _, c := range f.Caches {
		roots = append(roots, c.Source)
	}
	for _, w := range roots {
		if w != "" && pathUnderAny(p, []string{w}) {
			return w
		}
	}
	return ""
}

// CacheBind is one cache: Source, a folder the shell may write, is seen
// at Path, the place in the home where a tool keeps its cache.
type CacheBind struct {
	Path   string `json:"path"`
	Source string `json:"source"`
}

// MissingPath is a hidden path to make before hiding it.
type MissingPath struct {
	Path string `json:"path"`
	Dir  bool   `json:"dir"` // a directory, else an empty file
}

// ErrLinkedPath marks a -w, --rw or --ro path that goes through a symbolic
// link a shell could have planted: refused rather than followed.
var ErrLinkedPath = errors.New("path through a symbolic link")

// NewFilesystem resolves a request. Paths named on the command line must
// exist; configured ones that do not exist are skipped, since a global file
// lists paths of many machines.
func NewFilesystem(r FilesystemRequest) (Filesystem, error) {
	var fsys Filesystem
	wd := r.Workdir
	if wd == "" {
		wd = r.Cwd
	}
	wd, err := resolveOwn(wd, r.Home, r.Cwd, "working directory", "-w")
	if err != nil {
		return fsys, err
	}
	if st, err := os.Stat(wd); err != nil || !st.IsDir() {
		return fsys, pathErr("working directory %s is not a directory", wd)
	}
	fsys.Workdir = wd
	if fsys.Start, err = StartDir(wd, r.Start); err != nil {
		return fsys, err
	}

	for _, p := range r.RW {
		rp, err := resolveOwn(p, r.Home, r.Cwd, "--rw", "--rw")
		if err != nil {
			return fsys, err
		}
		fsys.Write = appendNew(fsys.Write, rp)
	}
	for _, p := range r.RO {
		rp, err := resolveOwn(p, r.Home, r.Cwd, "--ro", "--ro")
		if err != nil {
			return fsys, err
		}
		fsys.Read = appendNew(fsys.Read, rp)
	}
	for _, p := range r.Protect {
		if rp, err := resolveMaybe(p, r.Home, r.Cwd, "configuration"); err == nil && rp != "" {
			fsys.Read = appendNew(fsys.Read, rp)
		}
	}
	var cfgWrite, cfgHide, roots []string
	if r.Config != nil {
		cfgWrite, cfgHide = r.Config.Filesystem.AllowWrite, r.Config.Filesystem.DenyRead
		for _, p := range r.Config.writeRoots {
			if rp, err := resolveMaybe(p, r.Home, r.Cwd, "filesystem.allowWrite"); err == nil && rp != "" {
				roots = append(roots, rp)
			}
		}
	}
	for _, p := range cfgWrite {
		rp, err := resolveMaybe(p, r.Home, r.Cwd, "filesystem.allowWrite")
		if err != nil {
			return fsys, err
		}
		// A project entry may name a symlink that leads out of the global
		// roots: judge where it leads, not how it is spelt.
		switch {
		case rp == "":
		case r.Config.writeRoots == nil || pathUnderAny(rp, roots):
			fsys.Write = appendNew(fsys.Write, rp)
		default:
			fsys.Warnings = append(fsys.Warnings, fmt.Sprintf("%s: ignored filesystem.allowWrite entry %q: it leads to %s, which is not writable globally; a project file may only tighten the global configuration", ProjectFile, p, rp))
		}
	}
	hide := func(p, what string, make bool) error {
		rp, missing, err := resolveHidden(p, r.Home, r.Cwd, what)
		switch {
		case err != nil:
			return err
		case rp != "":
			fsys.Hide = appendNew(fsys.Hide, rp)
		case missing != nil && make && !slices.Contains(fsys.Missing, *missing):
			fsys.Missing = append(fsys.Missing, *missing)
		}
		return nil
	}
	for _, p := range r.Hide {
		if err := hide(p, "--hide", true); err != nil {
			return fsys, err
		}
	}
	for _, p := range cfgHide {
		if err := hide(p, "filesystem.denyRead", true); err != nil {
			return fsys, err
		}
	}
	for _, home := range uniqueHomes(r.Home, r.PasswdHome) {
		if !searchable(home) {
			// Nothing below it is reachable by this user, so neither by
			// its shells (as in a user namespace whose root is someone
			// else, where the passwd home is the real root's /root).
			continue
		}
		for _, h := range DefaultHidden {
			if err := hide(filepath.Join(home, h)+suffixOf(h), "the default hidden list", true); err != nil {
				return fsys, err
			}
		}
		for _, h := range hiddenIfPresent {
			if err := hide(filepath.Join(home, h), "the default hidden list", false); err != nil {
				return fsys, err
			}
		}
	}
	system := r.System
	if system == nil {
		system = SystemHidden
	}
	for _, pattern := range system {
		matches, _ := filepath.Glob(pattern)
		for _, m := range matches {
			if err := hide(m, "the system's hidden list", false); err != nil {
				return fsys, err
			}
		}
	}
	for _, p := range r.Private {
		rp, err := resolveMaybe(p, r.Home, r.Cwd, "state directory")
		if err != nil {
			return fsys, err
		}
		if rp == "" {
			continue
		}
		for _, w := range append([]string{fsys.Workdir}, fsys.Write...) {
			if pathUnderAny(w, []string{rp}) {
				return fsys, pathErr("%s is inside cshell's state directory %s, which shells may not see; work in another directory, or choose another state directory with --state-dir", w, rp)
			}
		}
		fsys.Read = slices.DeleteFunc(fsys.Read, func(r string) bool { return pathUnderAny(r, []string{rp}) })
		fsys.Hide = appendNew(fsys.Hide, rp)
	}
	for _, p := range r.Sockets {
		if rp, err := resolveMaybe(p, r.Home, r.Cwd, "agent socket"); err == nil && rp != "" && !pathUnderAny(rp, privateDirs) {
			fsys.Hide = appendNew(fsys.Hide, rp)
		}
	}
	for _, p := range r.Show {
		err := checkLinks(p, p, "trusted certificates")
		rp := ""
		if err == nil {
			rp, err = resolveMaybe(p, r.Home, r.Cwd, "trusted certificates")
		}
		switch {
		case err != nil:
			fsys.Warnings = append(fsys.Warnings, fmt.Sprintf("%v; the shell does not see it", err))
		case rp == "" || !pathUnderAny(rp, privateDirs):
			// Missing (the tool will say), or on the host's filesystem,
			// which the shell sees.
		case pathUnderAny(rp, fsys.Hide):
			fsys.Warnings = append(fsys.Warnings, fmt.Sprintf("%s is hidden, so the shell's TLS clients cannot read it", rp))
		default:
			fsys.Read = appendNew(fsys.Read, rp)
		}
	}
	// A hidden path inside another is hidden with it (and no mount point
	// may be made inside a stand-in); the working directory may not be.
	under := func(p string, except string) bool {
		for _, h := range fsys.Hide {
			if h != except && pathUnderAny(p, []string{h}) {
				return true
			}
		}
		return false
	}
	fsys.Hide = slices.DeleteFunc(fsys.Hide, func(h string) bool { return under(h, h) })
	fsys.Missing = slices.DeleteFunc(fsys.Missing, func(m MissingPath) bool { return under(m.Path, "") })
	if under(fsys.Workdir, "") {
		return fsys, pathErr("working directory %s is hidden from shells (it lies in a hidden path); work in another directory", fsys.Workdir)
	}
	// A path both hidden and writable stays hidden; one both read-only and
	// writable stays read-only.
	fsys.Write = slices.DeleteFunc(fsys.Write, func(p string) bool {
		return slices.Contains(fsys.Hide, p) || slices.Contains(fsys.Read, p)
	})
	fsys.Read = slices.DeleteFunc(fsys.Read, func(p string) bool { return slices.Contains(fsys.Hide, p) })
	return fsys, nil
}

// suffixOf keeps a directory entry's trailing slash through Join.
func suffixOf(p string) string {
	if strings.HasSuffix(p, "/") {
		return "/"
	}
	return ""
}

// uniqueHomes lists the home directories to hide secrets in.
func uniqueHomes(homes ...string) []string {
	var out []string
	for _, h := range homes {
		if h == "" {
			continue
		}
		if rp, err := filepath.EvalSymlinks(h); err == nil {
			h = rp
		}
		if filepath.Clean(h) != "/" {
			out = appendNew(out, filepath.Clean(h))
		}
	}
	return out
}

// resolveHidden resolves a hidden path. One that does not exist comes
// back as the path to make, when its parent directory exists: a trailing
// slash says it is a directory.
func resolveHidden(p, home, cwd, what string) (string, *MissingPath, error) {
	rp, err := resolveMaybe(p, home, cwd, what)
	if err != nil || rp != "" {
		return rp, nil, err
	}
	ap, err := ExpandPath(p, home, cwd)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", what, err)
	}
	parent, err := filepath.EvalSymlinks(filepath.Dir(ap))
	if err != nil {
		return "", nil, nil // the parent is missing too: nothing to make it in
	}
	if st, err := os.Stat(parent); err != nil || !st.IsDir() || parent == "/" {
		return "", nil, nil
	}
	if _, err := os.Lstat(filepath.Join(parent, filepath.Base(ap))); err == nil {
		return "", nil, nil // a dangling link: what it names is not made
	}
	return "", &MissingPath{Path: filepath.Join(parent, filepath.Base(ap)), Dir: strings.HasSuffix(p, "/")}, nil
}

// resolveOwn resolves a path the user named for a shell to work in (-w,
// --rw, --ro): it must exist, and no symbolic link on the way may be one
// that a shell could have planted (see plantable): such a path is refused
// with ErrLinkedPath, not followed.
func resolveOwn(p, home, cwd, what, flag string) (string, error) {
	ap, err := ExpandPath(p, home, cwd)
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	if err := checkLinks(p, ap, flag); err != nil {
		return "", err
	}
	return resolve(p, home, cwd, what)
}

// checkLinks walks ap from the root and refuses the first symbolic link
// on the way that a shell could have planted.
func checkLinks(asGiven, ap, flag string) error {
	cur := "/"
	for _, part := range strings.Split(strings.TrimPrefix(ap, "/"), "/") {
		if part == "" {
			continue
		}
		next := filepath.Join(cur, part)
		st, err := os.Lstat(next)
		if err != nil {
			return nil // missing: resolve says so
		}
		if st.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		target, _ := os.Readlink(next)
		if cur != "/" && plantable(next, st) {
			return linkedErr("%s %s: %s is a symbolic link (to %s) in a place a shell could write, so it may have been planted; give the path it leads to if you trust it", flag, asGiven, next, target)
		}
		if cur, err = filepath.EvalSymlinks(next); err != nil {
			return nil
		}
	}
	return nil
}

// ExpandPath expands a leading ~ or ~/ to home and makes p absolute against
// cwd. The ~user form is refused: cshell runs as one user.
func ExpandPath(p, home, cwd string) (string, error) {
	if p == "" {
		return "", pathErr("empty path")
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home == "" {
			return "", pathErr("%s: $HOME is not set", p)
		}
		p = filepath.Join(home, strings.TrimPrefix(p, "~"))
	} else if strings.HasPrefix(p, "~") {
		return "", pathErr("%s: only ~ and ~/ are expanded; write the full path", p)
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	return filepath.Clean(p), nil
}

// resolve expands p and resolves its symlinks; p must exist.
func resolve(p, home, cwd, what string) (string, error) {
	rp, err := resolveMaybe(p, home, cwd, what)
	if err != nil {
		return "", err
	}
	if rp == "" {
		return "", pathErr("%s %s does not exist; create it first or fix the path", what, p)
	}
	return rp, nil
}

// resolveMaybe is resolve, but a missing path gives "" and no error.
func resolveMaybe(p, home, cwd, what string) (string, error) {
	ap, err := ExpandPath(p, home, cwd)
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	rp, err := filepath.EvalSymlinks(ap)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return "", nil // a parent that is a file: the path cannot exist either
	}
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return "", pathErr("%s %s: %v", what, p, err)
	}
	if rp == "/" {
		return "", pathErr("%s /: the root directory cannot be a sandbox path", what)
	}
	return rp, nil
}

func appendNew(list []string, p string) []string {
	if slices.Contains(list, p) {
		return list
	}
	return append(list, p)
}

// StartDir resolves where the command starts, inside the working
// directory wd (resolved, as Filesystem.Workdir is); "" is wd itself. The way there is checked without following a symbolic
// link: a shell can write everything below wd.
func StartDir(wd, start string) (string, error) {
	if start == "" {
		return wd, nil
	}
	p := start
	if !filepath.IsAbs(p) {
		p = filepath.Join(wd, p)
	}
	p = filepath.Clean(p)
	rel, err := filepath.Rel(wd, p)
	if err != nil || !filepath.IsLocal(rel) && rel != "." {
		return "", pathErr("%s is outside the working directory %s: give a directory inside it", start, wd)
	}
	cur := wd
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		if part == "." {
			continue
		}
		cur = filepath.Join(cur, part)
		st, err := os.Lstat(cur)
		switch {
		case err != nil:
			return "", pathErr("%s: %s does not exist", start, cur)
		case st.Mode()&fs.ModeSymlink != 0:
			return "", linkedErr("%s: %s is a symbolic link inside the working directory, which a shell could have planted; give the directory it leads to", start, cur)
		case !st.IsDir():
			return "", pathErr("%s: %s is not a directory", start, cur)
		}
	}
	return p, nil
}

func pathErr(format string, a ...any) error {
	return kind.Errorf(ErrPath, format, a...)
}

func linkedErr(format string, a ...any) error {
	return kind.Errorf(ErrLinkedPath, format, a...)
}

// AddCaches binds caches (package cache) over their places in the home:
// each Path absolute as spelt, its Source the folder that stands for it.
// A place reached through a link a shell could have planted gets none
// (with a warning), nor does one that is hidden, missing, not a
// directory, or the user's own --rw or --ro path; hidden paths beneath a
// place are dropped, since the shell sees the cache's folder there.
func (f *Filesystem) AddCaches(caches []CacheBind) {
	for _, c := range caches {
		err := checkLinks(c.Path, filepath.Clean(c.Path), "caches:")
		rp := ""
		if err == nil {
			rp, err = resolveMaybe(c.Path, "", "/", "cache")
		}
		switch {
		case err != nil:
			f.Warnings = append(f.Warnings, fmt.Sprintf("%v; the shell gets no cache there", err))
			continue
		case rp == "":
			continue
		case pathUnderAny(rp, f.Hide) || rp == f.Workdir || slices.Contains(f.Write, rp) || slices.Contains(f.Read, rp):
			continue // hidden, or the user's own choice for that very path
		}
		if st, err := os.Stat(rp); err != nil || !st.IsDir() {
			continue
		}
		f.Caches = append(f.Caches, CacheBind{Path: rp, Source: c.Source})
	}
	// What lies beneath a cache's place is not the host's to hide: the
	// shell sees the cache's own folder there.
	shadowed := func(p string) bool {
		return slices.ContainsFunc(f.Caches, func(c CacheBind) bool { return p != c.Path && pathUnderAny(p, []string{c.Path}) })
	}
	f.Hide = slices.DeleteFunc(f.Hide, shadowed)
	f.Missing = slices.DeleteFunc(f.Missing, func(m MissingPath) bool { return shadowed(m.Path) })
}
