//go:build e2e

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The package managers' registries, reached through the shells' proxy
// and egress (the machines that run these tests reach them; nothing else).
const (
	npmRegistry = "registry.npmjs.org"
	goProxy     = "proxy.golang.org"
	goSumDB     = "sum.golang.org"
)

// toolEnv is the environment of a test's cshell call that runs real
// tools: the caller's trust in this machine's certificates (a machine
// behind a TLS-inspecting gateway trusts its authority there; Node.js
// reads only its own list unless told), and no update notices.
func toolEnv() []string {
	env := []string{"npm_config_update_notifier=false", "npm_config_fund=false", "npm_config_audit=false"}
	if _, err := os.Stat("/etc/ssl/certs/ca-certificates.crt"); err == nil {
		env = append(env, "NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt")
	}
	return env
}

// projectDir makes a working directory whose caches the test removes at
// its end (cshell cache rm), with the files given.
func projectDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		writeFile(t, filepath.Join(dir, name), text)
	}
	t.Cleanup(func() { run(t, call{args: []string{"cache", "rm", dir}}) })
	return dir
}

// treeState lists a folder's files and their sizes, to tell whether
// anything wrote there.
func treeState(dir string) string {
	var b strings.Builder
	_ = filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil {
			fmt.Fprintf(&b, "%s %d\n", p, info.Size())
		}
		return nil
	})
	return b.String()
}

