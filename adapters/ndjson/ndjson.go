// Package ndjson is the wire format of chain events: one JSON object per line, "type" naming the
// event. It is shared by POST /v2/ingest, `tokenscope import` and `tokenscope simulate` (whose
// output import reads back), so it lives here rather than in the HTTP adapter; domain/chainevent
// keeps the events and their validation. Decoding keeps decimals as text until they are parsed
// with their field name at hand (never through float64), refuses unknown members, and reports a
// bad line as chainevent.LineError naming the line and the field. It may import the standard
// library, shopspring/decimal and domain packages.
package ndjson

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/chainevent"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/pool"
	"github.com/tokenscope/tokenscope/domain/redpacket"
	"github.com/tokenscope/tokenscope/domain/text"
	"github.com/tokenscope/tokenscope/domain/token"
	"github.com/tokenscope/tokenscope/domain/trade"
)

// MaxLineBytes bounds one NDJSON line; a longer line is an error rather than unbounded memory.
const MaxLineBytes = 1 << 20

// Num is a decimal on the wire: a JSON string ("1.5") or a JSON number (1.5), kept as text until
// it is parsed with its field name at hand, so no value passes through float64.
type Num string

// UnmarshalJSON accepts a string or a number literal.
func (n *Num) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		// b is a valid string literal (encoding/json checked it): without escapes or non-ASCII
		// bytes it stands for exactly the bytes between its quotes.
		if inner := b[1 : len(b)-1]; plainASCII(inner) {
			*n = Num(inner)
			return nil
		}
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*n = Num(s)
		return nil
	}
	if len(b) > 0 && (b[0] == '-' || (b[0] >= '0' && b[0] <= '9')) {
		*n = Num(b)
		return nil
	}
	if string(b) == "null" {
		return nil
	}
	return &json.UnmarshalTypeError{Value: "non-numeric " + string(b), Type: typeOfNum}
}

var typeOfNum = reflect.TypeOf(Num(""))

// plainASCII reports whether b holds only ASCII bytes and no backslash.
func plainASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 || c == '\\' {
			return false
		}
	}
	return true
}

// Decoder reads NDJSON events one line at a time.
type Decoder struct {
	s    *bufio.Scanner
	line int
}

// NewDecoder reads from r.
func NewDecoder(r io.Reader) *Decoder {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 64*1024), MaxLineBytes)
	return &Decoder{s: s}
}

// Next returns the next event, io.EOF after the last one. Blank lines are skipped. A malformed or
// invalid line yields a *fault.Error naming the line and the field.
func (d *Decoder) Next() (chainevent.Event, error) {
	for d.s.Scan() {
		d.line++
		b := bytes.TrimSpace(d.s.Bytes())
		if len(b) == 0 {
			continue
		}
		e, field, err := Unmarshal(b)
		if err != nil {
			return nil, chainevent.LineError(d.line, field, err)
		}
		if err := e.Validate(); err != nil {
			return nil, chainevent.LineError(d.line, "", err)
		}
		return e, nil
	}
	if err := d.s.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, chainevent.LineError(d.line+1, "", fmt.Errorf("line longer than %d bytes", MaxLineBytes))
		}
		return nil, err
	}
	return nil, io.EOF
}

// Unmarshal decodes one NDJSON object into its event without validating it; on error it also
// returns the offending field ("" when the line is not JSON at all). A NUL in any string is
// refused first (text.CheckJSON): Postgres cannot store it, and no field is decoded past it.
func Unmarshal(b []byte) (chainevent.Event, string, error) {
	if err := text.CheckJSON(b); err != nil {
		fe, _ := fault.As(err)
		return nil, fe.Param, err
	}
	if e, ok := unmarshalTypeFirst(b); ok {
		return e, "", nil
	}
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, jsonField(err), jsonReason(err)
	}
	return unmarshalAs(b, head.Type)
}

// typeFirst is how the lines this package writes begin: "type" first, a plain word.
var typeFirst = []byte(`{"type":"`)

