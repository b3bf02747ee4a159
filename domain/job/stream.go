package job

import (
	"bytes"
	"encoding/json"
	"reflect"
)

// Message is the JSON object of one job-stream event, written on the SSE "data:" line. It is
// flat on purpose: the public API's Go SDK reads status (and error) at the top level, and a
// wrapped {"id":n,"data":{…}} envelope would leave it waiting forever. The numeric id of the
// spec's JobStreamingDTO is the SSE "id:" field, which the adapter numbers.
type Message struct {
	ID       string         `json:"id"`
	Status   Status         `json:"status"`
	Result   *MessageResult `json:"result,omitempty"`
	Progress Progress       `json:"progress"`
	// Error repeats a failed job's reason where the SDK looks for it ("job failed: <error>").
	Error string `json:"error,omitempty"`
}

// MessageResult is present once the job is terminal.
type MessageResult struct {
	Success bool        `json:"success"`
	Data    MessageData `json:"data"`
}

// MessageData carries the result message and, when the job produced one, its data value.
type MessageData struct {
	Message string          `json:"message"`
	Detail  json.RawMessage `json:"detail,omitempty"`
}

// StreamMessage builds the stream event describing j's current state.
func StreamMessage(j Job) Message {
	m := Message{ID: j.ID, Status: j.Status, Progress: j.Progress}
	if j.Result != nil {
		m.Result = &MessageResult{Success: j.Result.Success,
			Data: MessageData{Message: j.Result.Message, Detail: j.Result.Data}}
		if j.Status == Failed {
			m.Error = j.Result.Message
		}
	}
	return m
}

// Changed reports whether a client that saw a would see something new in b, i.e. whether
// their stream messages differ; timestamps alone (a heartbeat touching UpdatedAt) are no
// change, so the streamer sends nothing for them.
func Changed(a, b Job) bool {
	ma, mb := StreamMessage(a), StreamMessage(b)
	x, errA := json.Marshal(ma)
	y, errB := json.Marshal(mb)
	if errA != nil || errB != nil { // only if someone stored invalid JSON in Result.Data
		return !reflect.DeepEqual(ma, mb)
	}
	return !bytes.Equal(x, y)
}
