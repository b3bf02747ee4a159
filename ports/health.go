package ports

import "context"

// Pinger reports whether a dependency is reachable (for /readyz).
type Pinger interface {
	Ping(ctx context.Context) error
}
