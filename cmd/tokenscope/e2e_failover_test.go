package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/ndjson"
	"github.com/tokenscope/tokenscope/adapters/postgres"
	"github.com/tokenscope/tokenscope/app/config"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/chainevent"
	"github.com/tokenscope/tokenscope/domain/trade"
	"github.com/tokenscope/tokenscope/internal/pgcluster"
)

// failoverLoad is what the load of TestFailoverUnderLoad saw.
type failoverLoad struct {
	mu         sync.Mutex
	statuses   map[string]map[int]int // request kind → status → count
	no503Retry int                    // 503s without Retry-After
	transport  []string               // requests that got no HTTP answer at all
	ackedKYT   []string               // externalIds answered 200
	ackedTrade []string               // signatures of trades in batches answered 200
	// firstWrite is when the first write that started after the kill succeeded.
	firstWrite time.Time
}

func (l *failoverLoad) record(kind string, start time.Time, killed *atomic.Int64, r *http.Response, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		l.transport = append(l.transport, kind+": "+err.Error())
		return
	}
	if l.statuses[kind] == nil {
		l.statuses[kind] = map[int]int{}
	}
	l.statuses[kind][r.StatusCode]++
	if r.StatusCode == 503 && r.Header.Get("Retry-After") == "" {
		l.no503Retry++
	}
	if k := killed.Load(); kind != "read" && r.StatusCode == 200 && k != 0 && start.UnixNano() > k && l.firstWrite.IsZero() {
		l.firstWrite = time.Now()
	}
}

