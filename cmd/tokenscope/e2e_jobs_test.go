package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
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
