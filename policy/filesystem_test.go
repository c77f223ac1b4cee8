package policy

import (
	"cmp"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestExpandPath(t *testing.T) {
	tests := []struct {
		p, home, cwd string
		want         string
		wantErr      bool
	}{
		{p: "~", home: "/home/u", cwd: "/c", want: "/home/u"},
		{p: "~/", home: "/home/u", cwd: "/c", want: "/home/u"},
		{p: "~/x", home: "/home/u", cwd: "/c", want: "/home/u/x"},
		{p: "~/x/../y/./z/", home: "/home/u/", cwd: "/c", want: "/home/u/y/z"},
		{p: "~/../../..", home: "/home/u", cwd: "/c", want: "/"},
		{p: "x", home: "/home/u", cwd: "/c", want: "/c/x"},
		{p: ".", home: "/home/u", cwd: "/c/d", want: "/c/d"},
		{p: "./x/../y/", home: "/home/u", cwd: "/c", want: "/c/y"},
		{p: "..", home: "/home/u", cwd: "/c/d", want: "/c"},
		{p: "x~", home: "/home/u", cwd: "/c", want: "/c/x~"},
		{p: "a/~/b", home: "/home/u", cwd: "/c", want: "/c/a/~/b"},
		{p: "/~", home: "/home/u", cwd: "/c", want: "/~"},
		{p: "/a//b/./c/", home: "/home/u", cwd: "/c", want: "/a/b/c"},
		{p: "/abs", home: "", cwd: "", want: "/abs"},
		{p: "~user", home: "/home/u", cwd: "/c", wantErr: true},
		{p: "~user/x", home: "/home/u", cwd: "/c", wantErr: true},
		{p: "~~", home: "/home/u", cwd: "/c", wantErr: true},
		{p: "~", home: "", cwd: "/c", wantErr: true},
		{p: "~/x", home: "", cwd: "/c", wantErr: true},
		{p: "", home: "/home/u", cwd: "/c", wantErr: true},
	}
	for _, tt := range tests {
		got, err := ExpandPath(tt.p, tt.home, tt.cwd)
		if tt.wantErr {
			if err == nil {
				t.Errorf("ExpandPath(%q, %q, %q) = %q, want an error", tt.p, tt.home, tt.cwd, got)
			} else if !errors.Is(err, ErrPath) {
				t.Errorf("ExpandPath(%q, %q, %q): error %q does not wrap ErrPath", tt.p, tt.home, tt.cwd, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ExpandPath(%q, %q, %q) = %q, %v; want %q", tt.p, tt.home, tt.cwd, got, err, tt.want)
		}
	}
}

// fsFixture is a home and a working directory in a temporary directory,
// with symlinks resolved so that expected paths can be compared as they are.
//
//	home/.ssh/ .aws/ .netrc .docker -> ../elsewhere/docker  (hidden by default)
//	home/.config/  work/  secret/
//	cwd/src/ data/ file.txt link -> data  rootlink -> /  dangling -> missing
type fsFixture struct {
	root, home, cwd string
}

func newFSFixture(t *testing.T) fsFixture {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := fsFixture{root: root, home: filepath.Join(root, "home"), cwd: filepath.Join(root, "cwd")}
	for _, d := range []string{
		"home/.ssh", "home/.aws", "home/.config", "home/work", "home/secret", "elsewhere/docker",
		"cwd/src", "cwd/data",
	} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, file := range []string{"home/.netrc", "cwd/file.txt"} {
		if err := os.WriteFile(filepath.Join(root, file), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"home/.docker":  "../elsewhere/docker",
		"cwd/link":      "data",
		"cwd/rootlink":  "/",
		"cwd/dangling":  "missing",
		"cwd/abslink":   filepath.Join(root, "home", "work"),
		"cwd/hiddenlnk": filepath.Join(root, "home", ".ssh"),
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func TestNewFilesystem(t *testing.T) {
	tests := []struct {
		name string
		// req fills in the request; Home and Cwd are preset.
		req func(f fsFixture, r *FilesystemRequest)
		// want gives the expected result; Hide defaults to defaultHide.
		want    func(f fsFixture) Filesystem
		wantErr bool
		errIs   error // the error wrapped, when not ErrPath
	}{
		{
			name: "defaults",
			req:  func(f fsFixture, r *FilesystemRequest) {},
			want: func(f fsFixture) Filesystem {
				return Filesystem{Workdir: f.cwd, Hide: f.defaultHide()}
			},
		},
		{
			name: "no home: nothing hidden by default",
			req:  func(f fsFixture, r *FilesystemRequest) { r.Home = "" },
			want: func(f fsFixture) Filesystem { return Filesystem{Workdir: f.cwd} },
		},
		{
			name: "relative workdir",
			req:  func(f fsFixture, r *FilesystemRequest) { r.Workdir = "src/" },
			want: func(f fsFixture) Filesystem {
				return Filesystem{Workdir: filepath.Join(f.cwd, "src"), Hide: f.defaultHide()}
			},
		},
		{
			name: "workdir under home",
			req:  func(f fsFixture, r *FilesystemRequest) { r.Workdir = "~/work" },
			want: func(f fsFixture) Filesystem {
				return Filesystem{Workdir: filepath.Join(f.home, "work"), Hide: f.defaultHide()}
			},
		},
		{
			name:    "workdir through a symlink a shell could have planted",
			req:     func(f fsFixture, r *FilesystemRequest) { r.Workdir = "link" },
			wantErr: true, errIs: ErrLinkedPath,
		},
		{name: "missing workdir", req: func(f fsFixture, r *FilesystemRequest) { r.Workdir = "nope" }, wantErr: true},
		{name: "missing cwd as workdir", req: func(f fsFixture, r *FilesystemRequest) { r.Cwd = filepath.Join(f.root, "gone") }, wantErr: true},
		{name: "workdir is a file", req: func(f fsFixture, r *FilesystemRequest) { r.Workdir = "file.txt" }, wantErr: true},
		{name: "workdir dangling symlink", req: func(f fsFixture, r *FilesystemRequest) { r.Workdir = "dangling" }, wantErr: true, errIs: ErrLinkedPath},
		{name: "workdir ~user", req: func(f fsFixture, r *FilesystemRequest) { r.Workdir = "~root" }, wantErr: true},
		{name: "workdir root", req: func(f fsFixture, r *FilesystemRequest) { r.Workdir = "/" }, wantErr: true},
		{name: "workdir root spelt /..", req: func(f fsFixture, r *FilesystemRequest) { r.Workdir = "/.." }, wantErr: true},
		{name: "workdir symlink to root", req: func(f fsFixture, r *FilesystemRequest) { r.Workdir = "rootlink" }, wantErr: true, errIs: ErrLinkedPath},
		{name: "cwd root", req: func(f fsFixture, r *FilesystemRequest) { r.Cwd = "/" }, wantErr: true},
		{
			name: "rw and ro",
			req: func(f fsFixture, r *FilesystemRequest) {
				r.RW = []string{"data", "~/work"}
				r.RO = []string{"src", "file.txt"}
			},
			want: func(f fsFixture) Filesystem {
				return Filesystem{
					Workdir: f.cwd,
					Write:   []string{filepath.Join(f.cwd, "data"), filepath.Join(f.home, "work")},
					Read:    []string{filepath.Join(f.cwd, "src"), filepath.Join(f.cwd, "file.txt")},
					Hide:    f.defaultHide(),
				}
			},
		},
		{
			name:    "rw through a symlink a shell could have planted",
			req:     func(f fsFixture, r *FilesystemRequest) { r.RW = []string{"abslink"} },
			wantErr: true, errIs: ErrLinkedPath,
		},
		{
			name:    "ro through a symlink a shell could have planted",
			req:     func(f fsFixture, r *FilesystemRequest) { r.RO = []string{"link/x"} },
			wantErr: true, errIs: ErrLinkedPath,
		},
		{
			name: "rw spellings of one directory are listed once",
			req: func(f fsFixture, r *FilesystemRequest) {
				r.RW = []string{"data", "./data/", filepath.Join(f.cwd, "src", "..", "data")}
			},
			want: func(f fsFixture) Filesystem {
				return Filesystem{Workdir: f.cwd, Write: []string{filepath.Join(f.cwd, "data")}, Hide: f.defaultHide()}
			},
		},
		{name: "missing rw", req: func(f fsFixture, r *FilesystemRequest) { r.RW = []string{"data", "nope"} }, wantErr: true},
		{name: "missing ro", req: func(f fsFixture, r *FilesystemRequest) { r.RO = []string{"nope"} }, wantErr: true},
		{name: "dangling rw", req: func(f fsFixture, r *FilesystemRequest) { r.RW = []string{"dangling"} }, wantErr: true, errIs: ErrLinkedPath},
		{name: "rw ~user", req: func(f fsFixture, r *FilesystemRequest) { r.RW = []string{"~root/x"} }, wantErr: true},
		{name: "rw ~ without home", req: func(f fsFixture, r *FilesystemRequest) { r.Home = ""; r.RW = []string{"~/work"} }, wantErr: true},
		{name: "rw root", req: func(f fsFixture, r *FilesystemRequest) { r.RW = []string{"/"} }, wantErr: true},
		{name: "rw symlink to root", req: func(f fsFixture, r *FilesystemRequest) { r.RW = []string{"rootlink"} }, wantErr: true, errIs: ErrLinkedPath},
		{name: "ro root", req: func(f fsFixture, r *FilesystemRequest) { r.RO = []string{"/"} }, wantErr: true},
		{name: "hide root", req: func(f fsFixture, r *FilesystemRequest) { r.Hide = []string{"/"} }, wantErr: true},
		{name: "hide ~user", req: func(f fsFixture, r *FilesystemRequest) { r.Hide = []string{"~root"} }, wantErr: true},
		{
			name: "missing hide made, dangling link skipped",
			req: func(f fsFixture, r *FilesystemRequest) {
				r.Hide = []string{"nope", "dangling", "~/secret", "~/.ssh"}
			},
			want: func(f fsFixture) Filesystem {
				return Filesystem{Workdir: f.cwd, Hide: append(f.defaultHide(), filepath.Join(f.home, "secret"))}
			},
		},
		{
			name: "hide under a regular file is missing",
			req:  func(f fsFixture, r *FilesystemRequest) { r.Hide = []string{"file.txt/x"} },
			want: func(f fsFixture) Filesystem {
				return Filesystem{Workdir: f.cwd, Hide: f.defaultHide()}
			},
		},
		{
			name: "~/.config is a regular file: .config/gcloud is missing",
			req: func(f fsFixture, r *FilesystemRequest) {
				cfg := filepath.Join(f.home, ".config")
				if os.Remove(cfg) != nil || os.WriteFile(cfg, []byte("x"), 0o600) != nil {
					panic("cannot replace " + cfg)
				}
			},
			want: func(f fsFixture) Filesystem {
				return Filesystem{Workdir: f.cwd, Hide: f.defaultHide()}
			},
		},
		{
			name: "hidden and rw: only hidden",
			req: func(f fsFixture, r *FilesystemRequest) {
				r.RW = []string{"~/.ssh", "data"}
				r.RO = []string{"~/.aws"}
			},
			want: func(f fsFixture) Filesystem {
				return Filesystem{Workdir: f.cwd, Write: []string{filepath.Join(f.cwd, "data")}, Hide: f.defaultHide()}
			},
		},
		{
			name:    "hidden through a symlink and rw: refused",
			req:     func(f fsFixture, r *FilesystemRequest) { r.RW = []string{"hiddenlnk"} },
			wantErr: true, errIs: ErrLinkedPath,
		},
		{
			name: "--hide and rw: only hidden",
			req: func(f fsFixture, r *FilesystemRequest) {
				r.RW = []string{"data", "src"}
				r.Hide = []string{"link"}
			},
			want: func(f fsFixture) Filesystem {
				return Filesystem{
					Workdir: f.cwd,
					Write:   []string{filepath.Join(f.cwd, "src")},
					Hide:    append(f.defaultHide(), filepath.Join(f.cwd, "data")),
				}
			},
		},
		{
			name: "ro and rw: only ro",
			req: func(f fsFixture, r *FilesystemRequest) {
				r.RW = []string{"data", "src"}
				r.RO = []string{"data"}
			},
			want: func(f fsFixture) Filesystem {
				return Filesystem{
					Workdir: f.cwd,
					Write:   []string{filepath.Join(f.cwd, "src")},
					Read:    []string{filepath.Join(f.cwd, "data")},
					Hide:    f.defaultHide(),
				}
			},
		},
		{
			name: "config denyRead and allowWrite",
			req: func(f fsFixture, r *FilesystemRequest) {
				r.RW = []string{"data"}
				r.Config = &Config{Filesystem: FilesystemConfig{
					AllowWrite: []string{"~/work", "/nonexistent/cshell-test", "data", "~/.ssh"},
					DenyRead:   []string{"~/secret", "~/nope", "src", "~/.aws"},
				}}
			},
			want: func(f fsFixture) Filesystem {
				return Filesystem{
					Workdir: f.cwd,
					Write:   []string{filepath.Join(f.cwd, "data"), filepath.Join(f.home, "work")},
					Hide:    append(f.defaultHide(), filepath.Join(f.home, "secret"), filepath.Join(f.cwd, "src")),
				}
			},
		},
		{
			name: "empty config",
			req:  func(f fsFixture, r *FilesystemRequest) { r.Config = &Config{} },
			want: func(f fsFixture) Filesystem { return Filesystem{Workdir: f.cwd, Hide: f.defaultHide()} },
		},
		{
			name: "config allowWrite root",
			req: func(f fsFixture, r *FilesystemRequest) {
				r.Config = &Config{Filesystem: FilesystemConfig{AllowWrite: []string{"/"}}}
			},
			wantErr: true,
		},
		{
			name: "config denyRead ~user",
			req: func(f fsFixture, r *FilesystemRequest) {
				r.Config = &Config{Filesystem: FilesystemConfig{DenyRead: []string{"~root/.ssh"}}}
			},
			wantErr: true,
		},
		{
			name: "start inside the working directory, relative or absolute",
			req:  func(f fsFixture, r *FilesystemRequest) { r.Start = "src/" },
			want: func(f fsFixture) Filesystem {
				return Filesystem{Workdir: f.cwd, Start: filepath.Join(f.cwd, "src"), Hide: f.defaultHide()}
			},
		},
		{
			name: "start at the working directory itself",
			req:  func(f fsFixture, r *FilesystemRequest) { r.Start = f.cwd },
			want: func(f fsFixture) Filesystem { return Filesystem{Workdir: f.cwd, Hide: f.defaultHide()} },
		},
		{
			name:    "start outside the working directory",
			req:     func(f fsFixture, r *FilesystemRequest) { r.Start = "../home" },
			wantErr: true,
		},
		{
			name:    "start through a link inside the working directory",
			req:     func(f fsFixture, r *FilesystemRequest) { r.Start = "link" },
			wantErr: true,
			errIs:   ErrLinkedPath,
		},
		{
			name:    "start at a file",
			req:     func(f fsFixture, r *FilesystemRequest) { r.Start = "file.txt" },
			wantErr: true,
		},
		{
			name:    "start at nothing",
			req:     func(f fsFixture, r *FilesystemRequest) { r.Start = "src/nope" },
			wantErr: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFSFixture(t)
			r := FilesystemRequest{Home: f.home, Cwd: f.cwd, System: []string{}}
			tt.req(f, &r)
			fatalf := t.Fatalf
			got, err := NewFilesystem(r)
			if tt.wantErr {
				if err == nil {
					fatalf("NewFilesystem = %+v, want an error", got)
				}
				if want := cmp.Or(tt.errIs, ErrPath); !errors.Is(err, want) {
					fatalf("error %q does not wrap %v", err, want)
				}
				return
			}
			if err != nil {
				fatalf("NewFilesystem: %v", err)
			}
			want := tt.want(f)
			if want.Start == "" {
				want.Start = want.Workdir
			}
			if want.Missing == nil {
				got.Missing = nil // TestMissingHiddenPaths checks them
			}
			sortFS(&got)
			sortFS(&want)
			if !reflect.DeepEqual(got, want) {
				fatalf("NewFilesystem =\n  %+v\nwant\n  %+v", got, want)
			}
		})
	}
}

// defaultHide is what DefaultHidden gives in the fixture's home: the
// entries that exist, symlinks resolved.
func (f fsFixture) defaultHide() []string {
	return []string{
		filepath.Join(f.home, ".ssh"),
		filepath.Join(f.home, ".aws"),
		filepath.Join(f.home, ".netrc"),
		filepath.Join(f.root, "elsewhere", "docker"),
	}
}

func sortFS(fs *Filesystem) {
	for _, l := range []*[]string{&fs.Write, &fs.Read, &fs.Hide} {
		if len(*l) == 0 {
			*l = nil
		} else {
			slices.Sort(*l)
		}
	}
}

// TestNewFilesystemDefaultHidden checks each DefaultHidden entry on its
// own: hidden when it exists, left out when it does not.
func TestNewFilesystemDefaultHidden(t *testing.T) {
	for _, entry := range DefaultHidden {
		t.Run(entry, func(t *testing.T) {
			for _, exists := range []bool{true, false} {
				home := t.TempDir()
				home, err := filepath.EvalSymlinks(home)
				if err != nil {
					t.Fatal(err)
				}
				p := filepath.Join(home, entry)
				if exists {
					if err := os.MkdirAll(p, 0o700); err != nil {
						t.Fatal(err)
					}
				}
				fsys, err := NewFilesystem(FilesystemRequest{Home: home, Cwd: home, System: []string{}})
				if err != nil {
					t.Fatal(err)
				}
				if got := slices.Contains(fsys.Hide, p); got != exists {
					t.Errorf("exists=%v: Hide = %q; contains %s: %v", exists, fsys.Hide, p, got)
				}
				if !exists && len(fsys.Hide) != 0 {
					t.Errorf("nothing exists, yet Hide = %q", fsys.Hide)
				}
			}
		})
	}
}

// TestProjectCannotWriteThroughSymlink layers a project file that names a
// symlink inside a globally writable directory pointing outside it, as a
// cloned repository could: the target must not become writable.
func TestProjectCannotWriteThroughSymlink(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(root, "work")
	proj := filepath.Join(work, "proj")
	outside := filepath.Join(root, "bashrc")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(outside, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(proj, "evil")); err != nil {
		t.Fatal(err)
	}
	globalPath := filepath.Join(root, "config.json")
	writeFile(t, globalPath, `{"filesystem": {"allowWrite": ["`+work+`"]}}`)
	writeFile(t, filepath.Join(proj, ProjectFile), `{"filesystem": {"allowWrite": ["evil", "`+filepath.Join(proj, "evil")+`"]}}`)
	c, _, err := Load(globalPath, true, proj)
	if err != nil {
		t.Fatal(err)
	}
	fsys, err := NewFilesystem(FilesystemRequest{Cwd: proj, Config: c})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(fsys.Write, outside) {
		t.Errorf("a project allowWrite symlink made %s writable (Write = %q)", outside, fsys.Write)
	}
	// "evil" as spelt is not under the global root: Load warned of it.
	if len(fsys.Warnings) != 1 || !strings.Contains(fsys.Warnings[0], `allowWrite entry "`+filepath.Join(proj, "evil")+`": it leads to `+outside) {
		t.Errorf("warnings %q, want one for the entry that leads out", fsys.Warnings)
	}
}

// TestPrivateDirs checks cshell's own directories: hidden, read-only
// paths inside them dropped, and a working directory or writable path
// inside one refused.
func TestPrivateDirs(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	state, work := filepath.Join(root, "state"), filepath.Join(root, "work")
	for _, d := range []string{filepath.Join(state, "shells"), work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	fsys, err := NewFilesystem(FilesystemRequest{Cwd: work, RO: []string{filepath.Join(state, "shells")}, Private: []string{state, filepath.Join(root, "missing")}, System: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(fsys.Hide, []string{state}) || len(fsys.Read) != 0 {
		t.Errorf("hide %v read %v, want the state dir hidden and nothing read-only", fsys.Hide, fsys.Read)
	}
	for _, req := range []FilesystemRequest{
		{Cwd: filepath.Join(state, "shells"), Private: []string{state}},
		{Cwd: state, Private: []string{state}},
		{Cwd: work, RW: []string{filepath.Join(state, "shells")}, Private: []string{state}},
	} {
		if _, err := NewFilesystem(req); !errors.Is(err, ErrPath) {
			t.Errorf("%+v: err %v, want ErrPath", req, err)
		}
	}
}

// TestMissingHiddenPaths checks that hidden paths that do not exist are
// listed to be made (a trailing slash: a directory), in every home, and
// that nothing is made where the parent is missing or a link dangles.
func TestMissingHiddenPaths(t *testing.T) {
	f := newFSFixture(t)
	other := filepath.Join(f.root, "passwd-home")
	if err := os.MkdirAll(filepath.Join(other, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	fsys, err := NewFilesystem(FilesystemRequest{Home: f.home, PasswdHome: other, Cwd: f.cwd,
		Hide: []string{"newdir/", "newfile", "no/parent", "dangling"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []MissingPath{
		{Path: filepath.Join(f.cwd, "newdir"), Dir: true},
		{Path: filepath.Join(f.cwd, "newfile")},
		{Path: filepath.Join(f.home, ".gnupg"), Dir: true},
		{Path: filepath.Join(f.home, ".config", "gcloud"), Dir: true},
		{Path: filepath.Join(f.home, ".vault-token")},
		{Path: filepath.Join(other, ".aws"), Dir: true},
		{Path: filepath.Join(other, ".pgpass")},
	}
	for _, w := range want {
		if !slices.Contains(fsys.Missing, w) {
			t.Errorf("missing %+v not listed: %+v", w, fsys.Missing)
		}
	}
	for _, m := range fsys.Missing {
		if strings.Contains(m.Path, "no/parent") || strings.HasSuffix(m.Path, "dangling") ||
			strings.Contains(m.Path, ".cargo") || strings.HasPrefix(m.Path, filepath.Join(other, ".config")) {
			t.Errorf("%+v listed: its parent is missing, or it is a dangling link", m)
		}
	}
	if !slices.Contains(fsys.Hide, filepath.Join(other, ".ssh")) {
		t.Errorf("the passwd home's .ssh is not hidden: %v", fsys.Hide)
	}
}

// TestLinksNoShellCouldPlant checks that a link a shell could not have
// made (not this user's, in a directory this user cannot write) is
// followed. Root makes such a link by giving it and its directory away.
func TestLinksNoShellCouldPlant(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("making a link owned by someone else needs root; the unprivileged run checks the refusal")
	}
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	target, sys := filepath.Join(root, "target"), filepath.Join(root, "system")
	for _, d := range []string{target, sys} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(sys, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(link, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(sys, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	fsys, err := NewFilesystem(FilesystemRequest{Cwd: root, Workdir: link})
	if err != nil || fsys.Workdir != target {
		t.Errorf("workdir through a link no shell could plant: %q %v", fsys.Workdir, err)
	}
	if err := os.Chmod(sys, 0o777); err != nil {
		t.Fatal(err)
	}
	if _, err := NewFilesystem(FilesystemRequest{Cwd: root, Workdir: link}); !errors.Is(err, ErrLinkedPath) {
		t.Errorf("a link in a directory anyone may write: %v", err)
	}
}

func TestNestedHiddenPaths(t *testing.T) {
	f := newFSFixture(t)
	fsys, err := NewFilesystem(FilesystemRequest{Home: f.home, Cwd: f.cwd, Hide: []string{"~/.config", "~/.ssh/x"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range fsys.Hide {
		if strings.HasPrefix(h, filepath.Join(f.home, ".config")+"/") || strings.HasPrefix(h, filepath.Join(f.home, ".ssh")+"/") {
			t.Errorf("%s hidden inside a hidden path: %v", h, fsys.Hide)
		}
	}
	for _, m := range fsys.Missing {
		if strings.HasPrefix(m.Path, filepath.Join(f.home, ".config")+"/") {
			t.Errorf("%s to be made inside a hidden path", m.Path)
		}
	}
	if _, err := NewFilesystem(FilesystemRequest{Home: f.home, Cwd: filepath.Join(f.home, ".ssh")}); !errors.Is(err, ErrPath) {
		t.Errorf("a workdir in a hidden path: %v", err)
	}
}

func TestSystemSecretsHidden(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"etc/shadow", "etc/ssh/ssh_host_ed25519_key", "etc/ssh/ssh_host_ed25519_key.pub", "etc/ssh/ssh_config"} {
		writeFile(t, filepath.Join(root, f), "x")
	}
	fsys, err := NewFilesystem(FilesystemRequest{Cwd: root, System: []string{root + "/etc/shadow", root + "/etc/gshadow", root + "/etc/ssh/ssh_host_*_key"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{root + "/etc/shadow", root + "/etc/ssh/ssh_host_ed25519_key"}
	if !slices.Equal(fsys.Hide, want) || len(fsys.Missing) != 0 {
		t.Errorf("hide %v missing %v, want %v and nothing made", fsys.Hide, fsys.Missing, want)
	}
}

func TestFilesystemWritable(t *testing.T) {
	f := Filesystem{Workdir: "/home/u/app", Write: []string{"/home/u/.cache/go-build"}}
	for p, want := range map[string]string{
		"/home/u/app": "/home/u/app", "/home/u/app/x/y": "/home/u/app", "/home/u/.cache/go-build/z": "/home/u/.cache/go-build",
		"/home/u/apple": "", "/home/u": "", "/etc": "",
	} {
		if got := f.Writable(p); got != want {
			t.Errorf("Writable(%s) = %q, want %q", p, got, want)
		}
	}
}

// TestAddCaches: each cache's place gets its folder; hidden paths beneath
// a place are dropped (the shell sees the cache there), the user's own
// paths win, and a place through a link the workdir's shell could have
// planted gets none, with a warning.
func TestAddCaches(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home, src := filepath.Join(root, "home"), filepath.Join(root, "src")
	for _, d := range []string{".cache/secret", ".npm", ".m2/repository", "go/pkg"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(home, "elsewhere"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The working directory is the home: a shell could have planted ~/.yarn.
	if err := os.Symlink(filepath.Join(home, "elsewhere"), filepath.Join(home, ".yarn")); err != nil {
		t.Fatal(err)
	}
	fsys, err := NewFilesystem(FilesystemRequest{Home: home, Cwd: home, RO: []string{filepath.Join(home, ".m2/repository")},
		Hide: []string{"~/.cache/secret", "~/go"}, System: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	var caches []CacheBind
	for _, rel := range []string{".cache", ".npm", ".m2/repository", "go/pkg", ".yarn", ".missing"} {
		caches = append(caches, CacheBind{Path: filepath.Join(home, rel), Source: filepath.Join(src, rel)})
	}
	fsys.AddCaches(caches)
	want := []CacheBind{{Path: filepath.Join(home, ".cache"), Source: filepath.Join(src, ".cache")}, {Path: filepath.Join(home, ".npm"), Source: filepath.Join(src, ".npm")}}
	if !slices.Equal(fsys.Caches, want) {
		t.Errorf("caches %v, want %v (the --ro path, the hidden ~/go and the linked ~/.yarn get none)", fsys.Caches, want)
	}
	if slices.Contains(fsys.Hide, filepath.Join(home, ".cache/secret")) {
		t.Errorf("a hidden path beneath a cache's place is still hidden: %v", fsys.Hide)
	}
	if !slices.ContainsFunc(fsys.Warnings, func(w string) bool { return strings.Contains(w, ".yarn") && strings.Contains(w, "planted") }) {
		t.Errorf("no warning for the linked ~/.yarn: %v", fsys.Warnings)
	}
	if fsys.Writable(filepath.Join(src, ".npm", "x")) != filepath.Join(src, ".npm") {
		t.Errorf("Writable: a cache's folder is the shell's to write")
	}
}
