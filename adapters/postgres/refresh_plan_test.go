package postgres

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/tokenscope/tokenscope/adapters/postgres/internal/dbsqlc"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/ports"
)

func TestPlanRound(t *testing.T) {
	t.Parallel()
	const end, hour = int64(100_000_000), int64(3_600_000)
	ms := func(v int64) *int64 { return &v }
	c, addr := "sol", "T"
	tests := []struct {
		name string
		st   dbsqlc.GetRefreshStateRow
		want roundPlan
	}{
		{"first round", dbsqlc.GetRefreshStateRow{}, roundPlan{full: true}},
		{"incremental", dbsqlc.GetRefreshStateRow{WindowsAtMs: ms(end - hour)}, roundPlan{}},
		{"last round a day away", dbsqlc.GetRefreshStateRow{WindowsAtMs: ms(end - 24*hour)}, roundPlan{full: true}},
		{"clock went back a day", dbsqlc.GetRefreshStateRow{WindowsAtMs: ms(end + 24*hour)}, roundPlan{full: true}},
		{"continue an incremental round", dbsqlc.GetRefreshStateRow{WindowsAtMs: ms(end - hour), RoundAtMs: ms(end - 1),
			RoundAfterChain: &c, RoundAfterAddress: &addr},
			roundPlan{resumed: true, after: &ports.TokenRef{Chain: chain.Sol, Address: "T"}}},
		{"continue a full round", dbsqlc.GetRefreshStateRow{RoundAtMs: ms(end - 1), RoundFull: true},
			roundPlan{full: true, resumed: true}},
		{"an incremental round a day old starts over in full", dbsqlc.GetRefreshStateRow{WindowsAtMs: ms(end - 24*hour),
			RoundAtMs: ms(end - 1)}, roundPlan{full: true}},
		{"a round after now starts over in full", dbsqlc.GetRefreshStateRow{WindowsAtMs: ms(end - hour),
			RoundAtMs: ms(end + 1), RoundFull: true}, roundPlan{full: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, planRound(tc.st, end))
		})
	}
}
