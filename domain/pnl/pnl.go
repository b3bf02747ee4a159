// Package pnl computes a wallet's profit and loss per token with the weighted-average-cost
// method, and the summary over tokens that the pnl-by-token operation returns. It may import
// only the standard library, github.com/shopspring/decimal and other domain packages.
//
// Average cost: a BUY adds its tokens to the balance and its USD amount to the cost basis. A SELL
// removes amount × (cost / balance) from the cost basis and realizes proceeds minus that.
//
// A SELL larger than the known balance (tokens that arrived by transfer, or trades not yet
// ingested) is matched against the known balance only; the excess is treated as tokens that
// cost nothing, so all of its proceeds are profit. The balance stops at zero, never below, and
// no step divides by a zero balance.
package pnl

import (
	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/trade"
)

// Scale is the number of decimal places kept by divisions (half-up rounding).
const Scale = 18

// div is a / b, 0 when b is 0: every ratio of the API is 0 rather than undefined.
func div(a, b decimal.Decimal) decimal.Decimal {
	if b.IsZero() {
		return decimal.Zero
	}
	return a.DivRound(b, Scale)
}

// Position is the running state of one (chain, wallet, token).
type Position struct {
	Chain  chain.Chain
	Wallet string
	Token  string

	Buys            int64
	Sells           int64
	BuyAmount       decimal.Decimal // tokens bought
	BuyAmountInUSD  decimal.Decimal
	SellAmount      decimal.Decimal // tokens sold, including any excess over the balance
	SellAmountInUSD decimal.Decimal

	// Balance is the tokens held as far as the trades show; never negative.
	Balance decimal.Decimal
	// CostInUSD is the cost basis of Balance.
	CostInUSD decimal.Decimal
	// SoldCostInUSD is the cost basis removed by sells, the denominator of realizedProfitRatio.
	SoldCostInUSD       decimal.Decimal
	RealizedProfitInUSD decimal.Decimal

	// FirstBuyAt and LastSellAt are Unix ms, nil until a buy / sell is seen; LastTradeAt is the
	// newest trade of either side, nil until one is seen.
	FirstBuyAt  *int64
	LastSellAt  *int64
	LastTradeAt *int64
}

// Apply adds one trade to the position. Trades must come in trade.Compare order (Rederive sorts
// them); failed trades are ignored. A trade of another chain, wallet or token is Invalid; an
// empty position takes its identity from the first trade.
func (p *Position) Apply(t trade.Trade) error {
	if p.Wallet == "" && p.Token == "" && p.Chain == "" {
		p.Chain, p.Wallet, p.Token = t.Chain, t.Wallet, t.TokenAddress
	}
	if t.Chain != p.Chain || t.Wallet != p.Wallet || t.TokenAddress != p.Token {
		return fault.Invalid("trade", t.Key().String(), "belongs to another wallet, token or chain than the position")
	}
	if !t.Succeeded() {
		return nil
	}
	amount, usd := t.TokenAmount, t.TokenAmountInUSD
	if p.LastTradeAt == nil || t.BlockTimestamp > *p.LastTradeAt {
		at := t.BlockTimestamp
		p.LastTradeAt = &at
	}
	switch t.Side {
	case trade.Buy:
		p.Buys++
		p.BuyAmount = p.BuyAmount.Add(amount)
		p.BuyAmountInUSD = p.BuyAmountInUSD.Add(usd)
		p.Balance = p.Balance.Add(amount)
		p.CostInUSD = p.CostInUSD.Add(usd)
		if p.FirstBuyAt == nil || t.BlockTimestamp < *p.FirstBuyAt {
			at := t.BlockTimestamp
			p.FirstBuyAt = &at
		}
	case trade.Sell:
		p.Sells++
		p.SellAmount = p.SellAmount.Add(amount)
		p.SellAmountInUSD = p.SellAmountInUSD.Add(usd)
		matched := decimal.Min(amount, p.Balance)
		var removed decimal.Decimal
		if matched.Equal(p.Balance) {
			// Closing the whole balance takes the whole basis, leaving no rounding dust behind.
			removed = p.CostInUSD
		} else {
			removed = div(p.CostInUSD.Mul(matched), p.Balance)
		}
		p.RealizedProfitInUSD = p.RealizedProfitInUSD.Add(usd.Sub(removed))
		p.CostInUSD = p.CostInUSD.Sub(removed)
		p.SoldCostInUSD = p.SoldCostInUSD.Add(removed)
		p.Balance = p.Balance.Sub(matched)
		if p.LastSellAt == nil || t.BlockTimestamp > *p.LastSellAt {
			at := t.BlockTimestamp
			p.LastSellAt = &at
		}
	default:
		return fault.InvalidParam("type", string(t.Side), string(trade.Buy), string(trade.Sell))
	}
	return nil
}