// unmarshalTypeFirst is Unmarshal's one-pass path for a line that begins {"type":"word", decoded
// straight into that word's event. It reports false, and Unmarshal takes its general path (which
// reads "type" first, then decodes), unless the result is certainly the same: the line decoded
// without error, nothing follows the object, and the decoded "type" (the last one, should a line
// repeat it) is the word it began with.
func unmarshalTypeFirst(b []byte) (chainevent.Event, bool) {
	if !bytes.HasPrefix(b, typeFirst) {
		return nil, false
	}
	rest := b[len(typeFirst):]
	end := bytes.IndexByte(rest, '"')
	if end <= 0 || !plainASCII(rest[:end]) {
		return nil, false
	}
	typ := string(rest[:end])
	if typ == string(chainevent.TypeTrade) {
		var tw tradeWire
		if scanTrade(b, &tw) && tw.Type == typ {
			p := &parser{}
			if e := tw.event(p); p.err == nil {
				return e, true
			}
			return nil, false
		}
	}
	w := newWire(chainevent.Type(typ))
	if w == nil {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(w); err != nil || len(bytes.TrimSpace(b[dec.InputOffset():])) > 0 {
		return nil, false
	}
	if reflect.ValueOf(w).Elem().FieldByName("Type").String() != typ {
		return nil, false
	}
	p := &parser{}
	e := w.event(p)
	if p.err != nil {
		return nil, false
	}
	return e, true
}

// newWire is the wire form of events of type t, nil for an unknown type.
func newWire(t chainevent.Type) wire {
	switch t {
	case chainevent.TypeTokenCreated:
		return &tokenWire{}
	case chainevent.TypeTokenMigrated:
		return &migratedWire{}
	case chainevent.TypePoolCreated:
		return &poolWire{}
	case chainevent.TypeTrade:
		return &tradeWire{}
	case chainevent.TypePoolSnapshot:
		return &snapshotWire{}
	case chainevent.TypeRedPacketCreated:
		return &packetWire{}
	case chainevent.TypeRedPacketClaimed:
		return &claimWire{}
	case chainevent.TypeRedPacketExpired:
		return &expiredWire{}
	case chainevent.TypeWalletLabel:
		return &labelWire{}
	}
	return nil
}

// unmarshalAs decodes b as an event of type typ (Unmarshal's general path).
func unmarshalAs(b []byte, typ string) (chainevent.Event, string, error) {
	w := newWire(chainevent.Type(typ))
	switch {
	case w != nil:
	case typ == "":
		return nil, "type", fault.Missing("type")
	default:
		allowed := make([]string, len(chainevent.AllTypes))
		for i, t := range chainevent.AllTypes {
			allowed[i] = string(t)
		}
		return nil, "type", fault.InvalidParam("type", typ, allowed...)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(w); err != nil {
		return nil, jsonField(err), jsonReason(err)
	}
	p := &parser{}
	e := w.event(p)
	if p.err != nil {
		return nil, p.field, p.err
	}
	return e, "", nil
}

func jsonField(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return te.Field
	}
	if msg := err.Error(); strings.HasPrefix(msg, "json: unknown field ") {
		f, _ := strconv.Unquote(strings.TrimPrefix(msg, "json: unknown field "))
		return f
	}
	return ""
}

func jsonReason(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Errorf("cannot use JSON %s here", te.Value)
	}
	if strings.HasPrefix(err.Error(), "json: unknown field ") {
		return errors.New("unknown field")
	}
	return fmt.Errorf("not a JSON object: %w", err)
}

// parser converts wire text into domain values, keeping the first failure with its field.
type parser struct {
	field string
	err   error
}

func (p *parser) fail(field string, err error) {
	if p.err == nil {
		p.field, p.err = field, err
	}
}

// dec parses a required decimal; an absent value is zero so optional amounts may be left out.
// A text too long for any decimal ingest takes is refused before it is parsed, and a zero is
// plain 0 whatever exponent it was written with (0e-99999 would print 99,999 zeros).
func (p *parser) dec(field string, n Num) decimal.Decimal {
	if n == "" {
		return decimal.Zero
	}
	if err := chainevent.CheckDecimalText(field, string(n)); err != nil {
		p.fail(field, err)
		return decimal.Zero
	}
	if d, ok := plainDecimal(string(n)); ok {
		return d
	}
	d, err := decimal.NewFromString(string(n))
	if err != nil {
		p.fail(field, fault.Invalid(field, text.Shown(string(n)), "must be a decimal number"))
		return decimal.Zero
	}
	if d.IsZero() {
		return decimal.Zero
	}
	return d
}

