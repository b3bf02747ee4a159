package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"

	"github.com/tokenscope/tokenscope/adapters/postgres"
	"github.com/tokenscope/tokenscope/app/config"
	"github.com/tokenscope/tokenscope/cmd/internal/wire"
	"github.com/tokenscope/tokenscope/domain/chain"
)

func init() {
	register(command{name: "chain-resume", summary: "clear a chain follower's deep-reorg halt (optionally rewinding it)", run: runChainResume})
}

// runChainResume clears the halt a reorg deeper than the confirmations left on a chain's
// follower: `tokenscope chain-resume [--from N] eth`. With --from the follower reads again
// from block N+1 (N below the fork), without it from the block after its checkpoint. The
// follower itself starts again with the next worker start (or `temporal workflow start`).
func runChainResume(ctx context.Context, cfg config.Config, log *slog.Logger, args []string) error {
	fs := flag.NewFlagSet("chain-resume", flag.ContinueOnError)
	usageOf(fs, "chain-resume [--from BLOCK] eth|bsc", "Clears a chain follower's deep-reorg halt (README, \"After a deep reorg\"); restart a worker afterwards.")
	from := fs.Int64("from", -1, "move the checkpoint back to this block (the last one to keep); -1: keep it")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("usage: tokenscope chain-resume [--from N] eth|bsc")
	}
	c, err := chain.Parse("chain", fs.Arg(0))
	if err != nil {
		return err
	}
	pool, err := wire.OpenDatabase(ctx, cfg, log, false)
	if err != nil {
		return err
	}
	defer pool.Close()
	var rewind *int64
	if *from >= 0 {
		rewind = from
	}
	ok, err := postgres.NewChainStore(pool).Resume(ctx, c, rewind)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("the %s follower has no checkpoint", c)
	}
	fmt.Printf("%s follower resumed; restart a worker to start it\n", c)
	return nil
}
