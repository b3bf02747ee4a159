package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/domain/account"
)

// TestPatchWebhookEndpoint is operation 13, PATCH /v2/webhook/endpoint: absent fields stay,
// explicit nulls clear the nullable ones (url cannot be cleared), metadata is replaced as a
// whole, rateLimit is an int32 of at least 0, and an endpoint that is unknown or belongs to
// another account is 404 and stays as it was.
func TestPatchWebhookEndpoint(t *testing.T) {
	e := newEnv(t)
	owner := e.keyFor(t, "patch-owner", account.ScopeWebhook)
	stranger := e.keyFor(t, "patch-stranger", account.ScopeWebhook)
	as := func(key string) []string { return []string{"Authorization", "Bearer " + key} }

	created := e.do(t, "POST", "/v2/webhook/endpoint", map[string]any{
		"url":         "http://127.0.0.1:9/patch",
		"channels":    []string{"sol.token.created"},
		"description": "before",
		"filter":      `data.symbol == "BONK"`,
		"filterTypes": []string{"sol.token.created"},
		"metadata":    map[string]string{"team": "risk", "env": "prod"},
		"rateLimit":   5,
	}, as(owner)...)
	require.Equal(t, 200, created.Status, "%s", created.Body)
	id := created.Object(t)["id"].(string)
	t.Cleanup(func() { e.do(t, "DELETE", "/v2/webhook/endpoint/"+id, nil, as(owner)...) })

	get := func(t *testing.T) map[string]any {
		t.Helper()
		r := e.do(t, "GET", "/v2/webhook/endpoint/"+id, nil, as(owner)...)
		require.Equal(t, 200, r.Status, "%s", r.Body)
		return r.Object(t)
	}
	patch := func(t *testing.T, key string, body map[string]any) resp {
		t.Helper()
		return e.do(t, "PATCH", "/v2/webhook/endpoint", body, as(key)...)
	}
	// patched sends body as the owner, expects 200 and checks GET answers the same endpoint.
	patched := func(t *testing.T, body map[string]any) map[string]any {
		t.Helper()
		body["endpointId"] = id
		r := patch(t, owner, body)
		require.Equal(t, 200, r.Status, "%s", r.Body)
		got := r.Object(t)
		assert.Equal(t, got, get(t), "GET after PATCH")
		return got
	}
	// except copies m without the named keys.
	except := func(m map[string]any, keys ...string) map[string]any {
		out := make(map[string]any, len(m))
		for k, v := range m {
			out[k] = v
		}
		for _, k := range keys {
			delete(out, k)
		}
		return out
	}

	t.Run("a partial update keeps every other field", func(t *testing.T) {
		before := get(t)
		got := patched(t, map[string]any{"description": "after"})
		assert.Equal(t, "after", got["description"])
		assert.Equal(t, except(before, "description", "updatedAt"), except(got, "description", "updatedAt"))
		assert.GreaterOrEqual(t, got["updatedAt"], before["updatedAt"])

		got = patched(t, map[string]any{"rateLimit": 0}) // the minimum is allowed
		assert.Equal(t, json.Number("0"), got["rateLimit"])
		assert.Equal(t, "after", got["description"], "kept from the previous patch")
		assert.Equal(t, except(before, "description", "rateLimit", "updatedAt"), except(got, "description", "rateLimit", "updatedAt"))
	})

	t.Run("metadata is replaced as a whole", func(t *testing.T) {
		got := patched(t, map[string]any{"metadata": map[string]string{"owner": "ops"}})
		assert.Equal(t, map[string]any{"owner": "ops"}, got["metadata"])
	})

	t.Run("an empty patch changes nothing, not even updatedAt", func(t *testing.T) {
		before := get(t)
		assert.Equal(t, before, patched(t, map[string]any{}))
	})

	t.Run("null clears the nullable fields", func(t *testing.T) {
		before := get(t)
		got := patched(t, map[string]any{"channels": nil, "description": nil, "disabled": nil, "filter": nil,
			"filterTypes": nil, "metadata": nil, "rateLimit": nil})
		assert.Nil(t, got["channels"], "null channels: every channel")
		assert.Nil(t, got["filterTypes"], "null filterTypes: every event type")
		assert.Nil(t, got["description"])
		assert.Nil(t, got["filter"])
		assert.Nil(t, got["rateLimit"], "null rateLimit: unthrottled")
		assert.Equal(t, false, got["disabled"])
		assert.Equal(t, map[string]any{}, got["metadata"])
		for _, k := range []string{"id", "url", "createdAt"} {
			assert.Equal(t, before[k], got[k], k)
		}
	})

	// unchanged runs a refused patch and checks the endpoint did not move.
	unchanged := func(t *testing.T, key string, body map[string]any, status int) map[string]any {
		t.Helper()
		before := get(t)
		r := patch(t, key, body)
		errBody := requireErrorBody(t, r, status)
		assert.Equal(t, before, get(t), "a refused patch changes nothing")
		return errBody
	}

	t.Run("url cannot be cleared", func(t *testing.T) {
		body := unchanged(t, owner, map[string]any{"endpointId": id, "url": nil, "description": "not applied"}, 400)
		assert.Equal(t, "url", body["details"].(map[string]any)["parameter"])
	})

	t.Run("rateLimit must be an int32 of at least 0", func(t *testing.T) {
		for _, v := range []any{-1, int64(2147483648), "5", 1.5, true, map[string]any{}} {
			body := unchanged(t, owner, map[string]any{"endpointId": id, "rateLimit": v, "description": "not applied"}, 400)
			assert.Equal(t, "rateLimit", body["details"].(map[string]any)["parameter"], "rateLimit %v", v)
			assert.Contains(t, body["message"], "rateLimit", "rateLimit %v", v)
		}
	})

	t.Run("an unknown endpoint is 404", func(t *testing.T) {
		r := patch(t, owner, map[string]any{"endpointId": "ep_01HT7Z4QJ7N2Q9W8P6V3K5M1X2", "description": "x"})
		requireErrorBody(t, r, 404)
	})

	t.Run("another account's endpoint is 404 and stays as it was", func(t *testing.T) {
		unchanged(t, stranger, map[string]any{"endpointId": id, "description": "hijacked", "url": "http://127.0.0.1:9/evil"}, 404)
		r := e.do(t, "GET", "/v2/webhook/endpoint/"+id, nil, as(stranger)...)
		requireErrorBody(t, r, 404)
	})
}
