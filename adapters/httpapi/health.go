package httpapi

import (
	"context"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Check is one dependency /readyz probes.
type Check struct {
	Name string
	Ping func(ctx context.Context) error
	// Optional checks are reported in the details but do not make the process unready (a read
	// replica: the primary serves what it cannot).
	Optional bool
}

// favicon answers the /favicon.ico browsers ask for on their own (opening /docs or /live) without a
// key: 204, cacheable for a day. The API has no icon, and a 401 there was noise in every console.
func favicon(c *fiber.Ctx) error {
	c.Set(fiber.HeaderCacheControl, "public, max-age=86400")
	return c.SendStatus(fiber.StatusNoContent)
}

func healthz(c *fiber.Ctx) error {
	return c.JSON(fiber.Map{"status": "up"})
}

func readyz(checks []Check) fiber.Handler {
	return func(c *fiber.Ctx) error {
		ctx, cancel := context.WithTimeout(c.UserContext(), 3*time.Second)
		defer cancel()
		report := fiber.Map{}
		ok := true
		for _, ch := range checks {
			if err := ch.Ping(ctx); err != nil {
				ok = ok && ch.Optional
				report[ch.Name] = "down: " + err.Error()
				continue
			}
			report[ch.Name] = "up"
		}
		status := fiber.StatusOK
		state := "ready"
		if !ok {
			status = fiber.StatusServiceUnavailable
			state = "not ready"
			c.Set(fiber.HeaderRetryAfter, "1")
		}
		return c.Status(status).JSON(fiber.Map{"status": state, "checks": report})
	}
}

func metricsHandler(g prometheus.Gatherer) fiber.Handler {
	return adaptor.HTTPHandler(promhttp.HandlerFor(g, promhttp.HandlerOpts{}))
}
