package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/domain/account"
)

// streamJob opens the job's stream with key, sending headers (key, value pairs). jobID may
// carry a query string ("job_1?a=b").
func streamJob(t *testing.T, ctx context.Context, e *env, key, jobID string, headers ...string) (*http.Response, *bufio.Scanner) {
	t.Helper()
	id, query, _ := strings.Cut(jobID, "?")
	url := e.base + "/v2/job/" + id + "/streaming"
	if query != "" {
		url += "?" + query
	}
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Accept", "text/event-stream")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { res.Body.Close() })
	return res, bufio.NewScanner(res.Body)
}

// TestJobStreamAfterTheEnd: an EventSource reconnects whenever a stream ends, sending the last
// id it saw as Last-Event-ID. A reconnect to a finished job is answered 204 (the EventSource
// standard's "stop reconnecting"); a first request for a finished job (no Last-Event-ID) gets
// its terminal message, so a client that arrives late still learns the outcome; a reconnect to a
// job still running resumes the stream.
func TestJobStreamAfterTheEnd(t *testing.T) {
	ts := sharedTemporal()
	e := newEnvWithClient(t, ts.GetDefaultClient(), false, fastWorkflows)
	key := e.keyFor(t, "job-stream-end", account.ScopeRead)
	const wallet = "StreamEnd1111111111111111111111111111111111"
	r := e.do(t, "POST", "/v2/wallet/sol/"+wallet+"/calculate-pnl", nil, "Authorization", "Bearer "+key)
	require.Equal(t, 200, r.Status, "%s", r.Body)
	jobID := r.Object(t)["jobId"].(string)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	t.Run("a reconnect to a running job resumes", func(t *testing.T) {
		sctx, scancel := context.WithCancel(ctx)
		defer scancel()
		res, sc := streamJob(t, sctx, e, key, jobID, "Last-Event-ID", "3")
		require.Equal(t, 200, res.StatusCode)
		msgs := readSSE(t, sc, 1)
		require.Len(t, msgs, 1)
		assert.Equal(t, "pending", msgs[0].Data["status"])
	})

	w := startWorker(t, e.rt)
	defer w.Stop()
	eventually(t, 30*time.Second, "job completed", func() bool {
		return e.do(t, "GET", "/v2/job/"+jobID, nil, "Authorization", "Bearer "+key).Object(t)["state"] == "completed"
	})

	var lastID string
	t.Run("a first request for a finished job gets the terminal message, then the end", func(t *testing.T) {
		res, sc := streamJob(t, ctx, e, key, jobID)
		require.Equal(t, 200, res.StatusCode)
		msgs := readSSE(t, sc, 100) // until the server ends the stream
		require.Len(t, msgs, 1)
		assert.Equal(t, "completed", msgs[0].Data["status"])
		require.NotEmpty(t, msgs[0].ID)
		lastID = msgs[0].ID
	})

	t.Run("the reconnect that follows is 204 with no body", func(t *testing.T) {
		for _, id := range []string{lastID, "1", "17"} {
			res, _ := streamJob(t, ctx, e, key, jobID, "Last-Event-ID", id)
			assert.Equal(t, 204, res.StatusCode, "Last-Event-ID %q", id)
			body, err := io.ReadAll(res.Body)
			require.NoError(t, err)
			assert.Empty(t, string(body))
		}
	})

	t.Run("so is a polyfill's reconnect, which sends the id as the lastEventId query parameter", func(t *testing.T) {
		res, _ := streamJob(t, ctx, e, key, jobID+"?lastEventId="+lastID)
		assert.Equal(t, 204, res.StatusCode)
	})

	t.Run("ownership comes first: another account's reconnect is 404", func(t *testing.T) {
		other := e.keyFor(t, "job-stream-end-other", account.ScopeRead)
		res, _ := streamJob(t, ctx, e, other, jobID, "Last-Event-ID", "1")
		assert.Equal(t, 404, res.StatusCode)
	})
}