// amount parses an integer amount in smallest units; a text longer than any such amount ingest
// takes is refused before it is parsed.
func (p *parser) amount(field, s string) decimal.Decimal {
	if len(s) > chainevent.MaxSmallestUnitDigits {
		p.fail(field, fault.Invalid(field, text.Shown(s), "must have at most "+strconv.Itoa(chainevent.MaxSmallestUnitDigits)+" digits"))
		return decimal.Zero
	}
	d, err := redpacket.ParseAmount(field, s)
	if err != nil {
		p.fail(field, err)
	}
	return d
}

func (p *parser) group(field, s string) token.HolderGroup {
	g, err := token.ParseHolderGroup(field, s)
	if err != nil {
		p.fail(field, err)
	}
	return g
}

type wire interface {
	event(p *parser) chainevent.Event
}

type tokenWire struct {
	Type                    string            `json:"type"`
	Chain                   string            `json:"chain"`
	Address                 string            `json:"address"`
	Decimals                int32             `json:"decimals"`
	Name                    string            `json:"name"`
	Symbol                  string            `json:"symbol"`
	VendorCoinID            string            `json:"vendorCoinId,omitempty"`
	Description             string            `json:"description,omitempty"`
	ImageURL                string            `json:"imageUrl,omitempty"`
	Market                  string            `json:"market,omitempty"`
	MetadataAddress         string            `json:"metadataAddress,omitempty"`
	URI                     string            `json:"uri,omitempty"`
	DevTotalTokens          *int64            `json:"devTotalTokens,omitempty"`
	DevLastTokenCreatedAt   *time.Time        `json:"devLastTokenCreatedAt,omitempty"`
	TokenCreatedAt          *int64            `json:"tokenCreatedAt,omitempty"`
	TokenCreatedBlockHeight *int64            `json:"tokenCreatedBlockHeight,omitempty"`
	TokenCreatedSlot        *int64            `json:"tokenCreatedSlot,omitempty"`
	TokenCreatedTxSignature string            `json:"tokenCreatedTxSignature,omitempty"`
	TokenCreators           []token.Creator   `json:"tokenCreators,omitempty"`
	Extra                   token.Extra       `json:"extra"`
	SocialMedias            map[string]string `json:"socialMedias,omitempty"`
	LaunchpadTag            string            `json:"launchpadTag,omitempty"`
	TotalSupply             Num               `json:"totalSupply"`
	CirculatingSupply       Num               `json:"circulatingSupply"`
	Creator                 string            `json:"creator,omitempty"`
	CurvePool               string            `json:"curvePool,omitempty"`
	CurveTargetInNative     Num               `json:"curveTargetInNative,omitempty"`
}

func (w *tokenWire) event(p *parser) chainevent.Event {
	socials, err := token.NewSocials(w.SocialMedias)
	if err != nil {
		p.fail("socialMedias", err)
	}
	creators := append(make([]token.Creator, 0, len(w.TokenCreators)), w.TokenCreators...)
	e := chainevent.TokenCreated{
		Token: token.Token{
			Address: w.Address, Chain: chain.Chain(w.Chain), Decimals: w.Decimals, Name: w.Name, Symbol: w.Symbol,
			VendorCoinID: w.VendorCoinID, Description: w.Description, DevLastTokenCreatedAt: w.DevLastTokenCreatedAt,
			DevTotalTokens: w.DevTotalTokens, ImageURL: w.ImageURL, Market: w.Market, MetadataAddress: w.MetadataAddress,
			URI: w.URI, CreatedAt: w.TokenCreatedAt, CreatedBlockHeight: w.TokenCreatedBlockHeight,
			CreatedSlot: w.TokenCreatedSlot, CreatedTxSignature: w.TokenCreatedTxSignature, Creators: creators,
			Extra: w.Extra, Socials: socials, LaunchpadTag: token.Tag(w.LaunchpadTag),
		},
		TotalSupply:         p.dec("totalSupply", w.TotalSupply),
		CirculatingSupply:   p.dec("circulatingSupply", w.CirculatingSupply),
		Creator:             w.Creator,
		CurvePool:           w.CurvePool,
		CurveTargetInNative: p.dec("curveTargetInNative", w.CurveTargetInNative),
	}
	if e.Creator == "" && len(creators) > 0 {
		e.Creator = creators[0].Address
	}
	return e
}

