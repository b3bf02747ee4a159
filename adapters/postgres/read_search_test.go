package postgres_test

import (
	"context"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/postgres"
	"github.com/tokenscope/tokenscope/adapters/postgres/pgtest"
	"github.com/tokenscope/tokenscope/app/market"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/page"
	"github.com/tokenscope/tokenscope/ports"
)

// searchFixture holds two families of names. "Zzpage <i>" (25 tokens) all start with the query
// "zzpage", next to one exact symbol and two one-typo names: strong matches. "Qwertyuiop Asdf <i>"
// (30 tokens on sol and eth) are only similar (trigram similarity 0.62–0.65) to the 14-letter
// query "qwertyuiopasdf", of which the bsc token "Qwertyuiopasdfgh" is a prefix match. Market
// caps take four values, so sorting by them needs the (chain, address) tie-break.
const searchFixture = `
INSERT INTO tokens (chain, address, decimals, name, symbol)
SELECT (ARRAY['sol','eth','bsc'])[1 + i % 3], 'pg' || substr(md5(i::text), 1, 10), 6, 'Zzpage ' || i, 'ZP' || i
FROM generate_series(1, 25) i;
INSERT INTO tokens (chain, address, decimals, name, symbol) VALUES
	('sol', 'pgsymbol', 6, 'Something Else', 'ZZPAGE'),
	('eth', 'pgtypo1', 6, 'Zzpag', 'XA'),
	('sol', 'pgtypo2', 6, 'Zzpaeg', 'XB'),
	('bsc', 'qwprefix', 6, 'Qwertyuiopasdfgh', 'QWP'),
	('sol', 'unrelated', 6, 'Zxcvbnm', 'ZXC');
INSERT INTO tokens (chain, address, decimals, name, symbol)
SELECT (ARRAY['sol','eth'])[1 + i % 2], 'qw' || substr(md5(i::text), 1, 10), 6, 'Qwertyuiop Asdf ' || i, 'QW' || i
FROM generate_series(1, 30) i;
INSERT INTO token_market (chain, address, market_cap_usd)
SELECT chain, address, (abs(hashtext(address)) % 4) * 100 FROM tokens;
`

type searchItem struct {
	chain, address, name string
}

func (s searchItem) String() string { return s.chain + "/" + s.address }

// walkSearch pages through s forward, then back from the last page, and checks both walks list
// the same items once each and that hasNext/hasPrev hold on the way; it returns the forward list.
func walkSearch(t *testing.T, r *postgres.MarketReader, s ports.TokenSearch, limit int) []string {
	t.Helper()
	ctx := context.Background()
	get := func(dir page.Direction, cursor string) page.Page[searchItem] {
		t.Helper()
		q := s
		q.Page = ports.PageRequest{Limit: limit, Direction: dir, Cursor: cursor}
		pg, err := r.SearchTokens(ctx, q)
		require.NoError(t, err)
		require.LessOrEqual(t, len(pg.Items), limit)
		out := page.Page[searchItem]{StartCursor: pg.StartCursor, EndCursor: pg.EndCursor, HasNext: pg.HasNext, HasPrev: pg.HasPrev}
		for _, d := range pg.Items {
			out.Items = append(out.Items, searchItem{string(d.Chain), d.Address, d.Name})
		}
		return out
	}
	var forward []string
	pg := get(page.Next, "")
	assert.False(t, pg.HasPrev)
	pages := 0
	for {
		pages++
		require.Less(t, pages, 100)
		for _, it := range pg.Items {
			forward = append(forward, it.String())
		}
		if !pg.HasNext {
			break
		}
		pg = get(page.Next, *pg.EndCursor)
		assert.True(t, pg.HasPrev)
	}
	var backward []string
	for {
		var ids []string
		for _, it := range pg.Items {
			ids = append(ids, it.String())
		}
		backward = append(ids, backward...)
		if !pg.HasPrev {
			break
		}
		pg = get(page.Prev, *pg.StartCursor)
		assert.True(t, pg.HasNext)
	}
	assert.Equal(t, forward, backward, "forward and backward walks differ")
	seen := map[string]bool{}
	for _, id := range forward {
		assert.False(t, seen[id], "%s listed twice", id)
		seen[id] = true
	}
	return forward
}

// fixtureTokens lists the fixture's tokens whose name starts with prefix and whose chain is in
// chains, each with its market cap.
func fixtureTokens(t *testing.T, prefix string, chains ...string) (items []searchItem, mcap map[string]int) {
	t.Helper()
	rows, err := pgtest.Pool(t).Query(context.Background(), `SELECT t.chain, t.address, t.name, m.market_cap_usd::int
		FROM tokens t JOIN token_market m USING (chain, address) WHERE t.name LIKE $1 || '%' AND t.chain = ANY($2)`, prefix, chains)
	require.NoError(t, err)
	defer rows.Close()
	mcap = map[string]int{}
	for rows.Next() {
		var it searchItem
		var m int
		require.NoError(t, rows.Scan(&it.chain, &it.address, &it.name, &m))
		items = append(items, it)
		mcap[it.String()] = m
	}
	require.NoError(t, rows.Err())
	return items, mcap
}