// TestCalculatePnLIsBounded: identical requests while a job runs share that job (also when
// they arrive together), and an account may have at most the configured number of unfinished
// jobs; one more is 429 with Retry-After. Without a worker every job stays pending.
func TestCalculatePnLIsBounded(t *testing.T) {
	ts := sharedTemporal()
	const limit = 4 // the default, which the test therefore leaves as is
	e := newEnvWithClient(t, ts.GetDefaultClient(), false, fastWorkflows)
	require.Equal(t, limit, e.rt.Cfg.JobMaxRunning)
	key := e.keyFor(t, "job-bounded", account.ScopeRead)
	auth := []string{"Authorization", "Bearer " + key}
	post := func(t *testing.T, wallet string, body any, headers ...string) resp {
		t.Helper()
		if headers == nil {
			headers = auth
		}
		return e.do(t, "POST", "/v2/wallet/sol/"+wallet+"/calculate-pnl", body, headers...)
	}
	jobOf := func(t *testing.T, r resp) string {
		t.Helper()
		require.Equal(t, 200, r.Status, "%s", r.Body)
		return r.Object(t)["jobId"].(string)
	}
	unfinished := func() int {
		return countRows(t, e, `SELECT count(*) FROM jobs WHERE account_id = 'job-bounded' AND status NOT IN ('completed', 'failed')`)
	}
	const w0 = "Bounded0111111111111111111111111111111111111"
	tokens := map[string]any{"tokenAddresses": []string{"TokB111111111111111111111111111111111111111", "TokA111111111111111111111111111111111111111"}}

	var first string
	t.Run("identical requests sent together make one job", func(t *testing.T) {
		const n = 8
		ids := make([]string, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := post(t, w0, tokens)
				if assert.Equal(t, 200, r.Status, "%s", r.Body) {
					var o map[string]any
					_ = json.Unmarshal(r.Body, &o)
					ids[i], _ = o["jobId"].(string)
				}
			}()
		}
		wg.Wait()
		for _, id := range ids {
			assert.Equal(t, ids[0], id)
		}
		first = ids[0]
		assert.Equal(t, 1, unfinished())
	})

	t.Run("the same token set in another order and with repeats is the same job", func(t *testing.T) {
		r := post(t, w0, map[string]any{"tokenAddresses": []string{"TokA111111111111111111111111111111111111111",
			"TokB111111111111111111111111111111111111111", "TokA111111111111111111111111111111111111111"}})
		assert.Equal(t, first, jobOf(t, r))
	})

	t.Run("another token set, another wallet or no token list are other jobs", func(t *testing.T) {
		a := jobOf(t, post(t, w0, map[string]any{"tokenAddresses": []string{"TokA111111111111111111111111111111111111111"}}))
		b := jobOf(t, post(t, w0, nil))
		assert.Equal(t, b, jobOf(t, post(t, w0, map[string]any{"tokenAddresses": []string{}})), "no list and an empty list both mean every token")
		assert.Equal(t, b, jobOf(t, post(t, w0, map[string]any{"tokenAddresses": nil})))
		require.Equal(t, limit-1, unfinished())
		c := jobOf(t, post(t, "Bounded1111111111111111111111111111111111111", nil))
		assert.Len(t, map[string]bool{first: true, a: true, b: true, c: true}, limit)
		assert.Equal(t, limit, unfinished())
	})

	t.Run("one more distinct job than the limit is 429 with Retry-After", func(t *testing.T) {
		r := post(t, "Bounded2111111111111111111111111111111111111", nil)
		require.Equal(t, 429, r.Status, "%s", r.Body)
		assert.NotEmpty(t, r.Header.Get("Retry-After"))
		assert.Equal(t, "application/json", r.Header.Get("Content-Type"))
		o := r.Object(t)
		assert.EqualValues(t, "429", o["code"].(json.Number).String())
		assert.Contains(t, o["message"], "4")
		assert.Equal(t, limit, unfinished(), "nothing was stored")
	})

	t.Run("at the limit, an identical request still gets its running job", func(t *testing.T) {
		assert.Equal(t, first, jobOf(t, post(t, w0, tokens)))
	})

	t.Run("other accounts are not limited by this one", func(t *testing.T) {
		other := e.keyFor(t, "job-bounded-other", account.ScopeRead)
		jobOf(t, post(t, "Bounded2111111111111111111111111111111111111", nil, "Authorization", "Bearer "+other))
	})

	t.Run("finished jobs free the account and are not reused", func(t *testing.T) {
		w := startWorker(t, e.rt)
		defer w.Stop()
		eventually(t, 60*time.Second, "every job finished", func() bool { return unfinished() == 0 })
		again := jobOf(t, post(t, w0, tokens))
		assert.NotEqual(t, first, again, "a finished job is not returned for a new request")
		jobOf(t, post(t, "Bounded2111111111111111111111111111111111111", nil))
	})
}
