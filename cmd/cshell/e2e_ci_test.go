//go:build e2e

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// docsDir finds docs/: CSHELL_DOCS_DIR (hack/test.sh copies it where the
// unprivileged run can read it), else the source tree this test was built
// from.
func docsDir(t *testing.T) string {
	t.Helper()
	if d := os.Getenv("CSHELL_DOCS_DIR"); d != "" {
		return d
	}
	_, file, _, _ := runtime.Caller(0)
	d := filepath.Join(filepath.Dir(file), "..", "..", "docs")
	if _, err := os.Stat(filepath.Join(d, "ci.md")); err != nil {
		t.Fatalf("docs/ci.md not found (set CSHELL_DOCS_DIR): %v", err)
	}
	return d
}

// recipe returns the yaml block after "<!-- recipe: NAME -->" in ci.md.
func recipe(t *testing.T, doc, name string) string {
	t.Helper()
	m := regexp.MustCompile("(?s)<!-- recipe: " + name + " -->\\s*```yaml\\n(.*?)\\n```").FindStringSubmatch(doc)
	if m == nil {
		t.Fatalf("docs/ci.md has no %s recipe", name)
	}
	return m[1]
}

// githubSteps are the commands of the workflow's run steps, in order,
// but for the install step; each with whether it runs only on failure.
func githubSteps(t *testing.T, y string) (steps []string, onFailure []bool) {
	lines := strings.Split(y, "\n")
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(l, "- name: ") && !strings.HasPrefix(l, "- uses: ") {
			continue
		}
		name := strings.TrimPrefix(l, "- name: ")
		var cmd []string
		failure := false
		for j := i + 1; j < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[j]), "- "); j++ {
			s := strings.TrimSpace(lines[j])
			switch {
			case s == "if: failure()":
				failure = true
			case s == "run: |":
				indent := len(lines[j+1]) - len(strings.TrimLeft(lines[j+1], " "))
				for k := j + 1; k < len(lines) && len(lines[k])-len(strings.TrimLeft(lines[k], " ")) >= indent; k++ {
					cmd = append(cmd, strings.TrimSpace(lines[k]))
					j = k
				}
			case strings.HasPrefix(s, "run: "):
				cmd = append(cmd, strings.TrimPrefix(s, "run: "))
			}
		}
		if len(cmd) > 0 && !strings.HasPrefix(name, "Install") {
			steps, onFailure = append(steps, strings.Join(cmd, "\n")), append(onFailure, failure)
		}
	}
	if len(steps) == 0 {
		t.Fatal("no run steps in the GitHub recipe")
	}
	return steps, onFailure
}

// gitlabSection lists the commands of one section (script, after_script),
// leaving out those that follow an "# Install" comment.
func gitlabSection(y, section string) []string {
	var cmds []string
	in, skip := false, false
	for _, l := range strings.Split(y, "\n") {
		s := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(l, "  ") && !strings.HasPrefix(l, "    ") && strings.HasSuffix(s, ":"):
			in = s == section+":"
		case in && s == "# Install":
			skip = true
		case in && strings.HasPrefix(s, "- "):
			if !skip {
				cmds = append(cmds, strings.TrimPrefix(s, "- "))
			}
			skip = false
		}
	}
	return cmds
}

// TestCIRecipes runs docs/ci.md's commands in a project whose dev server
// listens on 5173 and whose tests fetch from it.
func TestCIRecipes(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(docsDir(t), "ci.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	if _, err := exec.LookPath("npm"); err != nil {
		t.Fatalf("npm is needed (hack/test.sh installs it): %v", err)
	}
	bin := t.TempDir()
	if err := os.Symlink(cshellBin, filepath.Join(bin, "cshell")); err != nil {
		t.Fatal(err)
	}
	project := func(t *testing.T) (dir string, env []string) {
		dir = t.TempDir()
		writeFile(t, filepath.Join(dir, "package.json"), `{"name":"app","version":"1.0.0","private":true,"scripts":{
  "dev": "echo served-by-the-dev-server > index.html && exec python3 -m http.server 5173 --bind 127.0.0.1",
  "test": "curl -fsS http://127.0.0.1:5173/index.html && echo tests-passed"}}`)
		state := t.TempDir()
		return dir, append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "CSHELL_STATE_DIR="+state, "npm_config_update_notifier=false")
	}
	sh := func(t *testing.T, dir string, env []string, cmd string) (string, error) {
		c := exec.Command("bash", "-e", "-c", cmd)
		c.Dir, c.Env = dir, env
		out, err := c.CombinedOutput()
		t.Logf("$ %s\n%s", cmd, out)
		return string(out), err
	}
	t.Run("github", func(t *testing.T) {
		steps, onFailure := githubSteps(t, recipe(t, doc, "github"))
		dir, env := project(t)
		var all strings.Builder
		failed := false
		for i, s := range steps {
			if onFailure[i] && !failed {
				continue
			}
			out, err := sh(t, dir, env, s)
			all.WriteString(out)
			if err != nil {
				t.Errorf("step %q: %v", s, err)
				failed = true
			}
		}
		checkRecipeRan(t, all.String(), dir, env, sh)
	})
	t.Run("gitlab", func(t *testing.T) {
		y := recipe(t, doc, "gitlab")
		dir, env := project(t)
		var all strings.Builder
		script := gitlabSection(y, "script")
		if len(script) == 0 || len(gitlabSection(y, "after_script")) == 0 {
			t.Fatalf("no script or after_script in the GitLab recipe:\n%s", y)
		}
		out, err := sh(t, dir, env, strings.Join(script, "\n"))
		all.WriteString(out)
		if err != nil {
			t.Errorf("script: %v", err)
		}
		for _, c := range gitlabSection(y, "after_script") {
			out, err := sh(t, dir, env, c) // each in a shell of its own, as GitLab does
			all.WriteString(out)
			if err != nil {
				t.Errorf("after_script %q: %v", c, err)
			}
		}
		checkRecipeRan(t, all.String(), dir, env, sh)
	})
}

func checkRecipeRan(t *testing.T, out, dir string, env []string, sh func(*testing.T, string, []string, string) (string, error)) {
	t.Helper()
	for _, want := range []string{"served-by-the-dev-server", "tests-passed", "killed"} {
		if !strings.Contains(out, want) {
			t.Errorf("the recipe's output lacks %q", want)
		}
	}
	if ps, _ := sh(t, dir, env, "cshell ps"); strings.Contains(ps, "running") {
		t.Errorf("a shell still runs after the recipe: %s", ps)
	}
}
