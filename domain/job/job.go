// Package job is the pure model of long-running jobs (PnL calculation, ingestion) whose
// progress clients follow over the job stream (operation 12): the job's status machine
// pending → running → completed | failed, its progress and result, and the message the
// server-sent-event stream carries. It may import only the standard library and other
// domain packages.
package job

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/text"
)

// Status is a job's state. pending and completed are the values the public API's clients
// act on; failed is terminal too (the Go SDK reports it as an error); running is ignored by
// those clients, which keeps progress messages harmless to them.
type Status string

const (
	Pending   Status = "pending"
	Running   Status = "running"
	Completed Status = "completed"
	Failed    Status = "failed"
)

// Terminal reports whether no further transition is possible.
func (s Status) Terminal() bool { return s == Completed || s == Failed }

// Kind says what a job does.
type Kind string

const (
	KindCalculatePnL Kind = "calculate-pnl"
	KindIngest       Kind = "ingest"
)

// ParseKind accepts exactly one of the kinds; the error names the parameter "kind".
func ParseKind(s string) (Kind, error) {
	switch Kind(s) {
	case KindCalculatePnL, KindIngest:
		return Kind(s), nil
	}
	return "", fault.InvalidParam("kind", s, string(KindCalculatePnL), string(KindIngest))
}

// Bounds of the free-text parts of a job.
const (
	MaxIDLen      = 128
	MaxMessageLen = 1024 // characters
)

// DefaultSuccessMessage is the result message of a job completed without one, the text the
// public API's examples show.
const DefaultSuccessMessage = "Job completed successfully"

// Progress counts work done. Total 0 means the size is not known yet.
type Progress struct {
	Done    int64  `json:"done"`
	Total   int64  `json:"total"`
	Message string `json:"message,omitempty"`
}

// Result is the terminal outcome. Data is an optional JSON value the job produced.
type Result struct {
	Success bool
	Message string
	Data    json.RawMessage
}

// Job is one job of an account. Change Status, Progress and Result only through the
// transition methods, which refuse illegal moves with a fault.KindConflict error.
type Job struct {
	ID        string
	AccountID string
	Kind      Kind
	Status    Status
	Progress  Progress
	Result    *Result // nil until terminal
	CreatedAt time.Time
	UpdatedAt time.Time
}

// New builds a pending job.
func New(id, accountID string, kind Kind, now time.Time) (Job, error) {
	if strings.TrimSpace(id) == "" {
		return Job{}, fault.Missing("id")
	}
	if len(id) > MaxIDLen || strings.IndexFunc(id, func(c rune) bool { return unicode.IsSpace(c) || unicode.IsControl(c) }) >= 0 {
		return Job{}, fault.Invalid("id", id, "must be at most 128 characters without spaces")
	}
	if strings.TrimSpace(accountID) == "" {
		return Job{}, fault.Missing("accountId")
	}
	if _, err := ParseKind(string(kind)); err != nil {
		return Job{}, err
	}
	return Job{ID: id, AccountID: accountID, Kind: kind, Status: Pending, CreatedAt: now.UTC(), UpdatedAt: now.UTC()}, nil
}

func (j *Job) refuse(to Status) error {
	return fault.Conflict("job " + j.ID + " is " + string(j.Status) + " and cannot become " + string(to))
}

// Start moves a pending job to running. Starting a running job again is a no-op, because a
// retried activity may report its start twice.
func (j *Job) Start(now time.Time) error {
	switch j.Status {
	case Pending:
		j.Status = Running
		j.UpdatedAt = now.UTC()
		return nil
	case Running:
		return nil
	}
	return j.refuse(Running)
}

// Advance records progress, starting a pending job. Counts never go backwards (a client
// watching the stream must never see progress decrease), done may not exceed a known total,
// and a total may not shrink below what is done.
func (j *Job) Advance(done, total int64, message string, now time.Time) error {
	if j.Status.Terminal() {
		return j.refuse(Running)
	}
	switch {
	case done < 0:
		return fault.Invalid("done", itoa(done), "must not be negative")
	case total < 0:
		return fault.Invalid("total", itoa(total), "must not be negative")
	case total > 0 && done > total:
		return fault.Invalid("done", itoa(done), "must not exceed total "+itoa(total))
	case done < j.Progress.Done:
		return fault.Invalid("done", itoa(done), "must not decrease below "+itoa(j.Progress.Done))
	}
	if err := checkMessage(message); err != nil {
		return err
	}
	j.Status = Running
	j.Progress = Progress{Done: done, Total: total, Message: message}
	j.UpdatedAt = now.UTC()
	return nil
}

// Complete ends a pending or running job successfully. A known total counts as fully done.
// An empty message becomes DefaultSuccessMessage; data, when given, must be valid JSON.
func (j *Job) Complete(message string, data json.RawMessage, now time.Time) error {
	if j.Status.Terminal() {
		return j.refuse(Completed)
	}
	if err := checkMessage(message); err != nil {
		return err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		data = nil
	} else if !json.Valid(data) {
		return fault.Invalid("data", text.Cut(string(data)), "must be valid JSON")
	}
	if message == "" {
		message = DefaultSuccessMessage
	}
	if j.Progress.Total > 0 {
		j.Progress.Done = j.Progress.Total
	}
	j.Status = Completed
	j.Result = &Result{Success: true, Message: message, Data: append(json.RawMessage(nil), data...)}
	j.UpdatedAt = now.UTC()
	return nil
}

// Fail ends a pending or running job unsuccessfully with reason.
func (j *Job) Fail(reason string, now time.Time) error {
	if j.Status.Terminal() {
		return j.refuse(Failed)
	}
	if strings.TrimSpace(reason) == "" {
		reason = "job failed"
	}
	if err := checkMessage(reason); err != nil {
		return err
	}
	j.Status = Failed
	j.Result = &Result{Success: false, Message: reason}
	j.UpdatedAt = now.UTC()
	return nil
}

func checkMessage(m string) error {
	if !utf8.ValidString(m) || utf8.RuneCountInString(m) > MaxMessageLen {
		return fault.Invalid("message", text.Cut(m), "must be text of at most 1024 characters")
	}
	return nil
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