type migratedWire struct {
	Type                     string `json:"type"`
	Chain                    string `json:"chain"`
	Address                  string `json:"address"`
	MigratedToPoolAddress    string `json:"migratedToPoolAddress"`
	MigratedToProgramAddress string `json:"migratedToProgramAddress,omitempty"`
	MigratedToProtocolFamily string `json:"migratedToProtocolFamily,omitempty"`
	MigratedAt               int64  `json:"migratedAt"`
}

func (w *migratedWire) event(*parser) chainevent.Event {
	return chainevent.TokenMigrated{Chain: chain.Chain(w.Chain), Address: w.Address, PoolAddress: w.MigratedToPoolAddress,
		ProgramAddress: w.MigratedToProgramAddress, ProtocolFamily: w.MigratedToProtocolFamily, At: w.MigratedAt}
}

type poolWire struct {
	Type           string `json:"type"`
	Chain          string `json:"chain"`
	PoolAddress    string `json:"poolAddress"`
	ProgramAddress string `json:"programAddress,omitempty"`
	ProtocolFamily string `json:"protocolFamily,omitempty"`
	ProtocolName   string `json:"protocolName,omitempty"`
	Image          string `json:"image,omitempty"`
	TokenAAddress  string `json:"tokenAAddress"`
	TokenADecimals int32  `json:"tokenADecimals"`
	TokenBAddress  string `json:"tokenBAddress"`
	TokenBDecimals int32  `json:"tokenBDecimals"`
	IsBondingCurve bool   `json:"isBondingCurve"`
	CreatedAt      int64  `json:"createdAt"`
}

func (w *poolWire) event(*parser) chainevent.Event {
	return chainevent.PoolCreated{Pool: pool.Pool{Chain: chain.Chain(w.Chain), Address: w.PoolAddress, ProgramAddress: w.ProgramAddress,
		ProtocolFamily: w.ProtocolFamily, ProtocolName: w.ProtocolName, Image: w.Image, TokenAAddress: w.TokenAAddress,
		TokenADecimals: w.TokenADecimals, TokenBAddress: w.TokenBAddress, TokenBDecimals: w.TokenBDecimals},
		IsBondingCurve: w.IsBondingCurve, At: w.CreatedAt}
}

type tradeWire struct {
	Type                    string `json:"type"`
	Chain                   string `json:"chain"`
	TransactionSignature    string `json:"transactionSignature"`
	InstructionIndex        int32  `json:"instructionIndex"`
	BlockHeight             int64  `json:"blockHeight"`
	BlockSlot               int64  `json:"blockSlot,omitempty"`
	BlockTimestamp          int64  `json:"blockTimestamp"`
	AccountOwnerAddress     string `json:"accountOwnerAddress"`
	PoolAddress             string `json:"poolAddress"`
	Side                    string `json:"side"`
	Status                  string `json:"status"`
	TokenAddress            string `json:"tokenAddress"`
	TokenName               string `json:"tokenName,omitempty"`
	TokenSymbol             string `json:"tokenSymbol,omitempty"`
	TokenImageURL           string `json:"tokenImageUrl,omitempty"`
	TokenAmount             Num    `json:"tokenAmount"`
	TokenAmountInNative     Num    `json:"tokenAmountInNative"`
	TokenAmountInUSD        Num    `json:"tokenAmountInUsd"`
	TokenPriceInNative      Num    `json:"tokenPriceInNative"`
	TokenPriceInUSD         Num    `json:"tokenPriceInUsd"`
	SideTokenAddress        string `json:"sideTokenAddress"`
	SideTokenName           string `json:"sideTokenName,omitempty"`
	SideTokenSymbol         string `json:"sideTokenSymbol,omitempty"`
	SideTokenImageURL       string `json:"sideTokenImageUrl,omitempty"`
	SideTokenAmount         Num    `json:"sideTokenAmount"`
	SideTokenAmountInNative Num    `json:"sideTokenAmountInNative"`
	SideTokenAmountInUSD    Num    `json:"sideTokenAmountInUsd"`
	SideTokenPriceInNative  Num    `json:"sideTokenPriceInNative"`
	SideTokenPriceInUSD     Num    `json:"sideTokenPriceInUsd"`
	DexImage                string `json:"dexImage,omitempty"`
	DexProgramAddress       string `json:"dexProgramAddress,omitempty"`
	DexProtocolFamily       string `json:"dexProtocolFamily,omitempty"`
}

