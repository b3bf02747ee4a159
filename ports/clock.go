package ports

import "time"

// Clock is read instead of time.Now so tests can pin time.
type Clock interface {
	Now() time.Time
}
