package ndjson_test

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/ndjson"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/chainevent"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/pool"
	"github.com/tokenscope/tokenscope/domain/redpacket"
	"github.com/tokenscope/tokenscope/domain/token"
	"github.com/tokenscope/tokenscope/domain/trade"
)

func d(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func i64(v int64) *int64 { return &v }

func sampleTrade() trade.Trade {
	return trade.Trade{Chain: chain.Sol, TransactionSignature: "sig1", InstructionIndex: 2, BlockHeight: 100, BlockSlot: 101,
		BlockTimestamp: 1_700_000_000_000, Wallet: "w1", PoolAddress: "p1", Side: trade.Buy, Status: trade.Succeeded,
		TokenAddress: "t1", TokenAmount: d("100"), TokenAmountInNative: d("0.5"), TokenAmountInUSD: d("100"),
		TokenPriceInNative: d("0.005"), TokenPriceInUSD: d("1"), SideTokenAddress: "So11", SideTokenAmount: d("0.5"),
		SideTokenAmountInNative: d("0.5"), SideTokenAmountInUSD: d("100"), SideTokenPriceInNative: d("1"),
		SideTokenPriceInUSD: d("200")}
}

func TestRoundTrip(t *testing.T) {
	socials, err := token.NewSocials(map[string]string{"twitter": "@x"})
	require.NoError(t, err)
	events := []chainevent.Event{
		chainevent.TokenCreated{Token: token.Token{Address: "t1", Chain: chain.Sol, Decimals: 6, Name: "One", Symbol: "ONE",
			CreatedAt: i64(1_700_000_000_000), CreatedBlockHeight: i64(99), Socials: socials, LaunchpadTag: token.PumpFun,
			Creators: []token.Creator{{Address: "dev", Share: 100}}},
			TotalSupply: d("1000000000"), CirculatingSupply: d("800000000"), Creator: "dev", CurvePool: "c1", CurveTargetInNative: d("85")},
		chainevent.TokenMigrated{Chain: chain.Sol, Address: "t1", PoolAddress: "p2", ProgramAddress: "prog", ProtocolFamily: "fam", At: 5},
		chainevent.PoolCreated{Pool: pool.Pool{Chain: chain.Sol, Address: "p1", TokenAAddress: "t1", TokenBAddress: "So11", TokenADecimals: 6, TokenBDecimals: 9}, IsBondingCurve: true, At: 3},
		chainevent.Trade{Trade: sampleTrade()},
		chainevent.PoolSnapshot{Snapshot: pool.Snapshot{Chain: chain.Sol, PoolAddress: "p1", BlockHeight: 7, BlockTimestamp: 8, SnapshotTime: 9,
			TokenA: pool.Side{TokenAddress: "t1", VaultAmount: "123", AmountInUSD: d("1.5")}, TokenB: pool.Side{TokenAddress: "So11", VaultAmount: "0"},
			TVLInNative: d("2"), TVLInUSD: d("3")}},
		chainevent.RedPacketCreated{Packet: redpacket.RedPacket{ID: "rp1", Chain: chain.Sol, Creator: "c", Mint: "t1", MaxClaims: 3,
			TotalAmount: d("900"), ClaimedAmount: decimal.Zero, RefundedAmount: decimal.Zero, CreatedAt: 1000, Expiration: 24, ExpiredAt: 25000}},
		chainevent.RedPacketClaimed{Claim: redpacket.Claim{PacketID: "rp1", Chain: chain.Sol, Claimer: "w", Mint: "t1", Amount: d("300"), ClaimedAt: 2000}},
		chainevent.RedPacketExpired{PacketID: "rp1", At: 25000},
		chainevent.WalletLabel{Chain: chain.Sol, Wallet: "w", Label: token.Kol},
	}
	var buf bytes.Buffer
	enc := ndjson.NewEncoder(&buf)
	for _, e := range events {
		require.NoError(t, enc.Encode(e))
	}
	dec := ndjson.NewDecoder(&buf)
	for i, want := range events {
		got, err := dec.Next()
		require.NoError(t, err, "event %d", i)
		assert.Equal(t, i+1, dec.Line())
		assert.Equal(t, want.Type(), got.Type())
		// Re-encoding must give the same line: the codec loses nothing.
		a, _ := ndjson.Marshal(want)
		b, _ := ndjson.Marshal(got)
		assert.JSONEq(t, string(a), string(b))
	}
	_, err = dec.Next()
	assert.ErrorIs(t, err, io.EOF)
}

func TestDecodeErrorsNameLineAndField(t *testing.T) {
	good := `{"type":"wallet.label","chain":"sol","wallet":"w","label":"kol"}`
	tests := []struct {
		name  string
		bad   string
		field string
	}{
		{"not json", `{"type":`, ""},
		{"unknown type", `{"type":"mint"}`, "type"},
		{"missing type", `{"chain":"sol"}`, "type"},
		{"bad decimal", `{"type":"trade","chain":"sol","side":"BUY","tokenAmount":"abc"}`, "tokenAmount"},
		{"wrong json type", `{"type":"trade","blockHeight":"high"}`, "blockHeight"},
		{"unknown field", `{"type":"wallet.label","chain":"sol","wallet":"w","label":"kol","colour":"red"}`, "colour"},
		{"bad label", `{"type":"wallet.label","chain":"sol","wallet":"w","label":"whale"}`, "label"},
		{"validation: missing wallet", `{"type":"wallet.label","chain":"sol","label":"kol"}`, "wallet"},
		{"validation: bad chain", `{"type":"wallet.label","chain":"doge","wallet":"w","label":"kol"}`, "chain"},
		{"bad side", `{"type":"trade","side":"HOLD"}`, "side"},
		{"nested field", `{"type":"pool.snapshot","tokenA":{"priceUsd":"x"}}`, "tokenA.priceUsd"},
		{"bad red packet amount", `{"type":"redpacket.claimed","amount":"1.5"}`, "amount"},
		// Postgres text holds no NUL: a NUL is refused before any field is decoded, by its path.
		{"NUL in a name", `{"type":"token.created","chain":"sol","address":"a","name":"x\u0000","symbol":"X"}`, "name"},
		{"NUL in a nested field", `{"type":"token.created","chain":"sol","address":"a","name":"x","symbol":"X","extra":{"key":"\u0000"}}`, "extra.key"},
		{"NUL in a list", `{"type":"token.created","tokenCreators":[{"address":"ok"},{"address":"\u0000"}]}`, "tokenCreators[1].address"},
		{"NUL in a map key", `{"type":"token.created","socialMedias":{"x\u0000":"y"}}`, "socialMedias"},
		{"NUL in a member name", `{"type":"wallet.label","chain":"sol","wallet":"w","label":"kol","\u0000":1}`, `\u0000`},
		{"NUL in an unknown type", `{"type":"\u0000"}`, "type"},
		// Identifiers are keys of indexes, whose rows Postgres bounds (about 2.7 kB).
		{"long signature", `{"type":"trade","chain":"sol","transactionSignature":"` + strings.Repeat("s", 129) + `","side":"BUY"}`, "transactionSignature"},
		{"long wallet", `{"type":"wallet.label","chain":"sol","wallet":"` + strings.Repeat("w", 129) + `","label":"kol"}`, "wallet"},
		{"long packet id", `{"type":"redpacket.expired","packetId":"` + strings.Repeat("p", 129) + `","expiredAt":1}`, "packetId"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// The bad line is the third: a blank line counts as a line too.
			dec := ndjson.NewDecoder(strings.NewReader(good + "\n\n" + tc.bad + "\n"))
			_, err := dec.Next()
			require.NoError(t, err)
			_, err = dec.Next()
			require.Error(t, err)
			fe, ok := fault.As(err)
			require.True(t, ok)
			assert.Equal(t, fault.KindInvalid, fe.Kind)
			assert.Equal(t, 3, fe.Details["line"])
			assert.Equal(t, tc.field, fe.Param)
			assert.Contains(t, fe.Message, "line 3")
			if tc.field != "" {
				assert.Contains(t, fe.Message, `"`+tc.field+`"`)
			}
		})
	}
}

