package cache

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// fakeTool makes an executable named name in a folder of its own, for
// PATH.
func fakeTool(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestUseAndBinds(t *testing.T) {
	home, root, wd := t.TempDir(), filepath.Join(t.TempDir(), "cshell"), t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".cargo"), 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p, err := s.Use(wd)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	binds := p.Binds(home, []string{"PATH=" + fakeTool(t, "npm", "go")})
	var places []string
	for _, b := range binds {
		rel, _ := filepath.Rel(home, b.Path)
		places = append(places, rel)
		if st, err := os.Stat(b.Path); err != nil || !st.IsDir() {
			t.Errorf("the place %s was not made: %v", b.Path, err)
		}
		if !strings.HasPrefix(b.Source, filepath.Join(root, "projects", Key(wd), "caches")+"/") {
			t.Errorf("source %s is not in the project's folder", b.Source)
		}
	}
	// .cache always; npm's and go's because their tools are on PATH;
	// not cargo's: ~/.cargo exists, but its places do not and cargo is
	// not on PATH.
	want := []string{".cache", ".npm", "go/pkg"}
	if !slices.Equal(places, want) {
		t.Errorf("binds at %v, want %v", places, want)
	}
	if _, err := os.Stat(filepath.Join(home, ".cargo", "registry")); err == nil {
		t.Errorf("cargo's registry was made without cargo on PATH")
	}

	// A link where a cache's place would be is neither followed nor made.
	home2 := t.TempDir()
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(home2, "go")); err != nil {
		t.Fatal(err)
	}
	for _, b := range p.Binds(home2, []string{"PATH=" + fakeTool(t, "go")}) {
		if strings.HasPrefix(b.Path, filepath.Join(home2, "go")) {
			t.Errorf("a bind through the link ~/go: %v", b)
		}
	}
	if names, _ := os.ReadDir(outside); len(names) != 0 {
		t.Errorf("made %v through the link ~/go", names)
	}
}

