// Package migrations holds the ordered SQL schema. Files are applied in name order by
// `tokenscope migrate` (and at dev start) and read by sqlc as the schema. Number new files
// after the last one; never edit a file that has shipped.
package migrations

import "embed"

// FS holds every *.sql migration.
//
//go:embed *.sql
var FS embed.FS