// An escaped backslash followed by u0000 is six characters of text, not a NUL.
func TestDecodeKeepsEscapedBackslash(t *testing.T) {
	e, err := ndjson.NewDecoder(strings.NewReader(`{"type":"wallet.label","chain":"sol","wallet":"w\\u0000","label":"kol"}`)).Next()
	require.NoError(t, err)
	assert.Equal(t, `w\u0000`, e.(chainevent.WalletLabel).Wallet)
}

func TestNumAcceptsNumbers(t *testing.T) {
	line := `{"type":"trade","chain":"sol","transactionSignature":"s","blockTimestamp":1,"accountOwnerAddress":"w","poolAddress":"p",` +
		`"side":"sell","status":"SUCCEEDED","tokenAddress":"t","sideTokenAddress":"q","tokenAmount":12.50,"tokenPriceInUsd":"0.1"}`
	e, err := ndjson.NewDecoder(strings.NewReader(line)).Next()
	require.NoError(t, err)
	tr := e.(chainevent.Trade)
	assert.True(t, tr.TokenAmount.Equal(d("12.5")))
	assert.Equal(t, trade.Sell, tr.Side)
}

// Lines that begin {"type":"word" take a one-pass path; it must decide exactly as the general
// path does, including on a repeated "type", trailing data, escapes, a differently cased key, a
// bad value and a line the general path refuses.
func TestTypeFirstLinesDecodeAsTheGeneralPath(t *testing.T) {
	trade, err := ndjson.Marshal(chainevent.Trade{Trade: sampleTrade()})
	require.NoError(t, err)
	tr := string(trade)
	require.True(t, strings.HasPrefix(tr, `{"type":"trade",`), tr)
	body := strings.TrimPrefix(tr, `{"type":"trade",`)
	lines := []string{
		tr,
		tr + ` `,
		tr + ` {}`,
		tr + `x`,
		`{"type":"trade",` + body[:len(body)-1] + `,"type":"wallet.label"}`,
		`{"type":"wallet.label",` + body[:len(body)-1] + `,"TYPE":"trade"}`,
		`{"type":"trade",` + strings.Replace(body, `"tokenAmount":"100"`, `"tokenAmount":"1\u0030"`, 1),
		`{"type":"trade",` + strings.Replace(body, `"tokenAmount":"100"`, `"tokenAmount":"1é"`, 1),
		`{"type":"trade",` + strings.Replace(body, `"tokenAmount":"100"`, `"tokenAmount":true`, 1),
		`{"type":"trade",` + strings.Replace(body, `"accountOwnerAddress":"w1"`, `"accountOwnerAddress":"w\"1"`, 1),
		`{"type":"trade",` + strings.Replace(body, `"accountOwnerAddress":"w1",`, ``, 1),
		`{"type":"trade","extra":1,` + body,
		`{"type":"trade",` + body[:len(body)-2],
		`{"type":"tr\u0061de",` + body,
		`{"type":"nope",` + body,
		`{"type":"",` + body,
		`{"type":"wallet.label","chain":"sol","wallet":"w","label":"kol"}`,
	}
	for i, line := range lines {
		if i > 0 {
			require.NotEqual(t, tr, line, "case %d changes the line", i)
		}
		e, field, err := ndjson.Unmarshal([]byte(line))
		we, wfield, werr := ndjson.UnmarshalGeneral([]byte(line))
		assert.Equal(t, we, e, line)
		assert.Equal(t, wfield, field, line)
		assert.Equal(t, fmt.Sprint(werr), fmt.Sprint(err), line)
	}
}

