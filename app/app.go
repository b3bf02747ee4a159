// Package app holds tokenscope's use cases, one subpackage per area, and Application, the one
// struct the HTTP adapter depends on. Use cases take ports in their constructors; nothing here
// names a concrete adapter, pgx or Fiber (imports_test.go enforces it). The composition root
// that builds real adapters is cmd/internal/wire, shared by both binaries.
package app

import (
	"github.com/tokenscope/tokenscope/app/apikey"
	"github.com/tokenscope/tokenscope/app/candle"
	"github.com/tokenscope/tokenscope/app/compliance"
	"github.com/tokenscope/tokenscope/app/ingest"
	"github.com/tokenscope/tokenscope/app/jobrunner"
	"github.com/tokenscope/tokenscope/app/market"
	"github.com/tokenscope/tokenscope/app/webhookendpoint"
)

// Application gathers the use cases the driving adapters (HTTP, CLI) call.
// Each area adds its field here and is wired in cmd/internal/wire/wire.go.
type Application struct {
	Keys *apikey.Service
	// Ingest takes chain events in (POST /v2/ingest, import, simulate).
	Ingest *ingest.Service
	// Market serves the read API (operations 1–9).
	Market *market.Service
	// Candles serves OHLCV candles of tokens, pools and pairs.
	Candles *candle.Service
	// KYT registers withdrawals and transfers (operations 10, 11).
	KYT *compliance.Service
	// Webhooks manages endpoints (operations 13, 14 and the rest of the resource).
	Webhooks *webhookendpoint.Service
	// Jobs starts and reads jobs; JobStream follows them for the SSE stream (operation 12).
	Jobs      *jobrunner.Service
	JobStream *jobrunner.Hub
}
