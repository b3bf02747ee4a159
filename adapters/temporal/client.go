// Package temporal is the client side of Temporal for tokenscope: dialing, health, and (in
// files added per area) starting workflows and querying them on behalf of the use cases. The
// embedded development server lives in the devserver subpackage. It may import the Temporal
// SDK, domain and ports.
package temporal

import (
	"context"
	"fmt"
	"log/slog"

	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
)

// Dial returns a lazily connecting client: the process starts even while Temporal is down, and
// calls fail (and /readyz reports it) until Temporal answers.
func Dial(hostPort, namespace string, log *slog.Logger) (client.Client, error) {
	c, err := client.NewLazyClient(client.Options{
		HostPort:  hostPort,
		Namespace: namespace,
		Logger:    tlog.NewStructuredLogger(log.With("component", "temporal-client")),
	})
	if err != nil {
		return nil, fmt.Errorf("temporal client: %w", err)
	}
	return c, nil
}

// Pinger reports whether the Temporal frontend answers.
type Pinger struct{ Client client.Client }

// Ping calls the frontend's health check.
func (p Pinger) Ping(ctx context.Context) error {
	_, err := p.Client.CheckHealth(ctx, &client.CheckHealthRequest{})
	return err
}
