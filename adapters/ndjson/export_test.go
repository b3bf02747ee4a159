package ndjson

// Functions only the tests use: nothing reachable from the binaries calls them (make deadcode).

// Line is the number (1-based) of the line the last event came from.
func (d *Decoder) Line() int { return d.line }
