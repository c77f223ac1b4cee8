package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cshell/cshell/shells"
)

func newAllowCmd(g *globals) *cobra.Command {
	var list, revoke, revokeCred, restoreCred bool
	cmd := &cobra.Command{
		Use:   "allow [--session S] PATTERN... | --list | --revoke PATTERN... | --revoke-credential NAME...",
		Short: "Let the shells of a session reach more hosts, while they run",
		Long: `Grant host patterns (as --allow-host takes them) to every shell of a
session ($CSHELL_SESSION, else default; or --session): running shells,
foreground and background, reach them from their next connection on, and
so do later ones. network.deny still wins, and a project's .cshell.json
can turn grants off (network.allowGrants: false). --revoke takes a grant
back for later connections; --list shows the grants.

--revoke-credential NAME takes a credential (--credential NAME@HOST) back
from every shell of the session, running and later ones: from its next
request on, the shell's proxy refuses to add it (and records the refusal)
until --restore-credential NAME.`,
		Example: `  cshell allow registry.npmjs.org
  cshell allow --session agent-7 '*.github.com' api.example.com:443
  cshell allow --list --json
  cshell allow --revoke registry.npmjs.org
  cshell allow --revoke-credential GH_TOKEN`,
		RunE: func(cmd *cobra.Command, args []string) error {
			modes := 0
			for _, b := range []bool{list, revoke, revokeCred, restoreCred} {
				if b {
					modes++
				}
			}
			if modes > 1 {
				return usageError("--list, --revoke, --revoke-credential and --restore-credential do not go together; give one")
			}
			if list && len(args) > 0 {
				return usageError("--list takes no pattern; it lists every grant of the session")
			}
			if !list && !revokeCred && !restoreCred && len(args) == 0 {
				return usageError("cshell allow needs a host pattern (or --list): for example cshell allow registry.npmjs.org")
			}
			s := session(cmd)
			if err := shells.CheckSession(s); err != nil {
				return err
			}
			m, err := g.manager()
			if err != nil {
				return err
			}
			switch {
			case list:
				gs := m.Grants(s)
				if g.json {
					if gs == nil {
						gs = []shells.Grant{}
					}
					return g.printJSON(gs)
				}
				if len(gs) == 0 {
					fmt.Fprintf(g.stdout, "no grants in session %s\n", s)
				}
				for _, gr := range gs {
					if gr.Credential != "" {
						fmt.Fprintf(g.stdout, "revoked credential %s\n", gr.Credential)
						continue
					}
					what := "allowed"
					if gr.Deny {
						what = "refused"
					}
					line := fmt.Sprintf("%s %s", what, gr.Pattern)
					if gr.Shell != "" {
						line += " (shell " + gr.Shell + " only)"
					}
					if gr.Until != nil {
						line += " until " + gr.Until.Local().Format("15:04:05")
					}
					fmt.Fprintln(g.stdout, line)
				}
				return nil
			case revokeCred, restoreCred:
				change, done := m.RevokeCredentials, "revoked"
				if restoreCred {
					change, done = m.RestoreCredentials, "restored"
				}
				if err := change(s, args); err != nil {
					if errors.Is(err, shells.ErrNotGranted) {
						return &exitError{code: exitFailed, err: err}
					}
					return err
				}
				if g.json {
					return g.printJSON(credentialAnswer{Session: s, Credentials: args, Change: done})
				}
				for _, n := range args {
					fmt.Fprintf(g.stdout, "%s credential %s in session %s\n", done, n, s)
				}
				return nil
			case revoke:
				if err := m.Revoke(s, args); err != nil {
					if errors.Is(err, shells.ErrNotGranted) {
						return &exitError{code: exitFailed, err: err}
					}
					return err
				}
				if g.json {
					return g.printJSON(revokeAnswer{Session: s, Revoked: args})
				}
				fmt.Fprintf(g.stdout, "revoked %d grant(s) in session %s; connections already made stay\n", len(args), s)
				return nil
			}
			kept, err := m.Allow(s, args)
			if err != nil {
				return err
			}
			if g.json {
				return g.printJSON(allowAnswer{Session: s, Allowed: kept})
			}
			for _, p := range kept {
				fmt.Fprintf(g.stdout, "allowed %s in session %s\n", p, s)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&list, "list", false, "list the session's grants")
	cmd.Flags().BoolVar(&revoke, "revoke", false, "take the patterns back")
	cmd.Flags().BoolVar(&revokeCred, "revoke-credential", false, "take the named credentials back from the session's shells")
	cmd.Flags().BoolVar(&restoreCred, "restore-credential", false, "give revoked credentials back")
	cmd.Flags().String("session", "", "the session (default $CSHELL_SESSION, else default)")
	return cmd
}

// credentialAnswer is allow --revoke-credential's (and --restore-credential's) --json.
type credentialAnswer struct {
	Session     string   `json:"session"`
	Credentials []string `json:"credentials"`
	Change      string   `json:"change"` // revoked or restored
}
