package main

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/ndjson"
)

func gzipped(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	_, err := w.Write(b)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return buf.Bytes()
}

// TestEncodedRequestBodies: a Content-Encoding (gzip, deflate) is undone with the 1 MiB limit
// applied to the decoded bytes, so a small compressed body cannot expand without bound in the
// server's memory (a decompression bomb is 413); an unknown coding is a 400 naming the header,
// a body that is not what its header says is a 400 on the body; the streamed ingest route
// decodes as it reads.
func TestEncodedRequestBodies(t *testing.T) {
	e := newEnv(t)
	withdrawal, err := json.Marshal(withdrawalBody("1"))
	require.NoError(t, err)

	t.Run("gzip and deflate bodies are decoded", func(t *testing.T) {
		r := e.do(t, "POST", "/v2/kyt/withdrawal", gzipped(t, withdrawal), "Content-Encoding", "gzip")
		require.Equal(t, 200, r.Status, "body: %s", r.Body)
		assert.Equal(t, "1", r.Object(t)["assetAmount"])

		var buf bytes.Buffer
		w := zlib.NewWriter(&buf)
		_, err := w.Write(withdrawal)
		require.NoError(t, err)
		require.NoError(t, w.Close())
		r = e.do(t, "POST", "/v2/kyt/withdrawal", buf.Bytes(), "Content-Encoding", "deflate")
		require.Equal(t, 200, r.Status, "body: %s", r.Body)
	})

	t.Run("a body that decodes past 1 MiB is 413", func(t *testing.T) {
		// 64 MiB of spaces (valid JSON whitespace around an object) compress to about 64 KiB.
		bomb := append(bytes.Repeat([]byte(" "), 64<<20), withdrawal...)
		r := e.do(t, "POST", "/v2/kyt/withdrawal", gzipped(t, bomb), "Content-Encoding", "gzip")
		requireErrorBody(t, r, 413)
	})

	t.Run("an unknown coding is 400 naming Content-Encoding", func(t *testing.T) {
		for _, enc := range []string{"br", "zstd", "gzip, gzip", "compress"} {
			r := e.do(t, "POST", "/v2/kyt/withdrawal", withdrawal, "Content-Encoding", enc)
			badRequest(t, r, "Content-Encoding")
			requireErrorBody(t, r, 400)
		}
	})

	t.Run("a body that is not what its header says is 400 on body", func(t *testing.T) {
		r := e.do(t, "POST", "/v2/kyt/withdrawal", withdrawal, "Content-Encoding", "gzip")
		badRequest(t, r, "body")
		gz := gzipped(t, withdrawal)
		r = e.do(t, "POST", "/v2/kyt/withdrawal", gz[:len(gz)/2], "Content-Encoding", "gzip")
		badRequest(t, r, "body")
	})

	t.Run("ingest decodes a gzip NDJSON stream and refuses a broken one", func(t *testing.T) {
		var nd strings.Builder
		for _, addr := range []string{"EdgeGzipIngest1", "EdgeGzipIngest2"} {
			b, err := ndjson.Marshal(edgeToken(addr))
			require.NoError(t, err)
			nd.Write(b)
			nd.WriteByte('\n')
		}
		r := e.do(t, "POST", "/v2/ingest", gzipped(t, []byte(nd.String())), "Content-Encoding", "gzip",
			"Content-Type", "application/x-ndjson")
		require.Equal(t, 200, r.Status, "body: %s", r.Body)
		assert.Equal(t, json.Number("2"), r.Object(t)["events"])

		r = e.do(t, "POST", "/v2/ingest", []byte(nd.String()), "Content-Encoding", "gzip",
			"Content-Type", "application/x-ndjson")
		badRequest(t, r, "body")
		r = e.do(t, "POST", "/v2/ingest", nd.String(), "Content-Encoding", "br", "Content-Type", "application/x-ndjson")
		badRequest(t, r, "Content-Encoding")
	})
}
