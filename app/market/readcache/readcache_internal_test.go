package readcache

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/ranking"
	"github.com/tokenscope/tokenscope/domain/token"
	"github.com/tokenscope/tokenscope/internal/fakeversions"
)

func details(addrs ...string) []token.Detail {
	out := make([]token.Detail, len(addrs))
	for i, a := range addrs {
		out[i] = token.Detail{Token: token.Token{Chain: chain.Sol, Address: a}}
	}
	return out
}

func addrsOf(ds []token.Detail) []string {
	out := []string{}
	for _, d := range ds {
		out = append(out, d.Address)
	}
	return out
}

func same(ds []token.Detail) []token.Detail { return ds }

// TestConcurrentRankingRequestsShareOneRead holds the one read until every caller is either
// waiting for it or reading itself, so the callers are certainly concurrent; a cache without
// coalescing would have each of them read (and the count of reads would show it).
func TestConcurrentRankingRequestsShareOneRead(t *testing.T) {
	c := New(fakeversions.Following())
	const n = 8
	var mu sync.Mutex
	arrived, reads := 0, 0
	release := make(chan struct{})
	arrive := func() {
		mu.Lock()
		defer mu.Unlock()
		if arrived++; arrived == n {
			close(release)
		}
	}
	c.onWait = arrive
	load := func(context.Context) ([]token.Detail, []string, error) {
		mu.Lock()
		reads++
		mu.Unlock()
		arrive()
		<-release
		return details("a", "b"), []string{"a", "b"}, nil
	}
	got := make([][]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			ans, err := c.Ranking(context.Background(), chain.Sol, ranking.Duration1h, load, same)
			got[i], errs[i] = addrsOf(ans.List()), err
		})
	}
	wg.Wait()
	assert.Equal(t, 1, reads, "one read for %d concurrent callers", n)
	assert.Equal(t, n, arrived)
	for i := range n {
		require.NoError(t, errs[i])
		assert.Equal(t, []string{"a", "b"}, got[i])
	}
}

// TestRankingWaitersOutliveTheReadersContext: when the request running the shared read is
// cancelled, the requests waiting for it read again instead of failing with its error.
func TestRankingWaitersOutliveTheReadersContext(t *testing.T) {
	c := New(fakeversions.Following())
	leaderCtx, cancel := context.WithCancel(context.Background())
	// reading: the first read has started; waiting: the second caller waits for it;
	// reread: the second read has started (only after the first, unless the cache is broken).
	reading, waiting, reread := make(chan struct{}), make(chan struct{}), make(chan struct{})
	waits := 0
	c.onWait = func() {
		if waits++; waits == 1 {
			close(waiting)
		}
	}
	calls := 0
	load := func(ctx context.Context) ([]token.Detail, []string, error) {
		if calls++; calls == 1 {
			close(reading)
			select {
			case <-waiting:
			case <-reread:
			}
			cancel() // the client went away mid-read
			return nil, nil, errors.New("canceled mid-read")
		}
		close(reread)
		return details("a"), []string{"a"}, nil
	}
	leaderDone := make(chan error)
	go func() {
		_, err := c.Ranking(leaderCtx, chain.Sol, ranking.Duration1m, load, same)
		leaderDone <- err
	}()
	<-reading
	ans, err := c.Ranking(context.Background(), chain.Sol, ranking.Duration1m, load, same)
	require.NoError(t, err)
	assert.Equal(t, []string{"a"}, addrsOf(ans.List()))
	assert.EqualError(t, <-leaderDone, "canceled mid-read", "the cancelled request fails")
	assert.Equal(t, 1, waits, "the second caller waited for the first read")
	assert.Equal(t, 2, calls)
}

