package httpapi

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestEncodedRankingsKeepOneBodyPerRequestUnderItsVersion(t *testing.T) {
	c := newEncodedBodies()
	assert.Nil(t, c.get([]byte("/a"), 1))
	c.put("/a", encodedBody{version: 1, body: []byte("one")})
	assert.Equal(t, []byte("one"), c.get([]byte("/a"), 1))
	assert.Nil(t, c.get([]byte("/a"), 2), "another read's answer is not this one")
	assert.Nil(t, c.get([]byte("/b"), 1), "another request's answer is not this one")

	c.put("/a", encodedBody{version: 3, body: []byte("three")})
	assert.Equal(t, []byte("three"), c.get([]byte("/a"), 3))
	assert.Nil(t, c.get([]byte("/a"), 1), "replaced")
	c.put("/a", encodedBody{version: 2, body: []byte("two")}) // a request over an older read finished last
	assert.Equal(t, []byte("three"), c.get([]byte("/a"), 3), "an older read never replaces a newer one")
	assert.Equal(t, len("three"), c.bytes)
}

func TestEncodedRankingsStayWithinTheirByteBound(t *testing.T) {
	c := newEncodedBodies()
	big := bytes.Repeat([]byte("x"), encodedBodiesMaxBytes/3)
	c.put("/1", encodedBody{version: 1, body: big})
	c.put("/2", encodedBody{version: 1, body: big})
	c.put("/3", encodedBody{version: 1, body: big})
	assert.Equal(t, 3*len(big), c.bytes)
	c.put("/4", encodedBody{version: 1, body: []byte("more than the bound allows")})
	assert.LessOrEqual(t, c.bytes, encodedBodiesMaxBytes)
	assert.Nil(t, c.get([]byte("/1"), 1), "emptied when full")
	assert.Equal(t, []byte("more than the bound allows"), c.get([]byte("/4"), 1))
}
