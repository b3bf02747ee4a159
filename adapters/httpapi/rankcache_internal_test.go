package httpapi

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestEncodedRankingsKeepOneBodyPerRequestUnderItsVersion(t *testing.T) {
	c := newEncodedBodies()
	assert.Nil(t, c.get("/a", 1))
	c.put("/a", 1, []byte("one"))
	assert.Equal(t, []byte("one"), c.get("/a", 1))
	assert.Nil(t, c.get("/a", 2), "another read's answer is not this one")
	assert.Nil(t, c.get("/b", 1), "another request's answer is not this one")

	c.put("/a", 3, []byte("three"))
	assert.Equal(t, []byte("three"), c.get("/a", 3))
	assert.Nil(t, c.get("/a", 1), "replaced")
	c.put("/a", 2, []byte("two")) // a request over an older read finished last
	assert.Equal(t, []byte("three"), c.get("/a", 3), "an older read never replaces a newer one")
	assert.Equal(t, len("three"), c.bytes)
}

func TestEncodedRankingsStayWithinTheirByteBound(t *testing.T) {
	c := newEncodedBodies()
	big := bytes.Repeat([]byte("x"), encodedBodiesMaxBytes/3)
	c.put("/1", 1, big)
	c.put("/2", 1, big)
	c.put("/3", 1, big)
	assert.Equal(t, 3*len(big), c.bytes)
	c.put("/4", 1, []byte("more than the bound allows"))
	assert.LessOrEqual(t, c.bytes, encodedBodiesMaxBytes)
	assert.Nil(t, c.get("/1", 1), "emptied when full")
	assert.Equal(t, []byte("more than the bound allows"), c.get("/4", 1))
}
