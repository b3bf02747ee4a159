package httpapi_test

import (
	"bytes"
	"net"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttputil"
)

// The benchmarks compare the real API (httpapi.New with the production middleware chain: request
// id, access log, recover, body limit, timeout, auth, scope guard, metrics) with a bare Fiber app
// whose one handler sends the same response bytes. Use cases run over the in-memory fixtures of
// fixture_test.go, so the difference between the two is what the HTTP layer adds per request.
//
//	BenchmarkHandler  calls the fasthttp handler directly, one request at a time: server-side CPU
//	                  only (no connection, no client), the cleanest profile.
//	BenchmarkInmemory runs 16 concurrent clients over fasthttputil's in-memory listener: the full
//	                  request/response path, including HTTP parsing and writing on both sides.
//
// Each has a sub-benchmark per endpoint with variants "api" and "bare"; report api/bare. Besides
// wall time they report cpu-ns/op, the CPU time the whole process (every thread: handlers,
// clients, GC) spent per request, which other work on a shared machine disturbs far less.
//
//	go test -run XXX -bench . -benchmem -count 6 ./adapters/httpapi/

// devNull receives the access log: a real file write per line, as on a server, without output.
func devNull(b *testing.B) *os.File {
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = f.Close() })
	return f
}

// bareApp is the baseline: a default Fiber app whose handler sends body as JSON.
func bareApp(path string, body []byte) *fiber.App {
	f := fiber.New(fiber.Config{DisableStartupMessage: true})
	route := path
	if i := strings.IndexByte(path, '?'); i >= 0 {
		route = path[:i]
	}
	f.Get(route, func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
		return c.Send(body)
	})
	return f
}

// reference runs one request on the real API and returns the 200 body the baseline must send.
func reference(b *testing.B, s *server, path string) []byte {
	b.Helper()
	ctx := newRequestCtx(path, s.key)
	s.app.Handler()(ctx)
	mustStatus(b, ctx.Response.StatusCode(), ctx.Response.Body(), fiber.StatusOK)
	return bytes.Clone(ctx.Response.Body())
}

func newRequestCtx(path, key string) *fasthttp.RequestCtx {
	var req fasthttp.Request
	req.Header.SetMethod(fasthttp.MethodGet)
	req.SetRequestURI(path)
	req.Header.SetHost("bench")
	if key != "" {
		req.Header.Set("X-API-KEY", key)
	}
	ctx := &fasthttp.RequestCtx{}
	ctx.Init(&req, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}, nil)
	// Like the server's contexts (ReduceMemoryUsage off), keep the response body buffer from one
	// request to the next instead of cycling it through fasthttp's process-wide pool.
	ctx.Init2(ctx.Conn(), discardLogger{}, false)
	return ctx
}

type discardLogger struct{}

func (discardLogger) Printf(string, ...any) {}

// variants returns the real API and the baseline for one endpoint, with the baseline's body.
func variants(b *testing.B, e endpoint) (api *fiber.App, bare *fiber.App, key string, body []byte) {
	s := newServer(b, devNull(b))
	body = reference(b, s, e.path)
	return s.app, bareApp(e.path, body), s.key, body
}

func BenchmarkHandler(b *testing.B) { benchHandler(b, endpoints) }

// BenchmarkTokenHandler is BenchmarkHandler over the token record lists (hot-token ranking,
// search in both modes, multi-detail in both shapes), fixtureTokens records each.
//
//	go test -run XXX -bench 'Token' -benchmem -count 6 ./adapters/httpapi/
func BenchmarkTokenHandler(b *testing.B) { benchHandler(b, tokenEndpoints) }

func benchHandler(b *testing.B, endpoints []endpoint) {
	for _, e := range endpoints {
		api, bare, key, body := variants(b, e)
		for _, v := range []struct {
			name string
			app  *fiber.App
		}{{"api", api}, {"bare", bare}} {
			b.Run(e.name+"/"+v.name, func(b *testing.B) {
				h := v.app.Handler()
				ctx := newRequestCtx(e.path, key)
				b.ReportAllocs()
				b.SetBytes(int64(len(body)))
				cpu := startCPU(b)
				for b.Loop() {
					ctx.Response.Reset()
					ctx.ResetUserValues()
					h(ctx)
				}
				cpu.report()
				mustStatus(b, ctx.Response.StatusCode(), ctx.Response.Body(), fiber.StatusOK)
				if !bytes.Equal(ctx.Response.Body(), body) {
					b.Fatalf("%s sent a different body", v.name)
				}
			})
		}
	}
}

// serveInmemory serves app on an in-memory listener and returns a client dialing it.
func serveInmemory(b *testing.B, app *fiber.App) *fasthttp.HostClient {
	ln := fasthttputil.NewInmemoryListener()
	done := make(chan error, 1)
	go func() { done <- app.Listener(ln) }()
	b.Cleanup(func() {
		_ = app.Shutdown()
		_ = ln.Close()
		<-done
	})
	return &fasthttp.HostClient{Addr: "bench", MaxConns: 64, Dial: func(string) (net.Conn, error) { return ln.Dial() }}
}

// callers is the number of concurrent clients (b.SetParallelism multiplies GOMAXPROCS).
const callers = 16

func BenchmarkInmemory(b *testing.B) {
	for _, e := range endpoints {
		api, bare, key, body := variants(b, e)
		for _, v := range []struct {
			name string
			app  *fiber.App
		}{{"api", api}, {"bare", bare}} {
			b.Run(e.name+"/"+v.name, func(b *testing.B) {
				client := serveInmemory(b, v.app)
				b.ReportAllocs()
				b.SetBytes(int64(len(body)))
				b.SetParallelism(max(1, callers/runtime.GOMAXPROCS(0)))
				b.ResetTimer()
				cpu := startCPU(b)
				defer cpu.report()
				b.RunParallel(func(pb *testing.PB) {
					req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
					defer fasthttp.ReleaseRequest(req)
					defer fasthttp.ReleaseResponse(resp)
					req.SetRequestURI("http://bench" + e.path)
					req.Header.Set("X-API-KEY", key)
					for pb.Next() {
						if err := client.Do(req, resp); err != nil {
							b.Error(err)
							return
						}
						if resp.StatusCode() != fiber.StatusOK || len(resp.Body()) != len(body) {
							b.Errorf("status %d, %d bytes", resp.StatusCode(), len(resp.Body()))
							return
						}
					}
				})
			})
		}
	}
}

// cpuClock measures the CPU time (user and system) of the whole process over a benchmark loop.
type cpuClock struct {
	b     *testing.B
	start time.Duration
}

func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func startCPU(b *testing.B) cpuClock { return cpuClock{b: b, start: processCPU(b)} }

func (c cpuClock) report() {
	c.b.ReportMetric(float64(processCPU(c.b)-c.start)/float64(c.b.N), "cpu-ns/op")
}
