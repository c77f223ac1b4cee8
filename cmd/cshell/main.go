// Command cshell runs shell commands in rootless sandboxes: in the
// foreground, or in the background for agents and CI pipelines.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cshell/cshell/container"
	"github.com/cshell/cshell/netrelay"
	"github.com/cshell/cshell/policy"
	"github.com/cshell/cshell/shells"
)

// Exit codes of docs/cli.md.
const (
	exitFailed = 1
	exitUsage  = 2
	exitCshell = 125 // run: cshell failed before the command ran
)

// exitError carries an exit code to main; silent ones print nothing (the
// command's own exit code, say).
type exitError struct {
	code   int
	err    error
	silent bool
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit code %d", e.code)
	}
	return e.err.Error()
}
func (e *exitError) Unwrap() error { return e.err }

func usageError(format string, a ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, a...)}
}

// stateDirPath is the state dir the flags and environment name.
func (g *globals) stateDirPath() string {
	home, _ := homes()
	return shells.StateDir(g.stateDir, home)
}

// manager opens the state dir the flags name.
func (g *globals) manager() (*shells.Manager, error) {
	m, err := shells.Open(g.stateDirPath(), g.log)
	if err != nil {
		return nil, err
	}
	m.Warn = func(s string) { fmt.Fprintf(g.stderr, "cshell: %s\n", s) }
	for _, n := range m.Notes {
		m.Warn(n)
	}
	return m, nil
}

// printJSON writes v as one JSON document on stdout.
func (g *globals) printJSON(v any) error {
	return json.NewEncoder(g.stdout).Encode(v)
}

// globals are the flags every subcommand takes.
type globals struct {
	json     bool
	stateDir string
	config   string
	log      *slog.Logger
	stdout   io.Writer
	stderr   io.Writer
}

func main() {
	container.MaybeInit() // libcontainer's init and the container's PID 1 never return
	if len(os.Args) > 1 && os.Args[1] == shells.SuperviseArg {
		os.Exit(shells.Supervise(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == shells.PruneArg {
		os.Exit(shells.PruneCaches(os.Args[2:]))
	}
	// No signal ends the context here: a foreground run passes signals on
	// to its command, and serve catches its own.
	os.Exit(execute(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

func execute(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	g := &globals{stdout: stdout, stderr: stderr}
	g.log = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: logLevel()})).With("role", "cli")
	root := newRootCmd(g)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	code, msg := classify(err)
	if msg != "" {
		fmt.Fprintf(stderr, "cshell: %s\n", msg)
	}
	return code
}

// classify maps an error to its exit code and the sentence to print. It
// branches on sentinels (errors.Is), whose errors carry the whole
// sentence; the one exception is cobra's own messages about unknown
// commands and flags, which come as plain text.
func classify(err error) (int, string) {
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.silent {
			return ee.code, ""
		}
		return ee.code, ee.Error()
	}
	msg := err.Error()
	switch {
	case errors.Is(err, policy.ErrConfig), errors.Is(err, policy.ErrPath),
		errors.Is(err, shells.ErrUsage), errors.Is(err, container.ErrBadIsolation),
		errors.Is(err, netrelay.ErrBadExpose):
		return exitUsage, msg
	case strings.HasPrefix(msg, "unknown command"):
		// cobra's: its first line, and its suggestions on lines of their own.
		first, rest, _ := strings.Cut(msg, "\n")
		first = strings.TrimSuffix(first, ` for "cshell"`)
		if s := strings.Fields(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(rest), "Did you mean this?"))); len(s) > 0 {
			return exitUsage, fmt.Sprintf("%s; did you mean %s? see cshell --help", first, strings.Join(s, " or "))
		}
		return exitUsage, first + "; see cshell --help"
	case strings.HasPrefix(msg, "unknown flag"), strings.HasPrefix(msg, "unknown shorthand flag"): // cobra's
		return exitUsage, msg + "; see cshell --help"
	case errors.Is(err, shells.ErrNotFound):
		return exitFailed, msg + "; cshell ps --all lists the shells"
	}
	return exitFailed, msg // no such shell, refused, a sandbox that cannot start, …
}

func logLevel() slog.Level {
	if os.Getenv("CSHELL_DEBUG") != "" {
		return slog.LevelDebug
	}
	return slog.LevelWarn
}

func newRootCmd(g *globals) *cobra.Command {
	root := &cobra.Command{
		Use:   "cshell",
		Short: "Run shell commands in rootless sandboxes",
		Long: `cshell runs shell commands in a rootless container: its own user, PID,
mount, network, IPC and UTS namespaces; the host's files read-only except
the working directory; secrets hidden; no network but loopback.`,
		Example: `  cshell run -- make test
  cshell run -w ~/src/app --rw ~/.cache/go-build -- go build ./...
  cshell run --isolation process -- ./script.sh
  cshell doctor`,
		SilenceUsage:  true,
		SilenceErrors: true,
		// cshell --version: "cshell version VERSION (...)". cobra's own
		// printer, not a template: a custom template brings text/template,
		// which keeps every method alive in the binary (3 MB more).
		Version: strings.TrimPrefix(readBuildInfo().String(), "cshell "),
	}
	root.PersistentFlags().BoolVar(&g.json, "json", false, "machine-readable output on stdout")
	root.PersistentFlags().StringVar(&g.stateDir, "state-dir", "", "where shells are recorded (default $CSHELL_STATE_DIR, $XDG_STATE_HOME/cshell or ~/.local/state/cshell)")
	root.PersistentFlags().StringVar(&g.config, "config", "", "global config file (default $XDG_CONFIG_HOME/cshell/config.json or ~/.config/cshell/config.json)")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		msg := err.Error()
		if i := strings.Index(msg, ": strconv.Parse"); i >= 0 { // a number flag given a word
			if strings.Contains(msg[i:], "out of range") {
				msg = msg[:i] + ": out of range"
			} else {
				msg = msg[:i] + ": not a number"
			}
		}
		return usageError("%s; see %s --help", msg, c.CommandPath())
	})
	root.AddCommand(newRunCmd(g), newOutputCmd(g), newKillCmd(g), newPsCmd(g), newLogsCmd(g),
		newWaitCmd(g), newWaitReadyCmd(g), newCleanCmd(g), newCacheCmd(g), newEventsCmd(g), newAllowCmd(g), newServeCmd(g), newDoctorCmd(g), newSpecCmd(g), newVersionCmd(g))
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() == "completion" {
			c.Example = "  cshell completion bash > /etc/bash_completion.d/cshell\n  cshell completion zsh > \"${fpath[1]}/_cshell\"\n  cshell completion fish > ~/.config/fish/completions/cshell.fish"
		}
	}
	for _, extra := range extraCommands {
		root.AddCommand(extra(root))
	}
	return root
}

// extraCommands are added by files built with tags (gendocs.go).
var extraCommands []func(root *cobra.Command) *cobra.Command