// Trade lines take a hand-written scanner before encoding/json; whatever it accepts must decode
// exactly as the general path does, and whatever it refuses is left to encoding/json. The seeds
// cover what the scanner decides itself (numbers, whitespace, repeated keys, non-ASCII) and what
// it must hand over (null, escapes, wrong kinds, overflows, unknown or differently cased keys).
func FuzzTradeLinesDecodeAsTheGeneralPath(f *testing.F) {
	line, err := ndjson.Marshal(chainevent.Trade{Trade: sampleTrade()})
	require.NoError(f, err)
	tr := string(line)
	body := strings.TrimPrefix(tr, `{"type":"trade",`)
	replace := func(old, new string) string {
		require.Contains(f, tr, old)
		return strings.Replace(tr, old, new, 1)
	}
	for _, s := range []string{
		tr,
		` ` + tr + "\t",
		`{"type":"trade" , ` + strings.ReplaceAll(body, `":`, `" :`+"\n"),
		replace(`"tokenAmount":"100"`, `"tokenAmount":100`),
		replace(`"tokenAmount":"100"`, `"tokenAmount":-0.5e-3`),
		replace(`"tokenAmount":"100"`, `"tokenAmount":1E+400`),
		replace(`"tokenAmount":"100"`, `"tokenAmount":01`),
		replace(`"tokenAmount":"100"`, `"tokenAmount":1.`),
		replace(`"tokenAmount":"100"`, `"tokenAmount":-`),
		replace(`"tokenAmount":"100"`, `"tokenAmount":null`),
		replace(`"tokenAmount":"100"`, `"tokenAmount":"abc"`),
		replace(`"tokenAmount":"100"`, `"tokenAmount":"1é"`),
		replace(`"tokenAmount":"100"`, `"tokenAmount":"1\u00e9"`),
		replace(`"tokenAmount":"100"`, `"tokenAmount":"100","tokenAmount":"7"`),
		replace(`"instructionIndex":2`, `"instructionIndex":2147483648`),
		replace(`"instructionIndex":2`, `"instructionIndex":-0`),
		replace(`"instructionIndex":2`, `"instructionIndex":2.0`),
		replace(`"instructionIndex":2`, `"instructionIndex":2e0`),
		replace(`"instructionIndex":2`, `"instructionIndex":"2"`),
		replace(`"blockHeight":100`, `"blockHeight":9223372036854775808`),
		replace(`"blockHeight":100`, `"blockHeight":null`),
		replace(`"accountOwnerAddress":"w1"`, `"accountOwnerAddress":"wé1"`),
		replace(`"accountOwnerAddress":"w1"`, "\"accountOwnerAddress\":\"w\xff1\""),
		replace(`"accountOwnerAddress":"w1"`, "\"accountOwnerAddress\":\"w\t1\""),
		replace(`"accountOwnerAddress":"w1"`, `"accountOwnerAddress":"w\/1"`),
		replace(`"accountOwnerAddress":"w1"`, `"accountOwnerAddress":1`),
		replace(`"accountOwnerAddress":"w1"`, `"AccountOwnerAddress":"w1"`),
		replace(`"accountOwnerAddress":"w1"`, `"accountOwnerAddress":"w1","accountOwnerAddress":"w2"`),
		replace(`"side":"BUY"`, `"side":"buy"`),
		replace(`"side":"BUY"`, `"side":"HOLD"`),
		replace(`"status":"SUCCEEDED"`, `"status":"FAILED"`),
		`{"type":"trade","unknown":1,` + body,
		`{"type":"trade",` + body + `,`,
		`{"type":"trade",` + strings.TrimSuffix(body, `}`) + `,}`,
		`{"type":"trade",` + strings.TrimSuffix(body, `}`) + `,"type":"wallet.label"}`,
		`{"type":"trade"}`,
		`{"type":"trade",}`,
		`{"type":"trade"` + body,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		e, field, err := ndjson.Unmarshal([]byte(line))
		we, wfield, werr := ndjson.UnmarshalGeneral([]byte(line))
		assert.Equal(t, we, e, line)
		assert.Equal(t, wfield, field, line)
		assert.Equal(t, fmt.Sprint(werr), fmt.Sprint(err), line)
	})
}

