package httpapi

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/valyala/fasthttp"

	"github.com/tokenscope/tokenscope/domain/text"
)

// TestASCIIQueryOnlyPassesQueriesOfStorableText: withText skips parsing a query asciiQuery
// passes, so every key and value fasthttp decodes from such a query must be storable text;
// the queries that decode to a NUL or invalid UTF-8 must not pass.
func TestASCIIQueryOnlyPassesQueriesOfStorableText(t *testing.T) {
	for _, q := range []string{"", "a=1", "tokenAddresses=aa%2Cbb%2Ccc", "q=a+b&x[]=1&x[]=2", "a=%", "a=%4", "a=%zz&b=%7e", "a=%7F"} {
		assert.True(t, asciiQuery([]byte(q)), "%q", q)
	}
	for _, q := range []string{"a=%00", "a%00=1", "a=%C3%28", "a=%ff", "a=\xff", "a=\x00", "a=é"} {
		assert.False(t, asciiQuery([]byte(q)), "%q", q)
	}
	// Random queries over the bytes that matter: whenever asciiQuery passes one, what fasthttp
	// decodes from it is storable.
	alphabet := []byte("%+&=a0F7f8\x00\x7f\x80\xc3")
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200_000 {
		q := make([]byte, rng.IntN(12))
		for i := range q {
			q[i] = alphabet[rng.IntN(len(alphabet))]
		}
		if !asciiQuery(q) {
			continue
		}
		var args fasthttp.Args
		args.ParseBytes(q)
		args.VisitAll(func(k, v []byte) {
			if !text.StorableBytes(k) || !text.StorableBytes(v) {
				t.Fatalf("asciiQuery passed %q, which decodes to %q=%q", q, k, v)
			}
		})
	}
}
