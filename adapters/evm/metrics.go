package evm

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/ports"
)

// Metrics reports followers on /metrics: tokenscope_chain_block (last block written),
// tokenscope_chain_head, tokenscope_chain_lag_blocks, tokenscope_chain_trades_total and
// tokenscope_chain_halted (the block a deep reorg stopped the follower at; 0 while it runs).
type Metrics struct {
	block, head, lag, halted *prometheus.GaugeVec
	trades                   *prometheus.CounterVec
}

var _ ports.ChainMonitor = (*Metrics)(nil)

// NewMetrics registers the followers' metrics on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	g := func(name, help string) *prometheus.GaugeVec {
		v := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, []string{"chain"})
		reg.MustRegister(v)
		return v
	}
	m := &Metrics{
		block:  g("tokenscope_chain_block", "Last block whose events the chain follower has written."),
		head:   g("tokenscope_chain_head", "Newest block of the followed node."),
		lag:    g("tokenscope_chain_lag_blocks", "Blocks between the node's head and the last block written."),
		halted: g("tokenscope_chain_halted", "Block at which a reorg deeper than the confirmations stopped the follower; 0 while it runs."),
		trades: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tokenscope_chain_trades_total",
			Help: "Trades the chain follower has written."}, []string{"chain"}),
	}
	reg.MustRegister(m.trades)
	return m
}

// Progress implements ports.ChainMonitor.
func (m *Metrics) Progress(c chain.Chain, block, head int64, newTrades int) {
	l := string(c)
	m.block.WithLabelValues(l).Set(float64(block))
	m.head.WithLabelValues(l).Set(float64(head))
	m.lag.WithLabelValues(l).Set(float64(max(head-block, 0)))
	m.halted.WithLabelValues(l).Set(0)
	m.trades.WithLabelValues(l).Add(float64(newTrades))
}

// Halted implements ports.ChainMonitor.
func (m *Metrics) Halted(c chain.Chain, block int64) {
	m.halted.WithLabelValues(string(c)).Set(float64(block))
}
