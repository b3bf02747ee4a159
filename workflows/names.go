// Package workflows holds tokenscope's Temporal workflows and activities: KYT registration,
// webhook delivery, jobs, the market refresh loop and the chain followers. Workflow code is deterministic (only
// workflow.Now, workflow.Sleep, workflow.Go, workflow.SideEffect); activities are structs that
// hold their ports. It imports domain, ports and the Temporal SDK only.
package workflows

import "github.com/tokenscope/tokenscope/domain/chain"

// TaskQueue is the one task queue every tokenscope worker polls.
const TaskQueue = "tokenscope"

// Workflow type, activity, query and signal names are part of the persisted history: never
// rename one that shipped.

// Workflow type names.
const (
	KYTRegistrationWorkflowName = "KYTRegistration"
	WebhookDeliveryWorkflowName = "WebhookDelivery"
	WebhookDispatchWorkflowName = "WebhookDispatch"
	WebhookEndpointWorkflowName = "WebhookEndpoint"
	CalculatePnLJobWorkflowName = "CalculatePnLJob"
	MarketRefreshWorkflowName   = "MarketRefresh"
	NoopWorkflowName            = "Noop"
	ChainFollowWorkflowName     = "ChainFollow"
)

// Activity names. Activities are registered under their methods' names; these are the ones
// code refers to by name.
const (
	// RefreshMarketActivityName is the activity the refresh loop runs every interval.
	RefreshMarketActivityName = "RefreshMarket"
)

// Query names.
const (
	// JobProgressQuery returns the job's current domain/job.Job state.
	JobProgressQuery = "job-progress"
	// KYTStatusQuery returns the registration's status as the workflow last saw it.
	KYTStatusQuery = "kyt-status"
	// RefreshConfigQuery returns the RefreshInput in force.
	RefreshConfigQuery = "refresh-config"
	// DispatchConfigQuery returns the DispatchInput in force.
	DispatchConfigQuery = "dispatch-config"
	// ChainFollowQuery returns a chain follower's FollowStatus.
	ChainFollowQuery = "chain-follow"
)

// Signal names.
const (
	// DeliverSignal carries a DeliverBatch to an endpoint workflow.
	DeliverSignal = "deliver"
	// RefreshConfigSignal carries a RefreshInput to the running loop: every process that starts
	// the loop sends its configuration with it (signal-with-start), so the most recently started
	// process's MARKET_REFRESH_INTERVAL is the one in force, and continue-as-new carries it on.
	RefreshConfigSignal = "refresh-config"
	// DispatchConfigSignal carries a DispatchInput to the webhook dispatcher, the same way
	// (WEBHOOK_DISPATCH_POLL).
	DispatchConfigSignal = "dispatch-config"
)

// Fixed workflow IDs of the singleton loops.
const (
	MarketRefreshWorkflowID   = "market-refresh"
	WebhookDispatchWorkflowID = "webhook-dispatch"
)

// KYTWorkflowID derives a registration's workflow ID from its account, kind and externalId
// (derived from the Idempotency-Key or the request's fingerprint, which is what makes a repeated
// POST the same registration), so a repeated POST finds the same workflow.
func KYTWorkflowID(accountID, kind, externalID string) string {
	return "kyt/" + accountID + "/" + kind + "/" + externalID
}

// JobWorkflowID derives a job's workflow ID from its ID.
func JobWorkflowID(jobID string) string { return "job/" + jobID }

// DeliveryWorkflowID derives a delivery's workflow ID from the endpoint and event.
func DeliveryWorkflowID(endpointID, eventID string) string {
	return "delivery/" + endpointID + "/" + eventID
}

// EndpointWorkflowID is the ID of an endpoint's delivery workflow.
func EndpointWorkflowID(endpointID string) string { return "endpoint/" + endpointID }

// ChainFollowWorkflowID is the ID of a chain's follower: one per chain.
func ChainFollowWorkflowID(c chain.Chain) string { return "chain-follow/" + string(c) }