// The wire names the side "type" like the trade record does, but "type" already names the event,
// so a trade line carries BUY/SELL in "side".
func (w *tradeWire) event(p *parser) chainevent.Event {
	side, err := trade.ParseSide("side", w.Side)
	if err != nil {
		p.fail("side", err)
	}
	return chainevent.Trade{Trade: trade.Trade{
		Chain: chain.Chain(w.Chain), TransactionSignature: w.TransactionSignature, InstructionIndex: w.InstructionIndex,
		BlockHeight: w.BlockHeight, BlockSlot: w.BlockSlot, BlockTimestamp: w.BlockTimestamp, Wallet: w.AccountOwnerAddress,
		PoolAddress: w.PoolAddress, Side: side, Status: status(w.Status),
		TokenAddress: w.TokenAddress, TokenName: w.TokenName, TokenSymbol: w.TokenSymbol, TokenImageURL: w.TokenImageURL,
		TokenAmount:         p.dec("tokenAmount", w.TokenAmount),
		TokenAmountInNative: p.dec("tokenAmountInNative", w.TokenAmountInNative),
		TokenAmountInUSD:    p.dec("tokenAmountInUsd", w.TokenAmountInUSD),
		TokenPriceInNative:  p.dec("tokenPriceInNative", w.TokenPriceInNative),
		TokenPriceInUSD:     p.dec("tokenPriceInUsd", w.TokenPriceInUSD),
		SideTokenAddress:    w.SideTokenAddress, SideTokenName: w.SideTokenName, SideTokenSymbol: w.SideTokenSymbol,
		SideTokenImageURL:       w.SideTokenImageURL,
		SideTokenAmount:         p.dec("sideTokenAmount", w.SideTokenAmount),
		SideTokenAmountInNative: p.dec("sideTokenAmountInNative", w.SideTokenAmountInNative),
		SideTokenAmountInUSD:    p.dec("sideTokenAmountInUsd", w.SideTokenAmountInUSD),
		SideTokenPriceInNative:  p.dec("sideTokenPriceInNative", w.SideTokenPriceInNative),
		SideTokenPriceInUSD:     p.dec("sideTokenPriceInUsd", w.SideTokenPriceInUSD),
		DexImage:                w.DexImage, DexProgramAddress: w.DexProgramAddress, DexProtocolFamily: w.DexProtocolFamily,
	}}
}

// status is the trade status upper-cased when it is one of the two; anything else is left for
// Validate to refuse (naming the field, with the allowed values).
func status(s string) trade.Status {
	if st, err := trade.ParseStatus("status", s); err == nil {
		return st
	}
	return trade.Status(s)
}

type sideWire struct {
	AmountInNative Num    `json:"amountInNative"`
	AmountInUSD    Num    `json:"amountInUsd"`
	Decimals       int32  `json:"decimals"`
	PriceNative    Num    `json:"priceNative"`
	PriceUSD       Num    `json:"priceUsd"`
	TokenAddress   string `json:"tokenAddress"`
	VaultAmount    string `json:"vaultAmount"`
}

