package main

import (
	"errors"
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/cshell/cshell/cache"
	"github.com/cshell/cshell/internal/escape"
	"github.com/cshell/cshell/policy"
)

func newCacheCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cache [ls|rm DIR...|prune]",
		Short: "List and remove the package caches shells keep per working directory",
		Long: `Container shells keep the caches of package managers and build tools
(~/.npm, ~/.cache, ~/go/pkg, ~/.cargo/registry, ~/.gradle, ~/.m2 and
more) per working directory, in cshell's cache folder
($CSHELL_CACHE_DIR, else $XDG_CACHE_HOME/cshell, else ~/.cache/cshell): a
second shell in the same directory finds what the first one downloaded,
and no shell writes your own cache folders. They are kept within
caches.maxBytes (default 10g) for all working directories together, the
least recently used going first.

cshell cache (or cache ls) lists them with their sizes; cache rm DIR
removes the caches of a working directory (or of the key ls shows); cache
prune removes every one no running shell uses.`,
		Example: `  cshell cache
  cshell cache rm ~/src/app
  cshell cache prune`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return cacheList(g) },
	}
	cmd.AddCommand(&cobra.Command{
		Use:     "ls",
		Short:   "List the caches of each working directory, with their sizes",
		Example: "  cshell cache ls\n  cshell cache ls --json",
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, args []string) error { return cacheList(g) },
	}, &cobra.Command{
		Use:     "rm DIR...",
		Short:   "Remove the caches of working directories (or of keys cache ls shows)",
		Example: "  cshell cache rm .\n  cshell cache rm /home/u/src/app 3f2a9c0d11e4b5a6",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError("cshell cache rm needs a working directory (or a key cshell cache ls shows); see cshell cache rm --help")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return cacheRemove(g, args) },
	}, &cobra.Command{
		Use:     "prune",
		Short:   "Remove the caches no running shell uses",
		Example: "  cshell cache prune",
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, args []string) error { return cachePrune(g) },
	})
	return cmd
}

// openCaches opens the cache folder this user's shells use.
func openCaches() (*cache.Store, error) {
	home, _ := homes()
	root := cache.Root(home)
	if root == "" {
		return nil, errors.New("there is no cache folder: $HOME is not set; set CSHELL_CACHE_DIR")
	}
	return cache.Open(root)
}

func cacheList(g *globals) error {
	s, err := openCaches()
	if err != nil {
		return err
	}
	defer s.Close()
	list, err := s.List(true)
	if err != nil {
		return fmt.Errorf("list the caches in %s: %w", s.Path(), err)
	}
	if g.json {
		if list == nil {
			list = []cache.Entry{}
		}
		return g.printJSON(list)
	}
	if len(list) == 0 {
		fmt.Fprintf(g.stdout, "no caches yet in %s\n", s.Path())
		return nil
	}
	tw := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WORKDIR\tSIZE\tLAST USED\tIN USE\tKEY")
	var total int64
	for _, e := range list {
		size := policy.FormatSize(e.Bytes)
		if e.Partial {
			size = "at least " + size
		}
		inUse := "no"
		if e.InUse {
			inUse = "yes"
		}
		workdir := sanitizedPath(e.Workdir)
		if _, err := os.Stat(e.Workdir); err != nil {
			workdir += " (gone)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", workdir, size, ago(e.LastUsed), inUse, e.Key)
		total += e.Bytes
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(g.stdout, "%s in %s\n", policy.FormatSize(total), s.Path())
	return nil
}

func cacheRemove(g *globals, dirs []string) error {
	s, err := openCaches()
	if err != nil {
		return err
	}
	defer s.Close()
	var failed error
	var removed []string
	for _, d := range dirs {
		key, err := s.Find(d)
		if err == nil {
			err = s.Remove(key)
		}
		switch {
		case errors.Is(err, cache.ErrNotFound):
			failed = fmt.Errorf("no caches for %s; cshell cache ls lists them", sanitizedPath(d))
		case errors.Is(err, cache.ErrInUse):
			failed = fmt.Errorf("the caches of %s are in use by a running shell; stop it first (cshell ps)", sanitizedPath(d))
		case err != nil:
			failed = fmt.Errorf("remove the caches of %s: %w", sanitizedPath(d), err)
		default:
			removed = append(removed, d)
			if !g.json {
				fmt.Fprintf(g.stdout, "removed the caches of %s\n", sanitizedPath(d))
			}
			continue
		}
		fmt.Fprintf(g.stderr, "cshell: %s\n", failed)
	}
	if g.json {
		if removed == nil {
			removed = []string{}
		}
		_ = g.printJSON(map[string][]string{"removed": removed})
	}
	if failed != nil {
		return &exitError{code: exitFailed, err: failed, silent: true}
	}
	return nil
}

func cachePrune(g *globals) error {
	s, err := openCaches()
	if err != nil {
		return err
	}
	defer s.Close()
	removed, err := s.Prune(0)
	var freed int64
	for _, e := range removed {
		freed += e.Bytes
	}
	if g.json {
		_ = g.printJSON(pruneAnswer{Removed: len(removed), Bytes: freed})
	} else {
		fmt.Fprintf(g.stdout, "removed the caches of %d working director%s (%s)\n", len(removed), plural(len(removed), "y", "ies"), policy.FormatSize(freed))
	}
	if err != nil {
		return fmt.Errorf("prune the caches in %s: %w", s.Path(), err)
	}
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// ago says how long ago t was, as people read it.
func ago(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	d := time.Since(t).Round(time.Second)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	}
	return fmt.Sprintf("%dd ago", int(d.Hours()/24))
}

// sanitizedPath shows a path that a shell may have written (a record's
// working directory) without control characters.
func sanitizedPath(p string) string { return escape.Line(p) }
