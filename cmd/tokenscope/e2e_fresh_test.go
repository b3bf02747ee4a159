package main

import (
	"encoding/json"
	"net/url"
	"testing"
	"time"

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