// A value ingest cannot store or serve is refused on its line, naming the field, with at most a
// short prefix of it repeated; a decimal's text too long for any valid decimal is refused before
// it is parsed (a 500,000-digit number took 2.8 s and 230 MB on its way to a 500).
func TestDecodeRefusesUnboundedValues(t *testing.T) {
	line, err := ndjson.Marshal(chainevent.Trade{Trade: sampleTrade()})
	require.NoError(t, err)
	tr := string(line)
	replace := func(old, new string) string {
		require.Contains(t, tr, old)
		return strings.Replace(tr, old, new, 1)
	}
	digits := strings.Repeat("9", 500_000)
	tests := []struct {
		name, line, field string
	}{
		{"500,000-digit string", replace(`"tokenPriceInUsd":"1"`, `"tokenPriceInUsd":"`+digits+`"`), "tokenPriceInUsd"},
		{"500,000-digit number", replace(`"tokenPriceInUsd":"1"`, `"tokenPriceInUsd":`+digits), "tokenPriceInUsd"},
		{"131,072 integer digits", replace(`"tokenAmount":"100"`, `"tokenAmount":"`+strings.Repeat("1", 131_072)+`"`), "tokenAmount"},
		{"1e10000", replace(`"tokenAmountInUsd":"100"`, `"tokenAmountInUsd":"1e10000"`), "tokenAmountInUsd"},
		{"1e-99999", replace(`"tokenAmountInUsd":"100"`, `"tokenAmountInUsd":1e-99999`), "tokenAmountInUsd"},
		{"status outside the enum", replace(`"status":"SUCCEEDED"`, `"status":"WHATEVER"`), "status"},
		{"long red packet amount", `{"type":"redpacket.claimed","packetId":"p","chain":"sol","claimer":"c","mint":"m","amount":"` +
			digits + `","claimedAt":1}`, "amount"},
		{"long vault amount", `{"type":"pool.snapshot","chain":"sol","poolAddress":"p","blockHeight":1,"blockTimestamp":1,"snapshotTime":1,` +
			`"tokenA":{"tokenAddress":"a","vaultAmount":"` + digits + `"},"tokenB":{"tokenAddress":"b","vaultAmount":"1"}}`, "tokenA.vaultAmount"},
		{"long name", `{"type":"token.created","chain":"sol","address":"a","name":"` + strings.Repeat("n", 2700) + `","symbol":"S"}`, "name"},
		{"long imageUrl", `{"type":"token.created","chain":"sol","address":"a","name":"n","symbol":"S","imageUrl":"` +
			strings.Repeat("u", 100_000) + `"}`, "imageUrl"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ndjson.NewDecoder(strings.NewReader(tr + "\n" + tc.line + "\n")).Next()
			require.NoError(t, err, "the first line is valid")
			dec := ndjson.NewDecoder(strings.NewReader(tr + "\n" + tc.line + "\n"))
			_, _ = dec.Next()
			_, err = dec.Next()
			require.Error(t, err)
			fe, ok := fault.As(err)
			require.True(t, ok, "%v", err)
			assert.Equal(t, fault.KindInvalid, fe.Kind)
			assert.Equal(t, tc.field, fe.Param)
			assert.Equal(t, 2, fe.Details["line"])
			assert.Contains(t, fe.Message, `line 2: field "`+tc.field+`"`)
			assert.LessOrEqual(t, len(fe.Message), 300, "%.300s", fe.Message)
			assert.LessOrEqual(t, len(fe.Value), 80)
		})
	}
}

// A status is upper-cased; a zero keeps no exponent.
func TestDecodeNormalisesStatusAndZero(t *testing.T) {
	line, err := ndjson.Marshal(chainevent.Trade{Trade: sampleTrade()})
	require.NoError(t, err)
	l := strings.Replace(string(line), `"status":"SUCCEEDED"`, `"status":"failed"`, 1)
	l = strings.Replace(l, `"tokenAmountInUsd":"100"`, `"tokenAmountInUsd":"0e-100"`, 1)
	e, err := ndjson.NewDecoder(strings.NewReader(l)).Next()
	require.NoError(t, err)
	got := e.(chainevent.Trade)
	assert.Equal(t, trade.Failed, got.Status)
	assert.Equal(t, "0", got.TokenAmountInUSD.String())
}