// TestEncodedBodiesLiveAndDieWithTheirEntry: a body kept for a request is found by the same key
// on later answers from the same read, never by another key, and is gone once a write the entry
// depends on is announced (the next answer comes from a new read); a write to another token
// leaves it.
func TestEncodedBodiesLiveAndDieWithTheirEntry(t *testing.T) {
	v := fakeversions.Following()
	c := New(v)
	reads := 0
	load := func(context.Context) ([]token.Detail, []string, error) {
		reads++
		return details("a", "b"), []string{"a", "b"}, nil
	}
	ctx := context.Background()
	get := func() Answer {
		t.Helper()
		ans, err := c.Ranking(ctx, chain.Sol, ranking.Duration1h, load, same)
		require.NoError(t, err)
		return ans
	}
	key := []byte("/v2/ranking/sol/hotTokens/1h?")
	first := get()
	assert.Nil(t, first.Kept(key))
	body := []byte("[a,b]")
	first.Keep(key, body)
	body[1] = 'x' // the caller's buffer is its own
	assert.Equal(t, []byte("[a,b]"), get().Kept(key))
	assert.Nil(t, get().Kept([]byte("/v2/ranking/sol/hotTokens/1h?tag=x")), "another request's body is not this one")

	v.WriteTokens("zzz")
	assert.Equal(t, []byte("[a,b]"), get().Kept(key), "another token changed: the same read")
	assert.Equal(t, 1, reads)

	v.WriteTokens("b")
	again := get()
	assert.Equal(t, 2, reads, "a ranked token changed: read again")
	assert.Nil(t, again.Kept(key), "the old read's bodies went with it")
	assert.Zero(t, first.Kept(key), "and are not kept anywhere")
	assert.Zero(t, c.bodyBytes.Load(), "nor counted")
}

// TestMultiEntriesServeTheirListUntilOneOfTheirTokensChanges: the details of an address list
// come from its entry (no read) while changes are announced for other tokens only; a change to
// one of its tokens reads that token alone again (the others' details are kept) and starts a new
// entry, without the old entry's bodies.
func TestMultiEntriesServeTheirListUntilOneOfTheirTokensChanges(t *testing.T) {
	v := fakeversions.Following()
	c := New(v)
	var read [][]string
	reader := func(_ context.Context, _ chain.Chain, addrs []string) ([]token.Detail, error) {
		read = append(read, addrs)
		return details(addrs...), nil
	}
	ctx := context.Background()
	get := func(addrs ...string) Answer {
		t.Helper()
		ans, err := c.Multi(ctx, chain.Sol, addrs, reader, same)
		require.NoError(t, err)
		return ans
	}
	key := []byte("k")
	ans := get("b", "a")
	assert.Equal(t, []string{"b", "a"}, addrsOf(ans.List()))
	ans.Keep(key, []byte("body"))
	v.WriteTokens("z")
	assert.Equal(t, []byte("body"), get("b", "a").Kept(key))
	assert.Equal(t, [][]string{{"b", "a"}}, read)

	v.WriteTokens("a")
	ans = get("b", "a")
	assert.Nil(t, ans.Kept(key))
	assert.Equal(t, []string{"b", "a"}, addrsOf(ans.List()))
	assert.Equal(t, [][]string{{"b", "a"}, {"a"}}, read, "only the changed token is read again")
}

// TestUncachedAnswersKeepNothing: while the versions are unknown (0) every request reads and no
// body is kept.
func TestUncachedAnswersKeepNothing(t *testing.T) {
	c := New(&fakeversions.Versions{}) // version 0: not following
	reads := 0
	load := func(context.Context) ([]token.Detail, []string, error) {
		reads++
		return details("a"), []string{"a"}, nil
	}
	for range 2 {
		ans, err := c.Ranking(context.Background(), chain.Sol, ranking.Duration1h, load, same)
		require.NoError(t, err)
		ans.Keep([]byte("k"), []byte("body"))
		assert.Nil(t, ans.Kept([]byte("k")))
	}
	assert.Equal(t, 2, reads)
}

func TestEncodedBodiesStayWithinTheirByteBound(t *testing.T) {
	c := New(fakeversions.Following())
	reader := func(_ context.Context, _ chain.Chain, addrs []string) ([]token.Detail, error) {
		return details(addrs...), nil
	}
	big := bytes.Repeat([]byte("x"), maxBodyBytes/3)
	for i, a := range []string{"a", "b", "c"} {
		ans, err := c.Multi(context.Background(), chain.Sol, []string{a}, reader, same)
		require.NoError(t, err)
		ans.Keep([]byte{byte(i)}, big)
		assert.Equal(t, big, ans.Kept([]byte{byte(i)}))
	}
	ans, err := c.Multi(context.Background(), chain.Sol, []string{"d"}, reader, same)
	require.NoError(t, err)
	ans.Keep([]byte("d"), []byte("more than the bound allows"))
	assert.LessOrEqual(t, c.bodyBytes.Load(), int64(maxBodyBytes))
	assert.Equal(t, []byte("more than the bound allows"), ans.Kept([]byte("d")), "the entries near the bound were started over")
}
