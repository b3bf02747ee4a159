package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tokenscope/tokenscope/app/config"
	"github.com/tokenscope/tokenscope/cmd/internal/wire"
	"github.com/tokenscope/tokenscope/domain/account"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/ratelimit"
)

func init() {
	register(command{name: "apikey", summary: "create, list or revoke API keys (create|list|revoke)", run: runAPIKey})
}

func runAPIKey(ctx context.Context, cfg config.Config, log *slog.Logger, args []string) error {
	if len(args) == 0 {
		return fault.Invalid("subcommand", "", "use one of create, list, revoke")
	}
	sub, rest := args[0], args[1:]
	if sub == "-h" || sub == "--help" || sub == "help" {
		fmt.Println("usage: tokenscope apikey create|list|revoke [flags]\n\n" +
			"  create --account A [--name N] [--scopes read,kyt,webhook,ingest] [--rate R] [--burst B] [--expires D]\n" +
			"         makes a key and prints it once (scopes default to read)\n" +
			"  list   [--account A]   the keys, their scopes, limits and state, never the key itself\n" +
			"  revoke KEY             ends a key (REST answers 401 and its streams close within 10 s)\n\n" +
			"Run `tokenscope apikey create -h` (list, revoke) for the flags. Reads DATABASE_URL (see README.md).")
		return flag.ErrHelp
	}
	fs := flag.NewFlagSet("apikey "+sub, flag.ContinueOnError)
	accountID := fs.String("account", "", "account the key belongs to (create; filter for list)")
	name := fs.String("name", "", "a label for the key (create)")
	scopes := fs.String("scopes", "read", "comma-separated scopes to grant: read, kyt, webhook, ingest (create; default read only)")
	rate := fs.Int("rate", 0, "this key's rate limit in requests per minute (create; default RATE_LIMIT_PER_MINUTE)")
	burst := fs.Int("burst", -1, "requests a full bucket allows beyond --rate (create; default RATE_LIMIT_BURST)")
	expires := fs.String("expires", "", "when the key ends: a duration (90s, 720h, 30d) or an RFC 3339 time (create; default never)")
	if err := fs.Parse(rest); err != nil {
		return err
	}
	pool, err := wire.OpenDatabase(ctx, cfg, log, true)
	if err != nil {
		return err
	}
	defer pool.Close()
	rt := wire.NewRuntime(cfg, log, pool, nil)
	switch sub {
	case "create":
		if *accountID == "" {
			return fault.Missing("account")
		}
		sc, err := account.ParseScopes("scopes", *scopes)
		if err != nil {
			return err
		}
		limit, err := keyLimit(cfg, *rate, *burst)
		if err != nil {
			return err
		}
		var end *time.Time
		if *expires != "" {
			t, err := account.ParseExpiry("expires", *expires, time.Now())
			if err != nil {
				return err
			}
			end = &t
		}
		full, key, err := rt.App.Keys.CreateLimited(ctx, *accountID, *name, sc, limit, end)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "created key %s for account %s with scopes %s, rate limit %s, %s; it is shown only once:\n",
			key.Prefix, key.AccountID, joinScopes(key.Scopes), showLimit(key.Limit), keyState(key, time.Now()))
		fmt.Println(full)
		return nil
	case "list":
		keys, err := rt.App.Keys.List(ctx, *accountID)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "PREFIX\tACCOUNT\tNAME\tSCOPES\tRATE LIMIT\tCREATED\tSTATE")
		now := time.Now()
		for _, k := range keys {
			state := keyState(k, now)
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.Prefix, k.AccountID, k.Name, joinScopes(k.Scopes), showLimit(k.Limit),
				k.CreatedAt.UTC().Format(time.RFC3339), state)
		}
		return tw.Flush()
	case "revoke":
		if fs.NArg() != 1 {
			return fault.Invalid("key", "", "name exactly one key prefix or id to revoke")
		}
		if err := rt.App.Keys.Revoke(ctx, fs.Arg(0)); err != nil {
			return err
		}
		fmt.Println("revoked", fs.Arg(0))
		return nil
	default:
		return fault.InvalidParam("subcommand", sub, "create", "list", "revoke")
	}
}

// keyLimit is the limit `apikey create` stores: none without --rate or --burst (the key follows
// the default, even when it changes later); a --burst alone keeps the default rate.
func keyLimit(cfg config.Config, rate, burst int) (ratelimit.Limit, error) {
	if rate == 0 && burst < 0 {
		return ratelimit.Limit{}, nil
	}
	if rate == 0 {
		rate = cfg.RateLimitPerMinute
	}
	if burst < 0 {
		burst = cfg.RateLimitBurst
	}
	return ratelimit.New("rate", rate, burst)
}

// keyState is a key's STATE column: active (with its end, if any), revoked or expired.
func keyState(k account.Key, now time.Time) string {
	switch {
	case k.RevokedAt != nil:
		return "revoked " + k.RevokedAt.UTC().Format(time.RFC3339)
	case k.ExpiresAt != nil && !k.Active(now):
		return "expired " + k.ExpiresAt.UTC().Format(time.RFC3339)
	case k.ExpiresAt != nil:
		return "active, expires " + k.ExpiresAt.UTC().Format(time.RFC3339)
	}
	return "active"
}

func showLimit(l ratelimit.Limit) string {
	if l.IsZero() {
		return "default"
	}
	return strconv.Itoa(l.PerMinute) + "/min+" + strconv.Itoa(l.Burst)
}

func joinScopes(s []account.Scope) string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = string(x)
	}
	return strings.Join(out, ",")
}
