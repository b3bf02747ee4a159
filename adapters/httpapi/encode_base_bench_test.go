package httpapi

// TEMPORARY: the hand-written appenders as the benchmark's baseline while both exist.
func init() {
	details, trades, pnl := benchDetails(100), benchTrades(), benchPnL(10)
	baselineEncoders["tokens-100"] = func(b []byte) []byte { return appendTokenV2List(b, details) }
	baselineEncoders["trades-20"] = func(b []byte) []byte { return appendTradePage(b, trades) }
	baselineEncoders["pnl-10"] = func(b []byte) []byte { return appendPnLPage(b, pnl) }
}
