//go:build gendocs

package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// With the gendocs tag the binary gains a hidden command that writes the
// man pages (section 1) and the shell completions from the command tree,
// so that they always say what the commands say. hack/gendocs.sh runs it;
// the cshell that users run does not carry it (nor go-md2man).
func init() { extraCommands = append(extraCommands, newGendocsCmd) }

func newGendocsCmd(root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:    "__gendocs DIR",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			man, comp := filepath.Join(args[0], "man"), filepath.Join(args[0], "completions")
			for _, d := range []string{man, comp} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					return err
				}
			}
			root.DisableAutoGenTag = true
			if err := doc.GenManTree(root, &doc.GenManHeader{Title: "CSHELL", Section: "1", Source: "cshell " + readBuildInfo().Version}, man); err != nil {
				return fmt.Errorf("man pages: %w", err)
			}
			for name, gen := range map[string]func(string) error{
				"cshell.bash": func(p string) error { return root.GenBashCompletionFileV2(p, true) },
				"_cshell":     root.GenZshCompletionFile,
				"cshell.fish": func(p string) error { return root.GenFishCompletionFile(p, true) },
			} {
				if err := gen(filepath.Join(comp, name)); err != nil {
					return fmt.Errorf("completion %s: %w", name, err)
				}
			}
			return nil
		},
	}
}
