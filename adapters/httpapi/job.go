package httpapi

import (
	"bytes"
	"encoding/json"

	"github.com/gofiber/fiber/v2"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/job"
)

// jobDTO is JobDTO ({state, result}) plus the flat stream fields, so one read gives what a
// stream message would.
type jobDTO struct {
	ID       string         `json:"id"`
	State    job.Status     `json:"state"`
	Status   job.Status     `json:"status"`
	Result   map[string]any `json:"result"`
	Progress job.Progress   `json:"progress"`
	Error    string         `json:"error,omitempty"`
}

func jobOf(j job.Job) jobDTO {
	m := job.StreamMessage(j)
	d := jobDTO{ID: j.ID, State: j.Status, Status: j.Status, Result: map[string]any{}, Progress: j.Progress, Error: m.Error}
	if m.Result != nil {
		d.Result = map[string]any{"success": m.Result.Success, "data": m.Result.Data}
	}
	return d
}

func (h *handlers) calculatePnL(c *fiber.Ctx) error {
	ch, err := chain.Parse("chain", c.Params("chain"))
	if err != nil {
		return err
	}
	var in struct {
		TokenAddresses []string `json:"tokenAddresses"`
	}
	if body := bytes.TrimSpace(c.Body()); len(body) > 0 {
		if err := json.Unmarshal(body, &in); err != nil {
			return fault.Invalid("tokenAddresses", "…", "body must be {\"tokenAddresses\": [string] | null}")
		}
	}
	j, err := h.app.Jobs.CalculatePnL(c.UserContext(), principal(c).AccountID, ch, c.Params("walletAddress"), in.TokenAddresses)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"success": true, "jobId": j.ID})
}

func (h *handlers) getJob(c *fiber.Ctx) error {
	j, err := h.app.Jobs.Get(c.UserContext(), principal(c).AccountID, c.Params("id"))
	if err != nil {
		return err
	}
	return c.JSON(jobOf(j))
}
