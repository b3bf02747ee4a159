package httpapi

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/tokenscope/tokenscope/domain/fault"
)

// HeaderLimit bounds a request's line and headers together (fasthttp's read buffer). The
// multi-detail operation takes up to 100 addresses in its query string: 100 Solana addresses of
// 44 characters with escaped commas are 4.7 KB, next to the other parameters, a long bearer token
// and the usual headers; 4 KiB (Fiber's default) refused about 85 addresses and more.
const HeaderLimit = 16 << 10

// DefaultReadTimeout is how long a client may take to send a whole request when Deps leaves it 0.
const DefaultReadTimeout = 30 * time.Second

// DefaultIngestIdleTimeout is how long a streamed ingest body may pause when Deps leaves it 0.
const DefaultIngestIdleTimeout = 30 * time.Second

// methods are the HTTP methods the API's routes use, for the error that refuses another one.
var methods = []string{fiber.MethodGet, fiber.MethodPost, fiber.MethodPatch, fiber.MethodDelete}

// unparsedRoute labels, in logs and metrics, requests refused before routing.
const unparsedRoute = "unparsed"

// guardTransport gives the answers fasthttp and Fiber produce before the router and its
// middleware run the same JSON error body and X-Request-Id as every other answer: headers over
// HeaderLimit (431), a request not received within the read timeout (408), one that does not
// parse (400), and a method Fiber does not know (Fiber answers it with a plain-text 400 in its
// handler). fasthttp's error strings quote the raw request, API key included, so none of them
// reaches a client: each case has a fixed message.
func guardTransport(f *fiber.App, d Deps, render fiber.ErrorHandler) {
	srv := f.Server()
	// fasthttp then leaves the request's bytes out of its error strings too (none is shown or
	// logged today; this keeps it so if that changes).
	srv.SecureErrorLogMessage = true
	srv.ErrorHandler = func(fctx *fasthttp.RequestCtx, err error) {
		// The request did not parse: nothing in it, its X-Request-Id included, is trusted.
		renderEarly(f, fctx, readFault(err, d.readTimeout()), "", render, d)
	}
	known := map[string]bool{}
	for _, m := range f.Config().RequestMethods {
		known[m] = true
	}
	next := srv.Handler
	srv.Handler = func(fctx *fasthttp.RequestCtx) {
		if known[string(fctx.Method())] {
			if len(fctx.Request.Header.Peek(fiber.HeaderUpgrade)) > 0 {
				// StrictFraming stops checking a connection after a request asking to upgrade
				// (WebSocket frames follow); the API upgrades nothing, so it reads no more requests.
				fctx.SetConnectionClose()
			}
			next(fctx)
			return
		}
		// The body, if any, is left unread: the connection cannot carry another request.
		fctx.SetConnectionClose()
		renderEarly(f, fctx, &fault.Error{Kind: fault.KindInvalid, Code: fault.CodeInvalidParameter, Param: "method",
			Allowed: methods, Message: "unsupported HTTP method; allowed: " + strings.Join(methods, ", ")},
			string(fctx.Request.Header.Peek(fiber.HeaderXRequestID)), render, d)
	}
}

// readFault maps an error fasthttp met while reading a request to a fault with a fixed message.
func readFault(err error, readTimeout time.Duration) error {
	var small *fasthttp.ErrSmallBuffer
	var netErr net.Error
	var framing *FramingError
	switch {
	case errors.As(err, &framing):
		return &fault.Error{Kind: fault.KindInvalid, Code: fault.CodeInvalidParameter, Param: framing.Param,
			Message: "ambiguous HTTP/1.1 framing: " + framing.Reason}
	case errors.As(err, &small):
		return fiber.NewError(fiber.StatusRequestHeaderFieldsTooLarge, "request line and headers exceed 16 KiB")
	case errors.Is(err, fasthttp.ErrTimeout), errors.As(err, &netErr) && netErr.Timeout():
		return fiber.NewError(fiber.StatusRequestTimeout, "request not received within "+readTimeout.String())
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		return fault.TooLarge("request body too large")
	case strings.Contains(err.Error(), "Content-Length"):
		return &fault.Error{Kind: fault.KindInvalid, Code: fault.CodeInvalidParameter, Param: "Content-Length",
			Message: "invalid Content-Length header: must be a number of bytes (digits only)"}
	default:
		return &fault.Error{Kind: fault.KindInvalid, Code: fault.CodeInvalidParameter, Param: "request",
			Message: "malformed HTTP/1.1 request: the request line, a header or the body framing does not parse"}
	}
}

// renderEarly answers a request refused before routing through the app's error handler, with a
// request id (incoming if sane, else new), and logs and counts it like the access log does.
func renderEarly(f *fiber.App, fctx *fasthttp.RequestCtx, e error, incomingID string, render fiber.ErrorHandler, d Deps) {
	c := f.AcquireCtx(fctx)
	defer f.ReleaseCtx(c)
	st := &requestState{id: acceptRequestID(incomingID)}
	c.Locals(stateKey{}, st)
	c.Set(fiber.HeaderXRequestID, st.id)
	if err := render(c, e); err != nil {
		_ = c.SendStatus(fiber.StatusInternalServerError)
	}
	status := fctx.Response.StatusCode()
	// The method may be any bytes a client sent: a fixed label keeps the metric's series bounded.
	if d.Metrics != nil {
		d.Metrics.count("-", unparsedRoute, status)
	}
	if d.Log != nil {
		d.Log.LogAttrs(context.Background(), slog.LevelInfo, "http", slog.String("requestId", st.id), slog.String("method", "-"),
			slog.String("route", unparsedRoute), slog.Int("status", status))
	}
}
