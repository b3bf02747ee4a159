package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/app/config"
	"github.com/tokenscope/tokenscope/domain/kyt"
	"github.com/tokenscope/tokenscope/workflows"
)

// blockingVendor is a Chainalysis-style KYT vendor on loopback whose first registration call
// hangs until the test releases it, so a worker can be stopped while the call is in flight.
type blockingVendor struct {
	srv     *httptest.Server
	entered chan struct{} // closed when the first registration call arrived
	release chan struct{} // closing it lets the held call answer (its worker is gone by then)

	mu       sync.Mutex
	attempts []string // attemptIdentifier of every registration call, in arrival order
	once     sync.Once
}

func newBlockingVendor(t *testing.T) *blockingVendor {
	v := &blockingVendor{entered: make(chan struct{}), release: make(chan struct{})}
	v.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/withdrawal-attempts"):
			var body struct {
				AttemptIdentifier string `json:"attemptIdentifier"`
			}
			raw, _ := io.ReadAll(r.Body)
			_ = json.Unmarshal(raw, &body)
			v.mu.Lock()
			v.attempts = append(v.attempts, body.AttemptIdentifier)
			first := len(v.attempts) == 1
			v.mu.Unlock()
			if first {
				v.once.Do(func() { close(v.entered) })
				select {
				case <-v.release:
				case <-r.Context().Done():
				case <-time.After(20 * time.Second):
				}
			}
			// The vendor keys repeats on attemptIdentifier: one registration, one id.
			_ = json.NewEncoder(w).Encode(map[string]any{"externalId": "vendor-" + body.AttemptIdentifier})
		case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/alerts"):
			_ = json.NewEncoder(w).Encode(map[string]any{"alerts": []map[string]any{
				{"alertLevel": "HIGH", "category": "sanctions", "exposureType": "DIRECT", "alertAmount": "5"}}})
		case r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/withdrawal-attempts/"):
			_ = json.NewEncoder(w).Encode(map[string]any{"updatedAt": "2024-01-15T10:31:00Z", "usdAmount": "5"})
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	t.Cleanup(func() {
		v.once.Do(func() { close(v.entered) })
		select {
		case <-v.release:
		default:
			close(v.release)
		}
		v.srv.Close()
	})
	return v
}

func (v *blockingVendor) calls() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]string(nil), v.attempts...)
}

// TestKYTWorkerStoppedMidRegistration stops the worker while the provider call is in flight;
// a new worker completes the registration: one row, the provider's outcome in the summary,
// and the provider saw the registration at most twice under the same identifier.
func TestKYTWorkerStoppedMidRegistration(t *testing.T) {
	vendor := newBlockingVendor(t)
	ts := sharedTemporal()
	e := newEnvWithClient(t, ts.GetDefaultClient(), false, fastWorkflows, func(c *config.Config) {
		c.KYTProviderURL = vendor.srv.URL
		c.KYTAPIKey = "test-key"
	})
	w1 := startWorker(t, e.rt)
	r := e.do(t, "POST", "/v2/kyt/withdrawal", withdrawalBody("42"), "Idempotency-Key", "kyt-crash-1")
	require.Equal(t, 200, r.Status, "%s", r.Body)
	o := r.Object(t)
	id, attemptID := o["externalId"].(string), o["attemptIdentifier"].(string)

	select {
	case <-vendor.entered:
	case <-time.After(30 * time.Second):
		dumpTemporal(t)
		t.Fatal("the provider never saw the registration")
	}
	w1.Stop() // the provider call is still held open
	close(vendor.release)
	assert.Equal(t, "pending", e.do(t, "GET", "/v2/kyt/withdrawal/"+id+"/summary", nil).Object(t)["status"])

	w2 := startWorker(t, e.rt)
	defer w2.Stop()
	var s map[string]any
	eventually(t, 45*time.Second, "registered by the second worker", func() bool {
		s = e.do(t, "GET", "/v2/kyt/withdrawal/"+id+"/summary", nil).Object(t)
		return s["status"] == "registered"
	})
	assert.Equal(t, "highRisk", s["rating"], "the provider's alert decides the rating")
	assert.NotEmpty(t, s["alerts"])
	assert.NotNil(t, s["processedAt"])
	assert.Equal(t, 1, countRows(t, e, `SELECT count(*) FROM kyt_registrations WHERE external_id = $1`, id))

	calls := vendor.calls()
	require.NotEmpty(t, calls)
	assert.LessOrEqual(t, len(calls), 2, "the provider saw the registration at most twice")
	for _, c := range calls {
		assert.Equal(t, attemptID, c, "every call carries the same identifier")
	}
	// The same request again answers with the same registration.
	again := e.do(t, "POST", "/v2/kyt/withdrawal", withdrawalBody("42"), "Idempotency-Key", "kyt-crash-1")
	require.Equal(t, 200, again.Status, "%s", again.Body)
	assert.Equal(t, id, again.Object(t)["externalId"])
	replay(t, e.rt.Temporal, workflows.KYTWorkflowID("e2e", string(kyt.KindWithdrawal), id))
}