func TestListRemovePrune(t *testing.T) {
	root := filepath.Join(t.TempDir(), "cshell")
	s, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	home := t.TempDir()
	a, b := t.TempDir(), t.TempDir()
	pa, err := s.Use(a)
	if err != nil {
		t.Fatal(err)
	}
	binds := pa.Binds(home, nil)
	if len(binds) != 1 {
		t.Fatalf("binds %v, want ~/.cache only", binds)
	}
	src := binds[0].Source
	// What a shell could leave: data, a sparse file claiming a terabyte, a
	// link out, a folder it made read-only.
	if err := os.WriteFile(filepath.Join(src, "data"), make([]byte, 64<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	if f, err := os.Create(filepath.Join(src, "sparse")); err == nil {
		_ = f.Truncate(1 << 40)
		f.Close()
	}
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(victim), filepath.Join(src, "out")); err != nil {
		t.Fatal(err)
	}
	ro := filepath.Join(src, "mod", "example.com@v1")
	if err := os.MkdirAll(ro, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ro, "go.mod"), []byte("module x\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	pb, err := s.Use(b)
	if err != nil {
		t.Fatal(err)
	}
	pb.Close()

	list, err := s.List(true)
	if err != nil || len(list) != 2 {
		t.Fatalf("List: %v, %v", list, err)
	}
	var ea Entry
	for _, e := range list {
		if e.Workdir == a {
			ea = e
		}
	}
	if ea.Bytes < 64<<10 || ea.Bytes > 1<<30 {
		t.Errorf("size %d: want what the files take on disk (64 KiB and a little), not what the sparse file claims", ea.Bytes)
	}
	if runtime.GOOS == "linux" && !ea.InUse {
		t.Errorf("a project in use is listed as not in use")
	}
	if err := s.Remove(ea.Key); !errors.Is(err, ErrInUse) {
		t.Errorf("Remove of a project in use: %v, want ErrInUse", err)
	}
	if key, err := s.Find(b); err != nil || key != Key(b) {
		t.Errorf("Find(%s) = %q, %v", b, key, err)
	}
	if _, err := s.Find(t.TempDir()); !errors.Is(err, ErrNotFound) {
		t.Errorf("Find of a directory without caches: %v", err)
	}

	// Prune removes what no shell uses; the one in use stays.
	removed, err := s.Prune(0)
	if err != nil || len(removed) != 1 || removed[0].Workdir != b {
		t.Fatalf("Prune: %v, %v; want b's caches removed", removed, err)
	}
	pa.Close()
	if err := s.Remove(Key(a)); err != nil {
		t.Fatalf("Remove once no shell uses it: %v", err)
	}
	if got, err := os.ReadFile(victim); err != nil || string(got) != "keep me" {
		t.Errorf("removal followed the link out: %q, %v", got, err)
	}
	if list, _ := s.List(false); len(list) != 0 {
		t.Errorf("left after removal: %v", list)
	}
	if names, _ := os.ReadDir(filepath.Join(root, "trash")); len(names) != 0 {
		t.Errorf("trash holds %v", names)
	}
}

func TestOpenRefusesALink(t *testing.T) {
	dir := t.TempDir()
	target := t.TempDir()
	if err := os.Symlink(target, filepath.Join(dir, "cshell")); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(filepath.Join(dir, "cshell")); err == nil {
		t.Error("a cache folder that is a link was opened")
	}
}

func TestRoot(t *testing.T) {
	t.Setenv("CSHELL_CACHE_DIR", "")
	t.Setenv("XDG_CACHE_HOME", "")
	if got := Root("/home/u"); got != "/home/u/.cache/cshell" {
		t.Errorf("Root = %q", got)
	}
	if got := Root(""); got != "" {
		t.Errorf("Root without a home = %q", got)
	}
	t.Setenv("XDG_CACHE_HOME", "/x/cache")
	if got := Root("/home/u"); got != "/x/cache/cshell" {
		t.Errorf("Root with XDG_CACHE_HOME = %q", got)
	}
	t.Setenv("CSHELL_CACHE_DIR", "/c")
	if got := Root("/home/u"); got != "/c" {
		t.Errorf("Root with CSHELL_CACHE_DIR = %q", got)
	}
}

// TestMaybePrune: a shell's end brings the caches within the cap by
// removing the least recently used project first, and looks again only
// after pruneEvery.
func TestMaybePrune(t *testing.T) {
	root := filepath.Join(t.TempDir(), "cshell")
	s, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	home := t.TempDir()
	fill := func(workdir string, used time.Time) {
		t.Helper()
		p, err := s.Use(workdir)
		if err != nil {
			t.Fatal(err)
		}
		src := p.Binds(home, nil)[0].Source
		if err := os.WriteFile(filepath.Join(src, "data"), make([]byte, 256<<10), 0o644); err != nil {
			t.Fatal(err)
		}
		p.Close()
		rel := filepath.Join(root, projects, Key(workdir), usedFile)
		if err := os.Chtimes(rel, used, used); err != nil {
			t.Fatal(err)
		}
	}
	old, recent, later := t.TempDir(), t.TempDir(), t.TempDir()
	now := time.Now()
	fill(old, now.Add(-2*time.Hour))
	fill(recent, now.Add(-time.Hour))

	if !s.PruneDue() {
		t.Error("PruneDue: false before any look")
	}
	s.MaybePrune(0) // no cap: nothing happens, nothing is recorded
	if list, _ := s.List(false); len(list) != 2 {
		t.Fatalf("MaybePrune without a cap removed: %v", list)
	}
	s.MaybePrune(384 << 10)
	list, _ := s.List(false)
	if len(list) != 1 || list[0].Workdir != recent {
		t.Fatalf("after MaybePrune: %+v, want only the recent project", list)
	}
	// Within pruneEvery it does not look again.
	fill(later, now)
	s.MaybePrune(384 << 10)
	if s.PruneDue() {
		t.Error("PruneDue: true right after a look")
	}
	if list, _ := s.List(false); len(list) != 2 {
		t.Errorf("MaybePrune looked again within %v: %+v", pruneEvery, list)
	}
	past := now.Add(-pruneEvery - time.Minute)
	if err := os.Chtimes(filepath.Join(root, prunedFile), past, past); err != nil {
		t.Fatal(err)
	}
	s.MaybePrune(384 << 10)
	if list, _ := s.List(false); len(list) != 1 || list[0].Workdir != later {
		t.Errorf("after pruneEvery: %+v, want only the latest project", list)
	}
}
