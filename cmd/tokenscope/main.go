// Command tokenscope is the one binary of the service and its composition root: the only
// package that builds concrete adapters and hands them to the use cases. Subcommands:
// serve, worker, dev, migrate, apikey, and those other files register.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"

	"github.com/tokenscope/tokenscope/app/config"
	"github.com/tokenscope/tokenscope/domain/fault"
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

func usage() {
	fmt.Fprintln(os.Stderr, "usage: tokenscope <command> [flags]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(os.Stderr, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(os.Stderr, "\nRun `tokenscope <command> -h` for a command's flags. Settings come from the environment (see README.md).")
}

func main() {
	if len(os.Args) < 2 || os.Args[1] == "-h" || os.Args[1] == "--help" || os.Args[1] == "help" {
		usage()
		os.Exit(2)
	}
	cmd, ok := commands[os.Args[1]]
	if !ok {
		fmt.Fprintf(os.Stderr, "tokenscope: unknown command %q\n\n", os.Args[1])
		usage()
		os.Exit(2)
	}
	cfg, err := config.Load()
	if err != nil {
		fmt.Fprintln(os.Stderr, "tokenscope:", err)
		os.Exit(2)
	}
	log := newLogger(cfg)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := cmd.run(ctx, cfg, log, os.Args[2:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(2)
		}
		if fe, ok := fault.As(err); ok && fe.Kind == fault.KindInvalid {
			fmt.Fprintln(os.Stderr, "tokenscope "+cmd.name+":", fe.Message)
			os.Exit(2)
		}
		fmt.Fprintln(os.Stderr, "tokenscope "+cmd.name+":", err)
		os.Exit(1)
	}
}

func newLogger(cfg config.Config) *slog.Logger {
	var level slog.Level
	if err := level.UnmarshalText([]byte(cfg.LogLevel)); err != nil {
		level = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: level}
	if strings.EqualFold(cfg.LogFormat, "text") {
		return slog.New(slog.NewTextHandler(os.Stderr, opts))
	}
	return slog.New(slog.NewJSONHandler(os.Stderr, opts))
}
