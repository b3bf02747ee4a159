package main

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/ndjson"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/chainevent"
)

// TestPostedTradesShowInMultiDetail: a trade POSTed to /v2/ingest is counted in the token's 1m
// window of multi-detail as soon as the POST has answered, on every chain, also when the token's
// detail was read (and kept) before.
func TestPostedTradesShowInMultiDetail(t *testing.T) {
	e := newEnv(t)
	// The v1 path spells eth "ethereum".
	for c, v1 := range map[chain.Chain]string{chain.Sol: "sol", chain.Eth: "ethereum"} {
		t.Run(string(c), func(t *testing.T) {
			tok := "FreshTok" + string(c)
			created := edgeToken(tok)
			created.Token.Chain = c
			_, err := e.rt.App.Ingest.Ingest(t.Context(), []chainevent.Event{created})
			require.NoError(t, err)
			trades1m := func() string {
				t.Helper()
				for _, do := range []func(*testing.T, string, string, any, ...string) resp{e.do, e.doDex} {
					list, ok := okJSON(t, do(t, "GET", "/v1/token/"+v1+"/multi?tokenAddresses="+url.QueryEscape(tok), nil)).([]any)
					require.True(t, ok)
					require.Len(t, list, 1)
					n := field(field(list[0], "stats"), "trades1m").(json.Number)
					if n.String() != "0" {
						return n.String()
					}
				}
				return "0"
			}
			require.Equal(t, "0", trades1m(), "no trade yet (and the detail is now kept)")
			for i, sig := range []string{"FreshSig1" + string(c), "FreshSig2" + string(c)} {
				tr := mktTrade(sig, "FreshW", tok, "FreshPool", "BUY", "10", "2", time.Now(), int64(1000+i))
				tr.Chain = c
				b, err := ndjson.Marshal(tr)
				require.NoError(t, err)
				r := e.do(t, "POST", "/v2/ingest", string(b)+"\n", "Content-Type", "application/x-ndjson")
				require.Equal(t, 200, r.Status, "%s", r.Body)
				require.Equal(t, []string{"1", "2"}[i], trades1m(), "counted once the POST answered")
			}
		})
	}
}

// TestPostWithWaitCommit: POST /v2/ingest?wait=commit answers once the trades are committed: the
// trade list serves them at once, and the token's 1m window counts them after the service's
// background flush, within a few seconds. Any other wait is a 400 naming the parameter.
func TestPostWithWaitCommit(t *testing.T) {
	e := newEnv(t)
	const tok = "CommitTok"
	_, err := e.rt.App.Ingest.Ingest(t.Context(), []chainevent.Event{edgeToken(tok)})
	require.NoError(t, err)

	r := e.do(t, "POST", "/v2/ingest?wait=later", "", "Content-Type", "application/x-ndjson")
	badRequest(t, r, "wait")
	assert.Contains(t, string(r.Body), "commit", "the error names the allowed values")

	var body strings.Builder
	for i, sig := range []string{"CommitSig1", "CommitSig2", "CommitSig3"} {
		b, err := ndjson.Marshal(mktTrade(sig, "CommitW", tok, "CommitPool", "BUY", "10", "2", time.Now(), int64(1000+i)))
		require.NoError(t, err)
		body.WriteString(string(b) + "\n")
	}
	r = e.do(t, "POST", "/v2/ingest?wait=commit", body.String(), "Content-Type", "application/x-ndjson")
	require.Equal(t, 200, r.Status, "%s", r.Body)
	assert.Equal(t, json.Number("3"), field(okJSON(t, r), "trades"))
	list := okJSON(t, e.do(t, "GET", "/v2/trade/sol?tokenAddress="+tok+"&limit=10", nil))
	assert.Len(t, field(list, "data"), 3, "the trades are served once the POST answered")

	deadline := time.Now().Add(15 * time.Second)
	for {
		got, ok := okJSON(t, e.do(t, "GET", "/v1/token/sol/multi?tokenAddresses="+tok, nil)).([]any)
		require.True(t, ok)
		require.Len(t, got, 1)
		if n := field(field(got[0], "stats"), "trades1m").(json.Number); n.String() == "3" {
			break
		}
		require.True(t, time.Now().Before(deadline), "the background flush derived the trades within 15 s")
		time.Sleep(50 * time.Millisecond)
	}
}
