package httpapi

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

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

type ctxKey struct{}

// TestDeadlineContextIsContextWithDeadline: the request context withTimeout makes behaves as
// context.WithDeadline canceled at the request's end, though its timer is made only once
// something waits on it.
func TestDeadlineContextIsContextWithDeadline(t *testing.T) {
	parent := context.WithValue(context.Background(), ctxKey{}, "v")

	t.Run("answers its deadline and values without a timer", func(t *testing.T) {
		at := time.Now().Add(time.Hour)
		d := &deadlineContext{parent: parent, deadline: at}
		got, ok := d.Deadline()
		assert.True(t, ok)
		assert.Equal(t, at, got)
		assert.Equal(t, "v", d.Value(ctxKey{}))
		assert.Nil(t, d.ctx, "nothing waited on it: no timer")
		assert.NoError(t, d.Err())
		d.end()
		assert.ErrorIs(t, d.Err(), context.Canceled)
	})
	t.Run("ends at its deadline", func(t *testing.T) {
		d := &deadlineContext{parent: parent, deadline: time.Now().Add(20 * time.Millisecond)}
		defer d.end()
		child, cancel := context.WithCancel(d)
		defer cancel()
		<-d.Done()
		<-child.Done()
		assert.ErrorIs(t, d.Err(), context.DeadlineExceeded)
		assert.ErrorIs(t, child.Err(), context.DeadlineExceeded)
		assert.Equal(t, "v", child.Value(ctxKey{}))
	})
	t.Run("a deadline already past", func(t *testing.T) {
		d := &deadlineContext{parent: parent, deadline: time.Now().Add(-time.Second)}
		defer d.end()
		assert.ErrorIs(t, d.Err(), context.DeadlineExceeded)
	})
	t.Run("the end of its request cancels it and what derives from it", func(t *testing.T) {
		d := &deadlineContext{parent: parent, deadline: time.Now().Add(time.Hour)}
		child, cancel := context.WithTimeout(d, 2*time.Hour)
		defer cancel()
		dl, _ := child.Deadline()
		want, _ := d.Deadline()
		assert.Equal(t, want, dl, "a derived context keeps the earlier deadline")
		called := make(chan struct{})
		context.AfterFunc(d, func() { close(called) })
		d.end()
		<-child.Done()
		<-called
		assert.ErrorIs(t, child.Err(), context.Canceled)
		late := &deadlineContext{parent: parent, deadline: time.Now().Add(time.Hour)}
		late.end()
		select {
		case <-late.Done():
		default:
			t.Fatal("a context first waited on after its request ended is not done")
		}
	})
	t.Run("its parent's end and earlier deadline carry over", func(t *testing.T) {
		p, cancel := context.WithTimeout(parent, time.Minute)
		d := &deadlineContext{parent: p, deadline: time.Now().Add(time.Hour)}
		defer d.end()
		pd, _ := p.Deadline()
		dl, _ := d.Deadline()
		assert.Equal(t, pd, dl)
		cancel()
		<-d.Done()
		assert.ErrorIs(t, d.Err(), context.Canceled)
	})
}
