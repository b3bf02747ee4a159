// Package workflows holds tokenscope's Temporal workflows and activities: KYT registration,
// webhook delivery, jobs and the market refresh loop. Workflow code is deterministic (only
// workflow.Now, workflow.Sleep, workflow.Go, workflow.SideEffect); activities are structs that
// hold their ports. It imports domain, ports and the Temporal SDK only.
package workflows

// TaskQueue is the one task queue every tokenscope worker polls.
const TaskQueue = "tokenscope"

// Workflow type names. They are part of the persisted history: never rename one that shipped.
const (
	KYTRegistrationWorkflowName = "KYTRegistration"
	WebhookDeliveryWorkflowName = "WebhookDelivery"
	WebhookDispatchWorkflowName = "WebhookDispatch"
	CalculatePnLJobWorkflowName = "CalculatePnLJob"
	IngestJobWorkflowName       = "IngestJob"
	MarketRefreshWorkflowName   = "MarketRefresh"
	NoopWorkflowName            = "Noop"
)

// Query names.
const (
	// JobProgressQuery returns the job's current domain/job.Job state.
	JobProgressQuery = "job-progress"
)

// Fixed workflow IDs of the singleton loops.
const (
	MarketRefreshWorkflowID   = "market-refresh"
	WebhookDispatchWorkflowID = "webhook-dispatch"
)

// KYTWorkflowID derives a registration's workflow ID from its account, kind and idempotency key,
// so a repeated POST finds the same workflow.
func KYTWorkflowID(accountID, kind, idempotencyKey string) string {
	return "kyt/" + accountID + "/" + kind + "/" + idempotencyKey
}

// JobWorkflowID derives a job's workflow ID from its ID.
func JobWorkflowID(jobID string) string { return "job/" + jobID }

// DeliveryWorkflowID derives a delivery's workflow ID from the endpoint and event.
func DeliveryWorkflowID(endpointID, eventID string) string {
	return "delivery/" + endpointID + "/" + eventID
}

// Names added for KYT, webhook delivery and jobs.
const (
	// KYTStatusQuery returns the registration's status as the workflow last saw it.
	KYTStatusQuery = "kyt-status"
)
