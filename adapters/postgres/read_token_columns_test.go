package postgres

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/tokenscope/tokenscope/adapters/postgres/internal/dbsqlc"
)

// TokenDetails (queries/token.sql) selects detailColumns, in the order scanDetail reads them.
func TestDetailColumns(t *testing.T) {
	t.Parallel()
	norm := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	assert.Contains(t, norm(dbsqlc.TokenDetails), "SELECT "+norm(detailColumns)+" FROM tokens t")
}
