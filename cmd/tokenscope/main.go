// Command tokenscope is the production binary: serve, worker, migrate, apikey, import,
// simulate, healthcheck (each file registers its own). It needs an external Temporal
// (TEMPORAL_ADDRESS) and links no Temporal server code; the embedded development stack is
// cmd/tokenscope-dev. The composition root both share is cmd/internal/wire.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"

	"github.com/tokenscope/tokenscope/app/config"
	"github.com/tokenscope/tokenscope/cmd/internal/wire"
)

// command is one subcommand. run receives the arguments after the subcommand's name.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, cfg config.Config, log *slog.Logger, args []string) error
}

var commands = map[string]command{}

// register adds a subcommand; each subcommand's file calls it from init.
func register(c command) { commands[c.name] = c }

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: tokenscope <command> [flags]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-12s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun `tokenscope <command> -h` for a command's flags. Settings come from the environment (see README.md).")
	fmt.Fprintln(w, "The development stack (embedded Temporal and UI) is another binary: `make run` builds and runs bin/tokenscope-dev.")
}

func main() {
	if len(os.Args) < 2 {
		usage(os.Stderr)
		os.Exit(2)
	}
	if os.Args[1] == "-h" || os.Args[1] == "--help" || os.Args[1] == "help" {
		usage(os.Stdout)
		return
	}
	cmd, ok := commands[os.Args[1]]
	if !ok {
		fmt.Fprintf(os.Stderr, "tokenscope: unknown command %q\n\n", os.Args[1])
		usage(os.Stderr)
		os.Exit(2)
	}
	wire.Run("tokenscope "+cmd.name, func(ctx context.Context, cfg config.Config, log *slog.Logger) error {
		return cmd.run(ctx, cfg, log, os.Args[2:])
	})
}

// usageOf gives a command's flag set its -h text: the command line, what it does, its flags, and
// where its settings come from.
func usageOf(fs *flag.FlagSet, line, what string) {
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "usage: tokenscope %s\n\n%s\n", line, what)
		hasFlags := false
		fs.VisitAll(func(*flag.Flag) { hasFlags = true })
		if hasFlags {
			fmt.Fprintln(w, "\nflags:")
			fs.PrintDefaults()
		}
		fmt.Fprintln(w, "\nEvery other setting comes from the environment: README.md, \"Configuration\".")
	}
}