// byScore orders items as relevance does within one tier when the similarity to the query only
// depends on the number of digits after the family name: fewer digits (more similar) first,
// then chain and address.
func byScore(items []searchItem) []string {
	digits := func(it searchItem) int { return len(it.name[strings.LastIndex(it.name, " ")+1:]) }
	sort.Slice(items, func(i, j int) bool {
		a, b := items[i], items[j]
		if digits(a) != digits(b) {
			return digits(a) < digits(b)
		}
		if a.chain != b.chain {
			return a.chain < b.chain
		}
		return a.address < b.address
	})
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.String()
	}
	return out
}

func TestSearchTokensPaging(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	_, err := pgtest.Pool(t).Exec(context.Background(), searchFixture)
	require.NoError(t, err)
	r := postgres.NewMarketReader(pgtest.Pool(t))
	search := func(q string, chains ...chain.Chain) ports.TokenSearch {
		return ports.TokenSearch{Query: q, Variants: market.Typos(strings.ToLower(q)), Chains: chains, SortBy: ports.SearchByRelevance}
	}

	t.Run("strong matches over several pages, by relevance", func(t *testing.T) {
		family, _ := fixtureTokens(t, "Zzpage ", "sol", "eth", "bsc")
		require.Len(t, family, 25)
		// Exact symbol (tier 8), the prefixes (tier 4; "zzpage 1".."9" are more similar than
		// "zzpage 10".."25"), then the typos (tier 2; "zzpag" is more similar than "zzpaeg").
		want := append(append([]string{"sol/pgsymbol"}, byScore(family)...), "eth/pgtypo1", "sol/pgtypo2")
		for _, limit := range []int{7, 1, 28} {
			assert.Equal(t, want, walkSearch(t, r, search("zzpage"), limit), "limit %d", limit)
		}
		assert.Equal(t, want, walkSearch(t, r, search("ZZPAGE"), 10), "case-insensitive")
	})

	t.Run("similar only, over several pages, when nothing matches strongly", func(t *testing.T) {
		family, mcap := fixtureTokens(t, "Qwertyuiop Asdf ", "sol", "eth")
		require.Len(t, family, 30)
		want := byScore(family)
		q := search("qwertyuiopasdf", chain.Sol, chain.Eth)
		require.Empty(t, q.Variants, "no typo spellings past 12 characters")
		for _, limit := range []int{7, 1, 30} {
			assert.Equal(t, want, walkSearch(t, r, q, limit), "limit %d", limit)
		}
		// The same candidates under another order: market cap, highest first, ties by chain
		// then address, also descending.
		byCap := append([]string(nil), want...)
		sort.Slice(byCap, func(i, j int) bool {
			if mcap[byCap[i]] != mcap[byCap[j]] {
				return mcap[byCap[i]] > mcap[byCap[j]]
			}
			return byCap[i] > byCap[j]
		})
		q.SortBy, q.Desc = ports.SearchByMarketCapInUSD, true
		assert.Equal(t, byCap, walkSearch(t, r, q, 4))
	})

	t.Run("a strong match on any listed chain hides the similar ones", func(t *testing.T) {
		// "Qwertyuiopasdfgh" (bsc) starts with the query.
		assert.Equal(t, []string{"bsc/qwprefix"}, walkSearch(t, r, search("qwertyuiopasdf"), 5))
		q := search("qwertyuiopasdf")
		q.SortBy = ports.SearchByMarketCapInUSD
		assert.Equal(t, []string{"bsc/qwprefix"}, walkSearch(t, r, q, 5))
		// On sol alone nothing matches strongly: the similar sol tokens are listed.
		family, _ := fixtureTokens(t, "Qwertyuiop Asdf ", "sol")
		assert.Equal(t, byScore(family), walkSearch(t, r, search("qwertyuiopasdf", chain.Sol), 6))
	})

	t.Run("typo, prefix and case", func(t *testing.T) {
		for _, q := range []string{"zxcvbnm", "ZXCVBNM", "zxcvnbm", "zxcvbn", "zxcbnm", "Zxc"} {
			assert.Equal(t, []string{"sol/unrelated"}, walkSearch(t, r, search(q), 5), "q=%s", q)
		}
		assert.Empty(t, walkSearch(t, r, search("qqqqqqqqqqqqqq"), 5))
		// An address by its first four characters.
		assert.Equal(t, []string{"bsc/qwprefix"}, walkSearch(t, r, search("qwpr"), 5))
		// The exact symbol first, then the one-typo symbols QW1..QW9.
		got := walkSearch(t, r, search("QWP"), 4)
		require.Len(t, got, 10)
		assert.Equal(t, "bsc/qwprefix", got[0])
	})
}
