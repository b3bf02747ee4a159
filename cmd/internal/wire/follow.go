package wire

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/tokenscope/tokenscope/adapters/evm"
	"github.com/tokenscope/tokenscope/adapters/postgres"
	"github.com/tokenscope/tokenscope/adapters/temporal"
	"github.com/tokenscope/tokenscope/app/ingest"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/dexlog"
	"github.com/tokenscope/tokenscope/ports"
	"github.com/tokenscope/tokenscope/workflows"
)

// registerChainFollow registers the chain follower workflow (always: a worker must be able to
// replay and stop a follower another process started) and its activity with a source per
// configured chain (CHAIN_RPC_ETH, CHAIN_RPC_BSC). A node that cannot be dialled is logged and
// its chain left without a source: its follower's steps fail until a worker that has one runs.
func registerChainFollow(w worker.Registry, rt *Runtime) {
	w.RegisterWorkflowWithOptions(workflows.ChainFollowWorkflow, workflow.RegisterOptions{Name: workflows.ChainFollowWorkflowName})
	sources := map[chain.Chain]ports.ChainSource{}
	for _, f := range rt.Cfg.Followers {
		node, err := evm.Dial(context.Background(), f.RPC)
		if err != nil {
			rt.Log.Error("chain follower without a node", "chain", f.Chain, "err", err)
			continue
		}
		sources[chain.Chain(f.Chain)] = evm.NewSource(node, dexlog.Config{Chain: chain.Chain(f.Chain), Native: f.Native,
			Stables: f.Stables, StablePool: f.StablePool})
	}
	store := postgres.NewIngestStore(rt.Pool)
	ing := ingest.New(store, rt.Clock, 0)
	a := &workflows.ChainActivities{Sources: sources, Checkpoints: postgres.NewChainStore(rt.Pool),
		Ingest: ing.Checkpointed(store), Clock: rt.Clock, Log: rt.Log}
	if rt.Registry != nil {
		// Once per runtime: a process may build more than one worker on it.
		if rt.chainMetrics == nil {
			rt.chainMetrics = evm.NewMetrics(rt.Registry)
			rt.ingestMetrics = newIngestMetrics(rt.Registry)
		}
		a.Monitor = rt.chainMetrics
		ing.WithListener(rt.ingestMetrics)
	}
	w.RegisterActivity(a)
}

// StartChainFollowers starts the follower of every configured chain that is not running.
func StartChainFollowers(ctx context.Context, rt *Runtime) error {
	var errs []error
	for _, f := range rt.Cfg.Followers {
		in := workflows.FollowInput{Chain: chain.Chain(f.Chain), Confirmations: int64(f.Confirmations), StartBlock: f.StartBlock,
			MaxRange: int64(rt.Cfg.ChainLogRange), PollInterval: rt.Cfg.ChainPollInterval}
		if err := temporal.StartChainFollower(ctx, rt.Temporal, in); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// haltedChains is the readiness check of a process that runs followers: down while a follower
// is stopped by a reorg deeper than its confirmations, naming the chain and block.
type haltedChains struct{ store *postgres.ChainStore }

func (h haltedChains) Ping(ctx context.Context) error {
	halted, err := h.store.Halted(ctx)
	if err != nil {
		return err
	}
	if len(halted) == 0 {
		return nil
	}
	parts := make([]string, 0, len(halted))
	for _, c := range halted {
		parts = append(parts, fmt.Sprintf("%s follower stopped at block %d: %s", c.Chain, c.Block, c.Reason))
	}
	return errors.New(strings.Join(parts, "; "))
}