// TestFailoverUnderLoad runs KYT registrations, ingest batches and reads against a primary
// with a synchronous streaming standby (the reads go to the standby), kills the primary's
// postmaster with SIGKILL, promotes the standby and counts: acknowledged registrations and
// trades missing on the new primary (0), answers 500 (0), and how long writes failed.
func TestFailoverUnderLoad(t *testing.T) {
	ctx := context.Background()
	primary := pgcluster.NewPrimary(t, pgcluster.Options{SyncStandbys: "*"})
	standby := primary.NewStandby("standby1")
	require.NoError(t, postgres.EnsureDatabase(ctx, primary.URL("tokenscope")))
	multiHost := fmt.Sprintf("postgres://postgres@127.0.0.1:%d,127.0.0.1:%d/tokenscope?sslmode=disable&target_session_attrs=read-write&connect_timeout=2",
		primary.Port, standby.Port)
	pool, err := postgres.Open(ctx, multiHost, 4)
	require.NoError(t, err)
	_, err = postgres.Migrate(ctx, pool)
	require.NoError(t, err)
	pool.Close()

	e := newEnvWithClient(t, sharedTemporal().GetDefaultClient(), true, fastWorkflows, func(c *config.Config) {
		c.DatabaseURL = multiHost
		c.DatabaseReplicaURLs = []string{standby.URL("tokenscope")}
		c.RequestTimeout = 5 * time.Second
	})

	load := &failoverLoad{statuses: map[string]map[int]int{}}
	var killed atomic.Int64
	var seq atomic.Int64
	stop := make(chan struct{})
	client := &http.Client{Timeout: 20 * time.Second}
	send := func(method, path, ctype, body string) (*http.Response, error) {
		req, err := http.NewRequest(method, e.base+path, strings.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer "+e.key)
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		res, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		return res, nil
	}
	var wg sync.WaitGroup
	loop := func(kind string, one func() (*http.Response, func(*http.Response), error)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				start := time.Now()
				res, ack, err := one()
				load.record(kind, start, &killed, res, err)
				if err == nil {
					if res.StatusCode == 200 && ack != nil {
						ack(res)
					}
					res.Body.Close()
				} else {
					time.Sleep(10 * time.Millisecond)
				}
			}
		}()
	}
	for range 2 {
		loop("kyt", func() (*http.Response, func(*http.Response), error) {
			n := seq.Add(1)
			body := fmt.Sprintf(`{"address":%q,"asset":"SOL","assetAmount":"1.%d","attemptTimestamp":"2024-01-15T10:30:00.000Z","network":"Solana","assetPrice":"3"}`, solAddr, n)
			res, err := send("POST", "/v2/kyt/withdrawal", "application/json", body)
			return res, func(res *http.Response) {
				var o struct {
					ExternalID string `json:"externalId"`
				}
				if decodeJSON(res, &o) == nil && o.ExternalID != "" {
					load.mu.Lock()
					load.ackedKYT = append(load.ackedKYT, o.ExternalID)
					load.mu.Unlock()
				}
			}, err
		})
		loop("ingest", func() (*http.Response, func(*http.Response), error) {
			var b strings.Builder
			var sigs []string
			for range 5 {
				n := seq.Add(1)
				sig := fmt.Sprintf("FailoverSig%d", n)
				sigs = append(sigs, sig)
				line, err := ndjson.Marshal(chainevent.Trade{Trade: trade.Trade{Chain: chain.Sol, TransactionSignature: sig,
					BlockHeight: n, BlockTimestamp: 1_717_000_000_000 + n, Wallet: "FailoverWallet", PoolAddress: "FailoverPool",
					Side: trade.Buy, Status: trade.Succeeded, TokenAddress: "FailoverTok", TokenAmount: dd("10"), TokenAmountInUSD: dd("15"),
					TokenPriceInUSD: dd("1.5"), SideTokenAddress: "So11111111111111111111111111111111111111112"}})
				if err != nil {
					return nil, nil, err
				}
				b.Write(line)
				b.WriteByte('\n')
			}
			res, err := send("POST", "/v2/ingest", "application/x-ndjson", b.String())
			return res, func(*http.Response) {
				load.mu.Lock()
				load.ackedTrade = append(load.ackedTrade, sigs...)
				load.mu.Unlock()
			}, err
		})
		loop("read", func() (*http.Response, func(*http.Response), error) {
			path := "/v2/trade/sol?tokenAddress=FailoverTok&limit=5"
			if seq.Load()%2 == 0 {
				path = "/v2/token/sol/multi?tokenAddresses=FailoverTok"
			}
			res, err := send("GET", path, "", "")
			return res, nil, err
		})
	}

	acked := func() (int, int) {
		load.mu.Lock()
		defer load.mu.Unlock()
		return len(load.ackedKYT), len(load.ackedTrade)
	}
	eventuallyFailover(t, "writes acknowledged before the kill", func() bool { k, tr := acked(); return k >= 10 && tr >= 50 })
	// Before the kill the standby serves reads, and /readyz names it.
	standbyName := fmt.Sprintf("127.0.0.1:%d/tokenscope", standby.Port)
	ready := e.doURL(t, "GET", e.base+"/readyz", nil)
	require.Equal(t, 200, ready.Status, "%s", ready.Body)
	assert.Contains(t, string(ready.Body), `"postgres replica `+standbyName+`":"up"`)
	metrics := string(e.doURL(t, "GET", e.admin+"/metrics", nil).Body)
	assert.Regexp(t, `tokenscope_db_reads_total\{database="`+regexp.QuoteMeta(standbyName)+`"\} [1-9]`, metrics,
		"reads were served by the standby")
	killAt := time.Now()
	killed.Store(killAt.UnixNano())
	primary.Kill()
	time.Sleep(time.Second) // the failure is noticed before anyone promotes
	standby.Promote()
	promotedAt := time.Now()
	eventuallyFailover(t, "a write succeeds after the promotion", func() bool {
		load.mu.Lock()
		defer load.mu.Unlock()
		return !load.firstWrite.IsZero()
	})
	k0, t0 := acked()
	eventuallyFailover(t, "more writes acknowledged on the new primary", func() bool { k, tr := acked(); return k >= k0+10 && tr >= t0+50 })
	close(stop)
	wg.Wait()

	conn := standby.Conn("tokenscope")
	// Every registration's workflow finishes here, against this test's database: none is left
	// on the package's shared task queue for a later test's worker (and database) to run.
	eventuallyFailover(t, "every registration processed", func() bool {
		var pending int
		require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM kyt_registrations WHERE status = 'pending'`).Scan(&pending))
		return pending == 0
	})
	var missingKYT, missingTrades int
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM unnest($1::uuid[]) AS id
		WHERE NOT EXISTS (SELECT 1 FROM kyt_registrations r WHERE r.external_id = id)`, load.ackedKYT).Scan(&missingKYT))
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM unnest($1::text[]) AS s
		WHERE NOT EXISTS (SELECT 1 FROM trades x WHERE x.chain = 'sol' AND x.tx_signature = s)`, load.ackedTrade).Scan(&missingTrades))
	fives := 0
	for _, byStatus := range load.statuses {
		for st, n := range byStatus {
			if st >= 500 && st != 503 {
				fives += n
			}
		}
	}
	t.Logf("failover: %d KYT registrations and %d trades acknowledged; missing on the new primary: %d registrations, %d trades",
		len(load.ackedKYT), len(load.ackedTrade), missingKYT, missingTrades)
	t.Logf("failover: statuses by request kind %v; 503 without Retry-After %d; no HTTP answer %d",
		load.statuses, load.no503Retry, len(load.transport))
	t.Logf("failover: kill → promote %.2fs, promote → first write acknowledged %.2fs, kill → first write acknowledged %.2fs",
		promotedAt.Sub(killAt).Seconds(), load.firstWrite.Sub(promotedAt).Seconds(), load.firstWrite.Sub(killAt).Seconds())
	assert.Zero(t, missingKYT, "every KYT registration answered 200 is on the new primary")
	assert.Zero(t, missingTrades, "every trade in a batch answered 200 is on the new primary")
	assert.Zero(t, fives, "no answer 5xx other than 503: %v", load.statuses)
	assert.Zero(t, load.no503Retry, "every 503 carries Retry-After")
	assert.Empty(t, load.transport, "every request got an HTTP answer")
	assert.Positive(t, load.statuses["kyt"][503]+load.statuses["ingest"][503], "the outage was seen (503s), else the test killed nothing")
}

// eventuallyFailover waits up to two minutes for cond (a broken failover, not a slow one).
func eventuallyFailover(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within two minutes: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func decodeJSON(res *http.Response, v any) error { return json.NewDecoder(res.Body).Decode(v) }
