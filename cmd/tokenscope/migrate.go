package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"

	"github.com/tokenscope/tokenscope/app/config"
	"github.com/tokenscope/tokenscope/cmd/internal/wire"
)

func init() {
	register(command{name: "migrate", summary: "create the database if missing and apply migrations", run: runMigrate})
}

func runMigrate(ctx context.Context, cfg config.Config, log *slog.Logger, args []string) error {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	usageOf(fs, "migrate", "Creates the database of DATABASE_URL if it is missing and applies the migrations.")
	if err := fs.Parse(args); err != nil {
		return err
	}
	pool, err := wire.OpenDatabase(ctx, cfg, log, true)
	if err != nil {
		return err
	}
	pool.Close()
	fmt.Println("database is up to date")
	return nil
}