func (s sideWire) side(p *parser, name string) pool.Side {
	return pool.Side{TokenAddress: s.TokenAddress, Decimals: s.Decimals, VaultAmount: pool.VaultAmount(s.VaultAmount),
		AmountInNative: p.dec(name+".amountInNative", s.AmountInNative),
		AmountInUSD:    p.dec(name+".amountInUsd", s.AmountInUSD),
		PriceNative:    p.dec(name+".priceNative", s.PriceNative),
		PriceUSD:       p.dec(name+".priceUsd", s.PriceUSD)}
}

type snapshotWire struct {
	Type           string   `json:"type"`
	Chain          string   `json:"chain"`
	PoolAddress    string   `json:"poolAddress"`
	BlockHeight    int64    `json:"blockHeight"`
	BlockSlot      *int64   `json:"blockSlot,omitempty"`
	BlockTimestamp int64    `json:"blockTimestamp"`
	SnapshotTime   int64    `json:"snapshotTime"`
	TokenA         sideWire `json:"tokenA"`
	TokenB         sideWire `json:"tokenB"`
	TVLInNative    Num      `json:"tvlInNative"`
	TVLInUSD       Num      `json:"tvlInUsd"`
}

func (w *snapshotWire) event(p *parser) chainevent.Event {
	return chainevent.PoolSnapshot{Snapshot: pool.Snapshot{Chain: chain.Chain(w.Chain), PoolAddress: w.PoolAddress, BlockHeight: w.BlockHeight,
		BlockSlot: w.BlockSlot, BlockTimestamp: w.BlockTimestamp, SnapshotTime: w.SnapshotTime,
		TokenA: w.TokenA.side(p, "tokenA"), TokenB: w.TokenB.side(p, "tokenB"),
		TVLInNative: p.dec("tvlInNative", w.TVLInNative), TVLInUSD: p.dec("tvlInUsd", w.TVLInUSD)}}
}

type packetWire struct {
	Type           string `json:"type"`
	ID             string `json:"id"`
	Chain          string `json:"chain"`
	Creator        string `json:"creator"`
	ClaimAuthority string `json:"claimAuthority,omitempty"`
	Mint           string `json:"mint"`
	MaxClaims      int32  `json:"maxClaims"`
	TotalAmount    string `json:"totalAmount"`
	CreatedAt      int64  `json:"createdAt"`
	// Expiration is in seconds; expiredAt defaults to createdAt + expiration × 1000.
	Expiration int64  `json:"expiration"`
	ExpiredAt  int64  `json:"expiredAt,omitempty"`
	Memo       string `json:"memo,omitempty"`
	ShareID    string `json:"shareId,omitempty"`
	TxHash     string `json:"txHash,omitempty"`
}

func (w *packetWire) event(p *parser) chainevent.Event {
	expiredAt := w.ExpiredAt
	if expiredAt == 0 {
		expiredAt = redpacket.ExpiresAt(w.CreatedAt, w.Expiration)
	}
	return chainevent.RedPacketCreated{Packet: redpacket.RedPacket{ID: w.ID, Chain: chain.Chain(w.Chain), Creator: w.Creator,
		ClaimAuthority: w.ClaimAuthority, Mint: w.Mint, MaxClaims: w.MaxClaims,
		TotalAmount: p.amount("totalAmount", w.TotalAmount), ClaimedAmount: decimal.Zero, RefundedAmount: decimal.Zero,
		CreatedAt: w.CreatedAt, ExpiredAt: expiredAt, Expiration: w.Expiration, Memo: w.Memo, ShareID: w.ShareID, TxHash: w.TxHash}}
}

type claimWire struct {
	Type      string `json:"type"`
	PacketID  string `json:"packetId"`
	Chain     string `json:"chain"`
	Claimer   string `json:"claimer"`
	Mint      string `json:"mint"`
	Creator   string `json:"creator,omitempty"`
	Amount    string `json:"amount"`
	ClaimedAt int64  `json:"claimedAt"`
	TxHash    string `json:"txHash,omitempty"`
}

func (w *claimWire) event(p *parser) chainevent.Event {
	return chainevent.RedPacketClaimed{Claim: redpacket.Claim{PacketID: w.PacketID, Chain: chain.Chain(w.Chain), Claimer: w.Claimer,
		Mint: w.Mint, Creator: w.Creator, Amount: p.amount("amount", w.Amount), ClaimedAt: w.ClaimedAt, TxHash: w.TxHash}}
}