// Since is p over the period that starts where start was taken (start is the same pair's
// position as of the trades before the period; the zero Position for a pair first traded in it):
// the flows (trade counts, amounts bought and sold and their USD, realized profit and the cost of
// the tokens sold) are those of the period's trades, p's minus start's; the state (balance, the
// cost basis of the balance, first buy and last sell) is p's, now. Valued by Entry, the held
// balance's unrealized profit is therefore the whole of it at the current price, and the total
// profit is the period's realized profit plus that.
func (p Position) Since(start Position) Position {
	out := p
	out.Buys -= start.Buys
	out.Sells -= start.Sells
	out.BuyAmount = p.BuyAmount.Sub(start.BuyAmount)
	out.BuyAmountInUSD = p.BuyAmountInUSD.Sub(start.BuyAmountInUSD)
	out.SellAmount = p.SellAmount.Sub(start.SellAmount)
	out.SellAmountInUSD = p.SellAmountInUSD.Sub(start.SellAmountInUSD)
	out.SoldCostInUSD = p.SoldCostInUSD.Sub(start.SoldCostInUSD)
	out.RealizedProfitInUSD = p.RealizedProfitInUSD.Sub(start.RealizedProfitInUSD)
	return out
}

// Active is whether the position belongs in an answer over a period: it traded in the period
// (Since's counts) or holds a balance now, whose unrealized profit the period shows.
func (p Position) Active() bool {
	return p.Buys+p.Sells > 0 || p.Balance.IsPositive()
}

// Rederive rebuilds a position from all of its trades, whatever order they arrived in: it sorts
// a copy by (block time, block height, signature, instruction index), drops repeats of the same
// trade.Key, and replays. No trades give the zero Position.
func Rederive(trades []trade.Trade) (Position, error) {
	var p Position
	seen := make(map[trade.Key]bool, len(trades))
	for _, t := range trade.Sorted(trades) {
		if seen[t.Key()] {
			continue
		}
		seen[t.Key()] = true
		if err := p.Apply(t); err != nil {
			return Position{}, err
		}
	}
	return p, nil
}

// Entry is one item of pnl-by-token, minus the token metadata (name, symbol, logo, decimals)
// that the caller adds.
type Entry struct {
	Chain         chain.Chain
	WalletAddress string
	TokenAddress  string

	Buys        int64
	Sells       int64
	TotalTrades int64

	BuyAmount        decimal.Decimal
	BuyAmountInUSD   decimal.Decimal
	SellAmount       decimal.Decimal
	SellAmountInUSD  decimal.Decimal
	AvgBuyPriceInUSD decimal.Decimal
	// AvgSellPriceInUSD is sellAmountInUsd / sellAmount.
	AvgSellPriceInUSD decimal.Decimal
	Balance           decimal.Decimal
	PriceInUSD        decimal.Decimal
	CurrentValue      decimal.Decimal

	RealizedProfitInUSD    decimal.Decimal
	RealizedProfitRatio    decimal.Decimal
	UnrealizedProfitInUSD  decimal.Decimal
	UnrealizedProfitRatio  decimal.Decimal
	TotalProfitInUSD       decimal.Decimal
	TotalProfitRatio       decimal.Decimal
	AvgProfitPerTradeInUSD decimal.Decimal

	// TotalCostInUSD is everything ever paid for the token (buyAmountInUsd).
	TotalCostInUSD decimal.Decimal
	// RemainingCostInUSD and SoldCostInUSD split TotalCostInUSD between held and sold tokens.
	RemainingCostInUSD decimal.Decimal
	SoldCostInUSD      decimal.Decimal

	IsClosed    bool
	FirstBuyAt  *int64
	LastSellAt  *int64
	LastTradeAt *int64
}

