package httpapi

import (
	"errors"
	"log/slog"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/tokenscope/tokenscope/domain/fault"
)

// ErrorBody is the one shape of every non-2xx response.
type ErrorBody struct {
	Code      int            `json:"code"`
	Message   string         `json:"message"`
	Timestamp string         `json:"timestamp"`
	Details   map[string]any `json:"details"`
	RequestID string         `json:"requestId"`
}

// statusOf maps a fault kind to an HTTP status: the only place that decides status codes.
func statusOf(k fault.Kind) int {
	switch k {
	case fault.KindInvalid:
		return fiber.StatusBadRequest
	case fault.KindNotFound:
		return fiber.StatusNotFound
	case fault.KindConflict:
		return fiber.StatusConflict
	case fault.KindUnauthorized:
		return fiber.StatusUnauthorized
	case fault.KindForbidden:
		return fiber.StatusForbidden
	case fault.KindUnavailable:
		return fiber.StatusServiceUnavailable
	case fault.KindTooLarge:
		return fiber.StatusRequestEntityTooLarge
	case fault.KindRateLimited:
		return fiber.StatusTooManyRequests
	default:
		return fiber.StatusInternalServerError
	}
}

// errorHandler renders every error returned by a handler or middleware; classify (optional)
// maps adapter errors no use case turned into a fault (Deps.Classify).
func errorHandler(log *slog.Logger, classify func(error) error) fiber.ErrorHandler {
	return func(c *fiber.Ctx, err error) error {
		if classify != nil {
			err = classify(err)
		}
		status := fiber.StatusInternalServerError
		body := ErrorBody{Details: map[string]any{}, Timestamp: time.Now().UTC().Format(time.RFC3339), RequestID: requestID(c)}
		var fe *fiber.Error
		if f, ok := fault.As(err); ok {
			status = statusOf(f.Kind)
			body.Message = f.Message
			body.Code = f.Code
			if f.Param != "" {
				body.Details["parameter"] = f.Param
				body.Details["value"] = f.Value
			}
			if len(f.Allowed) > 0 {
				body.Details["allowed_values"] = f.Allowed
			}
			for k, v := range f.Details {
				body.Details[k] = v
			}
			if f.RetryAfter > 0 {
				c.Set(fiber.HeaderRetryAfter, strconv.Itoa(int((f.RetryAfter+time.Second-1)/time.Second)))
			}
			if status == fiber.StatusServiceUnavailable && f.RetryAfter == 0 {
				c.Set(fiber.HeaderRetryAfter, "1")
			}
		} else if errors.As(err, &fe) {
			status = fe.Code
			body.Message = fe.Message
			switch status {
			case fiber.StatusRequestEntityTooLarge:
				body.Message = "request body exceeds 1 MiB"
			case fiber.StatusNotFound:
				body.Message = "no route " + c.Method() + " " + c.Path()
			}
		}
		if status >= 500 && status != fiber.StatusServiceUnavailable {
			log.Error("request failed", "requestId", body.RequestID, "method", c.Method(), "route", routeOf(c), "err", err)
			body.Message = "internal error"
		}
		if body.Code == 0 {
			body.Code = status
		}
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
		return c.Status(status).JSON(body)
	}
}
