package postgres

// The read paths' SQL builders, for the EXPLAIN tests of package postgres_test.
var (
	TradesSQL       = tradesSQL
	SnapshotsSQL    = snapshotsSQL
	SearchSQL       = searchSQL
	PacketsSQL      = packetsSQL
	PacketsCountSQL = packetsCountSQL
	ClaimsSQL       = claimsSQL
	PositionsSQL    = positionsSQL
	TokenDetailsSQL = tokenDetailsSQL
	TokenStatsSQL   = tokenStatsSQL
	TokenPoolsSQL   = tokenPoolsSQL
	HotTokensSQL    = hotTokensSQL
)

// SOLPriceUSD is the engine's SOL price lookup, for its error test.
var SOLPriceUSD = solPriceUSD
