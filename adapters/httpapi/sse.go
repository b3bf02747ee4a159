package httpapi

import (
	"bufio"
	"encoding/json"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/tokenscope/tokenscope/domain/job"
)

// jobStream serves operation 12. Ownership is checked and the current state read before any
// byte is written, so an unknown or foreign job is a plain 404 JSON answer. The stream then
// carries the current state at once, one message per change (event ids 1, 2, …, one data
// line of flat JSON each), a ": ping" comment every heartbeat, and ends after the terminal
// message. The writer runs after the handler returns, on values copied out of the recycled
// fiber.Ctx; a failed flush (the only disconnect signal fasthttp gives) ends it.
//
// An EventSource reconnects whenever a stream ends, so a finished job tells a reconnecting
// client to stop with 204 No Content (the EventSource standard's "stop reconnecting"). A
// reconnect is a request carrying the last event id it saw: the Last-Event-ID header, or the
// lastEventId query parameter some polyfills send instead. A first request for a finished job
// carries neither and gets the terminal message, so a client arriving after the end (the
// public Go SDK, which fails on any status but 200) still learns the outcome.
func (h *handlers) jobStream(c *fiber.Ctx) error {
	accountID := principal(c).AccountID
	current, err := h.app.Jobs.Get(c.UserContext(), accountID, c.Params("id"))
	if err != nil {
		return err
	}
	if current.Status.Terminal() && (c.Get("Last-Event-ID") != "" || c.Query("lastEventId") != "") {
		c.Status(fiber.StatusNoContent)
		return nil
	}
	hub := h.app.JobStream
	heartbeat := hub.Heartbeat()
	c.Set(fiber.HeaderContentType, "text/event-stream; charset=utf-8")
	c.Set(fiber.HeaderCacheControl, "no-cache")
	c.Set(fiber.HeaderConnection, "keep-alive")
	c.Set("X-Accel-Buffering", "no")
	c.Context().SetBodyStreamWriter(fasthttp.StreamWriter(func(w *bufio.Writer) {
		n := 0
		send := func(j job.Job) error {
			n++
			b, err := json.Marshal(job.StreamMessage(j))
			if err != nil {
				return err
			}
			w.WriteString("id: " + strconv.Itoa(n) + "\ndata: ")
			w.Write(b)
			w.WriteString("\n\n")
			return w.Flush()
		}
		if send(current) != nil || current.Status.Terminal() {
			return
		}
		updates, cancel := hub.Subscribe(accountID, current)
		defer cancel()
		ping := time.NewTicker(heartbeat)
		defer ping.Stop()
		last := current
		for {
			select {
			case j := <-updates:
				if !job.Changed(last, j) {
					continue
				}
				last = j
				if send(j) != nil || j.Status.Terminal() {
					return
				}
			case <-ping.C:
				w.WriteString(": ping\n\n")
				if w.Flush() != nil {
					return
				}
			}
		}
	}))
	return nil
}
