package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/domain/account"
)

// TestWebhookURLsEmbeddingIPv4AreRefused: IPv6 forms that carry an IPv4 address (IPv4-compatible
// ::/96, IPv4-translated ::ffff:0:0:0/96, NAT64, 6to4) are refused at creation and at PATCH like
// any other non-public address, and a refused PATCH leaves the endpoint as it was. The env allows
// 127.0.0.0/8, which must not open ::7f00:1 (127.0.0.1 in IPv4-compatible form). Nothing is dialled.
func TestWebhookURLsEmbeddingIPv4AreRefused(t *testing.T) {
	e := newEnv(t)
	key := e.keyFor(t, "wh-guard-v6", account.ScopeWebhook)
	auth := []string{"Authorization", "Bearer " + key}
	rcv := newReceiver(t)
	id := createEndpoint(t, e, key, map[string]any{"url": rcv.srv.URL + "/hook"})

	for _, url := range []string{
		"https://[::169.254.169.254]/latest/meta-data",
		"https://[::a00:1]/",
		"https://[::ffff:0:a9fe:a9fe]/",
		"https://[::ffff:0:a00:1]/",
		"https://[::0.0.0.1]/",
		"https://[::7f00:1]/",
		"https://[64:ff9b::a9fe:a9fe]/",
		"https://[2002:a9fe:a9fe::1]/",
	} {
		t.Run(url, func(t *testing.T) {
			r := e.do(t, "POST", "/v2/webhook/endpoint", map[string]any{"url": url}, auth...)
			require.Equal(t, 400, r.Status, "create: %s", r.Body)
			assert.Equal(t, "url", r.Object(t)["details"].(map[string]any)["parameter"])

			r = e.do(t, "PATCH", "/v2/webhook/endpoint", map[string]any{"endpointId": id, "url": url}, auth...)
			require.Equal(t, 400, r.Status, "patch: %s", r.Body)
			assert.Equal(t, "url", r.Object(t)["details"].(map[string]any)["parameter"])

			got := e.do(t, "GET", "/v2/webhook/endpoint/"+id, nil, auth...)
			require.Equal(t, 200, got.Status, "%s", got.Body)
			assert.Equal(t, rcv.srv.URL+"/hook", got.Object(t)["url"], "a refused PATCH changes nothing")
		})
	}
	assert.Equal(t, 0, countRows(t, e, `SELECT count(*) FROM webhook_endpoints WHERE account_id = $1`, "wh-guard-v6")-1,
		"no endpoint was created besides the valid one")
	assert.Equal(t, 0, rcv.count())
}
