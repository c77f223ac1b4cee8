package main

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/cshell/cshell/mcpserver"
	"github.com/cshell/cshell/policy"
	"github.com/cshell/cshell/shells"
)

func newServeCmd(g *globals) *cobra.Command {
	var o runOptions
	cmd := &cobra.Command{
		Use:   "serve [policy flags]",
		Short: "Serve the shells as Model Context Protocol tools over stdio",
		Long: `Speak the Model Context Protocol on stdin and stdout, with the tools bash,
bash_output, kill_shell and list_shells. The policy flags apply to every
tool call. The server's shells form a session of their own (mcp-PID): when
the server ends (stdin closed, a signal, or killed), every shell it started
ends too. With --session NAME its background shells outlive it for
shells.reattachSeconds (default 30): a new server of that session started
meanwhile (an agent host's reload) takes them over, ids, output and tasks.
A background shell that ends by itself is told to the model: as the end of
its task for clients that take MCP tasks (2025-11-25's, or 2026-07-28's
extension), else appended to the next tool result (shells.notify in the
configuration: wake, note or none).

Register it with an agent host, for example:
  {"mcpServers": {"cshell": {"command": "cshell", "args": ["serve", "--allow-host", "registry.npmjs.org"]}}}`,
		Example: `  cshell serve
  cshell serve --session agent-7    # then: cshell allow --session agent-7 registry.npmjs.org
                                    # a reload within 30 s keeps agent-7's shells
  cshell serve -w ~/src/app --allow-host '*.github.com' --hide ~/.config/secret`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ro, err := o.runOptions(cmd, g)
			if err != nil {
				return err
			}
			// Check the policy once, so that bad flags fail now rather than
			// on every tool call.
			if _, err := policy.NewFilesystem(ro.FS); err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			m, err := g.manager()
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
			defer stop()
			sess, _ := cmd.Flags().GetString("session")
			if sess != "" {
				if err := shells.CheckSession(sess); err != nil {
					return err
				}
			}
			return mcpserver.Serve(ctx, m, mcpserver.Options{
				Run:     ro,
				Session: sess,
				Version: readBuildInfo().Version,
				In:      os.Stdin,
				Out:     os.Stdout,
			})
		},
	}
	addPolicyFlags(cmd, &o)
	cmd.Flags().String("session", "", "the session of the server's shells (default mcp-PID), to share with the command line (cshell allow --session, cshell ps)")
	return cmd
}