// npm installs a package from the registry; a new shell of the same
// working directory installs it again offline, from the cache the first
// one filled; the user's own ~/.npm is untouched. Removing the caches
// (cshell cache rm) makes the offline install fail.
func TestNpmInstallThenOffline(t *testing.T) {
	requireLinux(t)
	home, _ := os.UserHomeDir()
	before := treeState(filepath.Join(home, ".npm"))
	wd := projectDir(t, map[string]string{"package.json": `{"name":"cshell-e2e-npm","version":"1.0.0","private":true,"dependencies":{"is-number":"7.0.0"}}`})
	r := run(t, call{args: []string{"run", "--allow-host", npmRegistry, "--", "npm", "install"}, dir: wd, env: toolEnv()})
	if r.code != 0 {
		t.Fatalf("npm install: code %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(wd, "node_modules", "is-number", "package.json")); err != nil {
		t.Fatalf("npm install left no is-number: %v", err)
	}
	if after := treeState(filepath.Join(home, ".npm")); after != before {
		t.Errorf("npm in a shell wrote the user's own ~/.npm")
	}
	os.RemoveAll(filepath.Join(wd, "node_modules"))
	os.Remove(filepath.Join(wd, "package-lock.json"))
	r = run(t, call{args: []string{"run", "--", "npm", "install", "--offline"}, dir: wd, env: toolEnv()})
	if r.code != 0 {
		t.Fatalf("npm install --offline in a new shell: code %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(wd, "node_modules", "is-number", "package.json")); err != nil {
		t.Fatalf("the offline install left no is-number: %v", err)
	}

	// cshell cache lists the working directory's caches, with a size.
	r = run(t, call{args: []string{"--json", "cache"}})
	var list []struct {
		Workdir string
		Bytes   int64
		Caches  []struct{ Name string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		t.Fatalf("cache --json: %q: %v", r.stdout, err)
	}
	found := false
	for _, e := range list {
		if e.Workdir == wd {
			found = e.Bytes > 0 && strings.Contains(fmt.Sprint(e.Caches), "npm")
		}
	}
	if !found {
		t.Errorf("cache --json does not list %s with its npm cache: %s", wd, r.stdout)
	}
	r = run(t, call{args: []string{"cache", "rm", wd}})
	if r.code != 0 || !strings.Contains(r.stdout, "removed the caches of "+wd) {
		t.Fatalf("cache rm: code %d, %q %q", r.code, r.stdout, r.stderr)
	}
	os.RemoveAll(filepath.Join(wd, "node_modules"))
	os.Remove(filepath.Join(wd, "package-lock.json"))
	r = run(t, call{args: []string{"run", "--", "npm", "install", "--offline"}, dir: wd, env: toolEnv()})
	if r.code == 0 {
		t.Errorf("npm install --offline worked after cache rm: its cache was not removed")
	}
}

// goTool finds the go command for a shell, by absolute path (the
// unprivileged run's PATH may lack Go's folder).
func goTool(t *testing.T) string {
	t.Helper()
	for _, p := range []string{os.Getenv("CSHELL_TEST_GO"), "/usr/local/go/bin/go"} {
		if p != "" {
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
	}
	p, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go is needed: %v", err)
	}
	return p
}

// A Go module with one dependency is built, fetching it from the module
// proxy; a new shell tests it with GOPROXY=off, from the module and build
// caches the first one filled. The module cache's read-only folders are
// removed by cache rm.
func TestGoModuleThenOffline(t *testing.T) {
	requireLinux(t)
	goBin := goTool(t)
	wd := projectDir(t, map[string]string{
		"go.mod": "module example.com/cshelle2e\n\ngo 1.22\n\nrequire github.com/pkg/errors v0.9.1\n",
		"main.go": `package main

import (
	"fmt"

	"github.com/pkg/errors"
)

func greeting() error { return errors.Wrap(errors.New("from the sandbox"), "hello") }

func main() { fmt.Println(greeting()) }
`,
		"main_test.go": `package main

import "testing"

func TestGreeting(t *testing.T) {
	if got := greeting().Error(); got != "hello: from the sandbox" {
		t.Fatal(got)
	}
}
`,
	})
	env := []string{"PATH=" + filepath.Dir(goBin) + ":/usr/bin:/bin", "GOFLAGS=", "GOTOOLCHAIN=local"}
	r := run(t, call{args: []string{"run", "--allow-host", goProxy, "--allow-host", goSumDB, "-e", "GOFLAGS=-mod=mod", "-e", "GOTOOLCHAIN=local",
		"--", "sh", "-c", "go mod download && go build -o app . && ./app"}, dir: wd, env: env})
	if r.code != 0 || r.stdout != "hello: from the sandbox\n" {
		t.Fatalf("go build: code %d\nstdout %q\nstderr %s", r.code, r.stdout, r.stderr)
	}
	r = run(t, call{args: []string{"run", "-e", "GOPROXY=off", "-e", "GOFLAGS=-mod=mod", "-e", "GOTOOLCHAIN=local", "--", "go", "test", "-count=1", "./..."}, dir: wd, env: env})
	if r.code != 0 || !strings.Contains(r.stdout, "ok") {
		t.Fatalf("go test offline in a new shell: code %d\nstdout %q\nstderr %s", r.code, r.stdout, r.stderr)
	}
	r = run(t, call{args: []string{"cache", "rm", wd}})
	if r.code != 0 {
		t.Fatalf("cache rm of a Go module cache (read-only folders): code %d, %q %q", r.code, r.stdout, r.stderr)
	}
}

// A Vite dev server, installed from the registry, started in the
// background with --expose and --ready, serves its page to curl on this
// machine.
func TestViteDevServer(t *testing.T) {
	requireLinux(t)
	if _, err := exec.LookPath("curl"); err != nil {
		t.Fatalf("curl is needed: %v", err)
	}
	wd := projectDir(t, map[string]string{
		"package.json": `{"name":"cshell-e2e-vite","private":true,"version":"1.0.0","type":"module","scripts":{"dev":"vite"}}`,
		"index.html":   "<!doctype html><title>cshell e2e</title><p>served by vite in a sandbox</p>\n",
	})
	r := run(t, call{args: []string{"run", "--allow-host", npmRegistry, "--", "npm", "install", "-D", "-E", "vite@8.3.8"}, dir: wd, env: toolEnv()})
	if r.code != 0 {
		t.Fatalf("npm install vite: code %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	port := freePort(t)
	state := t.TempDir()
	r = run(t, call{args: []string{"--state-dir", state, "run", "-d", "--expose", fmt.Sprint(port), "--ready", "--ready-timeout", "60s",
		"--", "npm", "run", "dev", "--", "--port", fmt.Sprint(port), "--strictPort"}, dir: wd, env: toolEnv()})
	t.Cleanup(func() { run(t, call{args: []string{"--state-dir", state, "kill", "all", "--grace", "2"}}) })
	if r.code != 0 {
		log := run(t, call{args: []string{"--state-dir", state, "logs", "1"}})
		t.Fatalf("run -d --ready: code %d\nstdout %s\nstderr %s\nlog %s", r.code, r.stdout, r.stderr, log.stdout)
	}
	out, err := exec.Command("curl", "-fsS", "--max-time", "10", fmt.Sprintf("http://127.0.0.1:%d/", port)).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "served by vite in a sandbox") || !strings.Contains(string(out), "/@vite/client") {
		t.Errorf("curl of the dev server: %v\n%s", err, out)
	}
}

// The caches are kept within caches.maxBytes when a foreground shell
// ends: by a process of its own, detached, so that the run's exit does
// not wait for a walk of every cache (seconds on a cold page cache). Two
// working directories of 3 MB of caches each under a 4 MB cap: the second
// run's caller gets its exit code, and the first directory's caches (the
// least recently used) go soon after; the pruning process ends.
func TestCachesPrunedAfterTheRun(t *testing.T) {
	requireLinux(t)
	root := filepath.Join(t.TempDir(), "caches") // the test's own caches (CSHELL_CACHE_DIR), made by cshell
	cfg := filepath.Join(t.TempDir(), "config.json")
	writeFile(t, cfg, `{"caches": {"maxBytes": "4m"}}`)
	env := []string{"CSHELL_CACHE_DIR=" + root}
	fill := "head -c 3000000 /dev/zero > ~/.npm/cshell-e2e-fill && echo filled"
	listed := func() string { return run(t, call{args: []string{"--json", "cache"}, env: env}).stdout }
	pruning := func() []string {
		out, _ := exec.Command("ps", "-eo", "pid=,args=").Output()
		var found []string
		for _, l := range strings.Split(string(out), "\n") {
			if strings.Contains(l, " __prune-caches "+root+" ") {
				found = append(found, strings.TrimSpace(l))
			}
		}
		return found
	}
	settled := func() {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for len(pruning()) > 0 && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if p := pruning(); len(p) > 0 {
			t.Fatalf("the pruning process still runs: %v", p)
		}
	}

	old, recent := t.TempDir(), t.TempDir()
	if r := run(t, call{args: []string{"--config", cfg, "run", "--", fill}, dir: old, env: env}); r.code != 0 || strings.TrimSpace(r.stdout) != "filled" {
		t.Fatalf("fill %s: code %d, %q %q", old, r.code, r.stdout, r.stderr)
	}
	settled() // the first end's look: under the cap, nothing goes
	if !strings.Contains(listed(), old) {
		t.Fatalf("no caches listed for %s: %s", old, listed())
	}
	// The next look is ten minutes away; make it due.
	past := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(root, "pruned"), past, past); err != nil {
		t.Fatal(err)
	}
	if r := run(t, call{args: []string{"--config", cfg, "run", "--", fill}, dir: recent, env: env}); r.code != 0 || strings.TrimSpace(r.stdout) != "filled" {
		t.Fatalf("fill %s: code %d, %q %q", recent, r.code, r.stdout, r.stderr)
	}
	deadline := time.Now().Add(20 * time.Second)
	for strings.Contains(listed(), old) && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if l := listed(); strings.Contains(l, old) || !strings.Contains(l, recent) {
		t.Errorf("after the second run: %s; want %s pruned and %s kept", l, old, recent)
	}
	settled()
	run(t, call{args: []string{"cache", "rm", recent}, env: env})
}