// Entry values the position at priceInUSD:
//
//	avgBuyPrice       = buyAmountInUsd / buyAmount
//	avgSellPrice      = sellAmountInUsd / sellAmount
//	currentValue      = balance × price
//	unrealized        = currentValue − remaining cost
//	realizedRatio     = realized / cost of the tokens sold
//	unrealizedRatio   = unrealized / remaining cost
//	totalProfit       = realized + unrealized
//	totalProfitRatio  = totalProfit / total cost bought
//	avgProfitPerTrade = totalProfit / totalTrades
//	isClosed          = balance is zero
//
// Every division by zero gives 0.
func (p Position) Entry(priceInUSD decimal.Decimal) Entry {
	current := p.Balance.Mul(priceInUSD)
	unrealized := current.Sub(p.CostInUSD)
	total := p.RealizedProfitInUSD.Add(unrealized)
	trades := p.Buys + p.Sells
	return Entry{
		Chain:                  p.Chain,
		WalletAddress:          p.Wallet,
		TokenAddress:           p.Token,
		Buys:                   p.Buys,
		Sells:                  p.Sells,
		TotalTrades:            trades,
		BuyAmount:              p.BuyAmount,
		BuyAmountInUSD:         p.BuyAmountInUSD,
		SellAmount:             p.SellAmount,
		SellAmountInUSD:        p.SellAmountInUSD,
		AvgBuyPriceInUSD:       div(p.BuyAmountInUSD, p.BuyAmount),
		AvgSellPriceInUSD:      div(p.SellAmountInUSD, p.SellAmount),
		Balance:                p.Balance,
		PriceInUSD:             priceInUSD,
		CurrentValue:           current,
		RealizedProfitInUSD:    p.RealizedProfitInUSD,
		RealizedProfitRatio:    div(p.RealizedProfitInUSD, p.SoldCostInUSD),
		UnrealizedProfitInUSD:  unrealized,
		UnrealizedProfitRatio:  div(unrealized, p.CostInUSD),
		TotalProfitInUSD:       total,
		TotalProfitRatio:       div(total, p.BuyAmountInUSD),
		AvgProfitPerTradeInUSD: div(total, decimal.NewFromInt(trades)),
		TotalCostInUSD:         p.BuyAmountInUSD,
		RemainingCostInUSD:     p.CostInUSD,
		SoldCostInUSD:          p.SoldCostInUSD,
		IsClosed:               p.Balance.IsZero(),
		FirstBuyAt:             p.FirstBuyAt,
		LastSellAt:             p.LastSellAt,
		LastTradeAt:            p.LastTradeAt,
	}
}

// Summary is the summary object of pnl-by-token.
type Summary struct {
	Tokens      int64
	Buys        int64
	Sells       int64
	TotalTrades int64
	// Wins and Losses count tokens whose total profit is above / below zero; break-even counts as neither.
	Wins   int64
	Losses int64

	// BuyAmount and SellAmount add up token amounts (of different tokens, when the wallet traded
	// several); AvgBuyPriceInUSD is buyAmountInUsd / buyAmount. pnl-by-token does not show them,
	// the stream's wallet PnL list does.
	BuyAmount              decimal.Decimal
	SellAmount             decimal.Decimal
	AvgBuyPriceInUSD       decimal.Decimal
	BuyAmountInUSD         decimal.Decimal
	SellAmountInUSD        decimal.Decimal
	TotalCostInUSD         decimal.Decimal
	CurrentValue           decimal.Decimal
	RealizedProfitInUSD    decimal.Decimal
	UnrealizedProfitInUSD  decimal.Decimal
	TotalProfitInUSD       decimal.Decimal
	RealizedProfitRatio    decimal.Decimal
	AvgProfitPerTradeInUSD decimal.Decimal
	WinRate                decimal.Decimal
}

// Summarize adds up entries. Ratios are recomputed from the sums, not averaged:
// realizedProfitRatio = Σrealized / Σcost of tokens sold, avgProfitPerTrade = ΣtotalProfit /
// ΣtotalTrades, winRate = wins / (wins + losses); each is 0 when its denominator is 0.
func Summarize(entries []Entry) Summary {
	s := Summary{Tokens: int64(len(entries))}
	soldCost := decimal.Zero
	for _, e := range entries {
		s.Buys += e.Buys
		s.Sells += e.Sells
		s.TotalTrades += e.TotalTrades
		switch e.TotalProfitInUSD.Sign() {
		case 1:
			s.Wins++
		case -1:
			s.Losses++
		}
		s.BuyAmount = s.BuyAmount.Add(e.BuyAmount)
		s.SellAmount = s.SellAmount.Add(e.SellAmount)
		s.BuyAmountInUSD = s.BuyAmountInUSD.Add(e.BuyAmountInUSD)
		s.SellAmountInUSD = s.SellAmountInUSD.Add(e.SellAmountInUSD)
		s.TotalCostInUSD = s.TotalCostInUSD.Add(e.TotalCostInUSD)
		s.CurrentValue = s.CurrentValue.Add(e.CurrentValue)
		s.RealizedProfitInUSD = s.RealizedProfitInUSD.Add(e.RealizedProfitInUSD)
		s.UnrealizedProfitInUSD = s.UnrealizedProfitInUSD.Add(e.UnrealizedProfitInUSD)
		s.TotalProfitInUSD = s.TotalProfitInUSD.Add(e.TotalProfitInUSD)
		soldCost = soldCost.Add(e.SoldCostInUSD)
	}
	s.RealizedProfitRatio = div(s.RealizedProfitInUSD, soldCost)
	s.AvgBuyPriceInUSD = div(s.BuyAmountInUSD, s.BuyAmount)
	s.AvgProfitPerTradeInUSD = div(s.TotalProfitInUSD, decimal.NewFromInt(s.TotalTrades))
	s.WinRate = div(decimal.NewFromInt(s.Wins), decimal.NewFromInt(s.Wins+s.Losses))
	return s
}
