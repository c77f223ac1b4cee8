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
)

// DefaultHidden are the secrets hidden in every shell, relative to $HOME.
var DefaultHidden = []string{
	".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".kube", ".docker",
	".netrc", ".git-credentials",
}

// ErrPath marks a path given by the user that cannot be used (missing,
// relative ~user form…); callers treat it as bad input.
var ErrPath = errors.New("bad path")

// FilesystemRequest is what the user asked for, before any path is resolved.
type FilesystemRequest struct {
	Home    string // the invoking user's home directory
	Cwd     string // where cshell was started
	Workdir string // -w; empty means Cwd
	RW      []string
	RO      []string
	Hide    []string
	Config  *Config // may be nil
	// Private are cshell's own directories (its state dir): hidden in
	// every shell, since they hold the other shells' logs and the sockets
	// that stop them. The working directory and writable paths may not be
	// inside one.
	Private []string
}

// Filesystem is the resolved filesystem view of one shell: absolute,
// cleaned paths with symlinks resolved. Everything not listed is the host's
// filesystem, read-only.
type Filesystem struct {
	Workdir string   // writable; the command starts here
	Write   []string // more writable paths
	Read    []string // read-only paths (inside writable ones, or in private /tmp)
	Hide    []string // unreadable; existing paths only

	// Warnings name the project's allowWrite entries that were ignored
	// because they lead, through a symlink, out of the global ones.
	Warnings []string
}

// NewFilesystem resolves a request. Paths named on the command line must
// exist; configured ones that do not exist are skipped, since a global file
// lists paths of many machines.
func NewFilesystem(r FilesystemRequest) (Filesystem, error) {
	var fsys Filesystem
	wd := r.Workdir
	if wd == "" {
		wd = r.Cwd
	}
	wd, err := resolve(wd, r.Home, r.Cwd, "working directory")
	if err != nil {
		return fsys, err
	}
	if st, err := os.Stat(wd); err != nil || !st.IsDir() {
		return fsys, fmt.Errorf("%w: working directory %s is not a directory", ErrPath, wd)
	}
	fsys.Workdir = wd

	for _, p := range r.RW {
		rp, err := resolve(p, r.Home, r.Cwd, "--rw")
		if err != nil {
			return fsys, err
		}
		fsys.Write = appendNew(fsys.Write, rp)
	}
	for _, p := range r.RO {
		rp, err := resolve(p, r.Home, r.Cwd, "--ro")
		if err != nil {
			return fsys, err
		}
		fsys.Read = appendNew(fsys.Read, rp)
	}
	for _, p := range r.Hide {
		rp, err := resolveMaybe(p, r.Home, r.Cwd, "--hide")
		if err != nil {
			return fsys, err
		}
		if rp != "" {
			fsys.Hide = appendNew(fsys.Hide, rp)
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
	hidden := slices.Clone(cfgHide)
	if r.Home != "" {
		for _, h := range DefaultHidden {
			hidden = append(hidden, filepath.Join(r.Home, h))
		}
	}
	for _, p := range hidden {
		rp, err := resolveMaybe(p, r.Home, r.Cwd, "filesystem.denyRead")
		if err != nil {
			return fsys, err
		}
		if rp != "" {
			fsys.Hide = appendNew(fsys.Hide, rp)
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
				return fsys, fmt.Errorf("%w: %s is inside cshell's state directory %s, which shells may not see; work in another directory, or choose another state directory with --state-dir", ErrPath, w, rp)
			}
		}
		fsys.Read = slices.DeleteFunc(fsys.Read, func(r string) bool { return pathUnderAny(r, []string{rp}) })
		fsys.Hide = appendNew(fsys.Hide, rp)
	}
	// A path both hidden and writable stays hidden; one both read-only and
	// writable stays read-only.
	fsys.Write = slices.DeleteFunc(fsys.Write, func(p string) bool {
		return slices.Contains(fsys.Hide, p) || slices.Contains(fsys.Read, p)
	})
	fsys.Read = slices.DeleteFunc(fsys.Read, func(p string) bool { return slices.Contains(fsys.Hide, p) })
	return fsys, nil
}

// ExpandPath expands a leading ~ or ~/ to home and makes p absolute against
// cwd. The ~user form is refused: cshell runs as one user.
func ExpandPath(p, home, cwd string) (string, error) {
	if p == "" {
		return "", fmt.Errorf("%w: empty path", ErrPath)
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home == "" {
			return "", fmt.Errorf("%w: %s: $HOME is not set", ErrPath, p)
		}
		p = filepath.Join(home, strings.TrimPrefix(p, "~"))
	} else if strings.HasPrefix(p, "~") {
		return "", fmt.Errorf("%w: %s: only ~ and ~/ are expanded; write the full path", ErrPath, p)
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
		return "", fmt.Errorf("%w: %s %s does not exist; create it first or fix the path", ErrPath, what, p)
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
		return "", fmt.Errorf("%w: %s %s: %v", ErrPath, what, p, err)
	}
	if rp == "/" {
		return "", fmt.Errorf("%w: %s /: the root directory cannot be a sandbox path", ErrPath, what)
	}
	return rp, nil
}

func appendNew(list []string, p string) []string {
	if slices.Contains(list, p) {
		return list
	}
	return append(list, p)
}