type expiredWire struct {
	Type      string `json:"type"`
	PacketID  string `json:"packetId"`
	ExpiredAt int64  `json:"expiredAt"`
}

func (w *expiredWire) event(*parser) chainevent.Event {
	return chainevent.RedPacketExpired{PacketID: w.PacketID, At: w.ExpiredAt}
}

type labelWire struct {
	Type   string `json:"type"`
	Chain  string `json:"chain"`
	Wallet string `json:"wallet"`
	Label  string `json:"label"`
}

func (w *labelWire) event(p *parser) chainevent.Event {
	return chainevent.WalletLabel{Chain: chain.Chain(w.Chain), Wallet: w.Wallet, Label: p.group("label", w.Label)}
}

// Marshal renders e as one NDJSON object (without the newline). Decimals are written as strings.
func Marshal(e chainevent.Event) ([]byte, error) {
	var w any
	switch v := e.(type) {
	case chainevent.TokenCreated:
		t := v.Token
		creators := append(make([]token.Creator, 0, len(t.Creators)), t.Creators...)
		w = tokenWire{Type: string(chainevent.TypeTokenCreated), Chain: string(t.Chain), Address: t.Address, Decimals: t.Decimals,
			Name: t.Name, Symbol: t.Symbol, VendorCoinID: t.VendorCoinID, Description: t.Description, ImageURL: t.ImageURL,
			Market: t.Market, MetadataAddress: t.MetadataAddress, URI: t.URI, DevTotalTokens: t.DevTotalTokens,
			DevLastTokenCreatedAt: t.DevLastTokenCreatedAt, TokenCreatedAt: t.CreatedAt,
			TokenCreatedBlockHeight: t.CreatedBlockHeight, TokenCreatedSlot: t.CreatedSlot,
			TokenCreatedTxSignature: t.CreatedTxSignature, TokenCreators: creators, Extra: t.Extra,
			SocialMedias: t.Socials.Map(), LaunchpadTag: string(t.LaunchpadTag),
			TotalSupply: num(v.TotalSupply), CirculatingSupply: num(v.CirculatingSupply), Creator: v.Creator,
			CurvePool: v.CurvePool, CurveTargetInNative: num(v.CurveTargetInNative)}
	case chainevent.TokenMigrated:
		w = migratedWire{Type: string(chainevent.TypeTokenMigrated), Chain: string(v.Chain), Address: v.Address,
			MigratedToPoolAddress: v.PoolAddress, MigratedToProgramAddress: v.ProgramAddress,
			MigratedToProtocolFamily: v.ProtocolFamily, MigratedAt: v.At}
	case chainevent.PoolCreated:
		p := v.Pool
		w = poolWire{Type: string(chainevent.TypePoolCreated), Chain: string(p.Chain), PoolAddress: p.Address,
			ProgramAddress: p.ProgramAddress, ProtocolFamily: p.ProtocolFamily, ProtocolName: p.ProtocolName, Image: p.Image,
			TokenAAddress: p.TokenAAddress, TokenADecimals: p.TokenADecimals, TokenBAddress: p.TokenBAddress,
			TokenBDecimals: p.TokenBDecimals, IsBondingCurve: v.IsBondingCurve, CreatedAt: v.At}
	case chainevent.Trade:
		t := v.Trade
		w = tradeWire{Type: string(chainevent.TypeTrade), Chain: string(t.Chain), TransactionSignature: t.TransactionSignature,
			InstructionIndex: t.InstructionIndex, BlockHeight: t.BlockHeight, BlockSlot: t.BlockSlot,
			BlockTimestamp: t.BlockTimestamp, AccountOwnerAddress: t.Wallet, PoolAddress: t.PoolAddress,
			Side: string(t.Side), Status: string(t.Status), TokenAddress: t.TokenAddress, TokenName: t.TokenName,
			TokenSymbol: t.TokenSymbol, TokenImageURL: t.TokenImageURL, TokenAmount: num(t.TokenAmount),
			TokenAmountInNative: num(t.TokenAmountInNative), TokenAmountInUSD: num(t.TokenAmountInUSD),
			TokenPriceInNative: num(t.TokenPriceInNative), TokenPriceInUSD: num(t.TokenPriceInUSD),
			SideTokenAddress: t.SideTokenAddress, SideTokenName: t.SideTokenName, SideTokenSymbol: t.SideTokenSymbol,
			SideTokenImageURL: t.SideTokenImageURL, SideTokenAmount: num(t.SideTokenAmount),
			SideTokenAmountInNative: num(t.SideTokenAmountInNative), SideTokenAmountInUSD: num(t.SideTokenAmountInUSD),
			SideTokenPriceInNative: num(t.SideTokenPriceInNative), SideTokenPriceInUSD: num(t.SideTokenPriceInUSD),
			DexImage: t.DexImage, DexProgramAddress: t.DexProgramAddress, DexProtocolFamily: t.DexProtocolFamily}
	case chainevent.PoolSnapshot:
		s := v.Snapshot
		w = snapshotWire{Type: string(chainevent.TypePoolSnapshot), Chain: string(s.Chain), PoolAddress: s.PoolAddress,
			BlockHeight: s.BlockHeight, BlockSlot: s.BlockSlot, BlockTimestamp: s.BlockTimestamp, SnapshotTime: s.SnapshotTime,
			TokenA: sideOut(s.TokenA), TokenB: sideOut(s.TokenB), TVLInNative: num(s.TVLInNative), TVLInUSD: num(s.TVLInUSD)}
	case chainevent.RedPacketCreated:
		p := v.Packet
		w = packetWire{Type: string(chainevent.TypeRedPacketCreated), ID: p.ID, Chain: string(p.Chain), Creator: p.Creator,
			ClaimAuthority: p.ClaimAuthority, Mint: p.Mint, MaxClaims: p.MaxClaims, TotalAmount: p.TotalAmount.String(),
			CreatedAt: p.CreatedAt, Expiration: p.Expiration, ExpiredAt: p.ExpiredAt, Memo: p.Memo, ShareID: p.ShareID,
			TxHash: p.TxHash}
	case chainevent.RedPacketClaimed:
		c := v.Claim
		w = claimWire{Type: string(chainevent.TypeRedPacketClaimed), PacketID: c.PacketID, Chain: string(c.Chain), Claimer: c.Claimer,
			Mint: c.Mint, Creator: c.Creator, Amount: c.Amount.String(), ClaimedAt: c.ClaimedAt, TxHash: c.TxHash}
	case chainevent.RedPacketExpired:
		w = expiredWire{Type: string(chainevent.TypeRedPacketExpired), PacketID: v.PacketID, ExpiredAt: v.At}
	case chainevent.WalletLabel:
		w = labelWire{Type: string(chainevent.TypeWalletLabel), Chain: string(v.Chain), Wallet: v.Wallet, Label: string(v.Label)}
	default:
		return nil, fmt.Errorf("marshal event: unknown type %T", e)
	}
	return json.Marshal(w)
}

func num(d decimal.Decimal) Num { return Num(d.String()) }

func sideOut(s pool.Side) sideWire {
	return sideWire{AmountInNative: num(s.AmountInNative), AmountInUSD: num(s.AmountInUSD), Decimals: s.Decimals,
		PriceNative: num(s.PriceNative), PriceUSD: num(s.PriceUSD), TokenAddress: s.TokenAddress, VaultAmount: string(s.VaultAmount)}
}

// MarshalJSON writes a Num as a JSON string.
func (n Num) MarshalJSON() ([]byte, error) {
	if n == "" {
		return []byte(`"0"`), nil
	}
	return json.Marshal(string(n))
}

// Encoder writes events as NDJSON.
type Encoder struct{ w io.Writer }

// NewEncoder writes to w; wrap w in a bufio.Writer for large files.
func NewEncoder(w io.Writer) *Encoder { return &Encoder{w: w} }

// Encode writes e and a newline.
func (enc *Encoder) Encode(e chainevent.Event) error {
	b, err := Marshal(e)
	if err != nil {
		return err
	}
	_, err = enc.w.Write(append(b, '\n'))
	return err
}
