package wire

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/tokenscope/tokenscope/app/config"
	"github.com/tokenscope/tokenscope/domain/fault"
)

// Run is what both binaries' main functions end with: it loads the configuration from the
// environment, builds the logger, runs run until it returns or SIGINT/SIGTERM cancels its
// context, and exits. prog prefixes error messages ("tokenscope serve"). Exit codes: 0 on
// success and for help asked for (-h, --help: flag.ErrHelp, after the flag set printed it), 2 for
// a usage error or invalid input (a fault.KindInvalid error), 1 otherwise.
func Run(prog string, run func(ctx context.Context, cfg config.Config, log *slog.Logger) error) {
	cfg, err := config.Load()
	if err != nil {
		fmt.Fprintln(os.Stderr, prog+":", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	log := NewLogger(cfg)
	err = run(ctx, cfg, log)
	signalled := ctx.Err() != nil
	stop()
	if err == nil {
		if signalled {
			// A service stopped by Ctrl-C or SIGTERM: its last line, once everything is closed.
			log.Info(prog + " stopped")
		}
		return
	}
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if fe, ok := fault.As(err); ok && fe.Kind == fault.KindInvalid {
		fmt.Fprintln(os.Stderr, prog+":", fe.Message)
		os.Exit(2)
	}
	fmt.Fprintln(os.Stderr, prog+":", err)
	os.Exit(1)
}

// NewLogger is the process logger LOG_LEVEL and LOG_FORMAT ask for, on stderr.
func NewLogger(cfg config.Config) *slog.Logger {
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

// TuneGC sets the collector's target heap growth between collections to percent (what GOGC
// sets) and a soft memory limit of limit bytes (GOMEMLIMIT), each unless the environment sets it.
// Long-running processes (ServiceGC) and imports (cmd/tokenscope) pick their own.
func TuneGC(percent int, limit int64) {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(percent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(limit)
	}
}

// ServiceGC is TuneGC for the API and worker processes (serve, worker, tokenscope-dev): the heap
// may grow to 4× its live data between collections (GOGC=300) instead of 2×, under a 1.5 GiB
// soft limit. With the default, the collector's marking took a sixth of the development stack's
// CPU under read and ingest load (its live heap holds the embedded Temporal server), and the same
// 16 readers answered about half as many requests: docs/engine-benchmarks.md, seventh round.
func ServiceGC() { TuneGC(300, 3<<29) }
