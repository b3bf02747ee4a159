package workflows

import "go.temporal.io/sdk/workflow"

// NoopWorkflow does nothing: the baseline the round-trip measurements compare against.
func NoopWorkflow(ctx workflow.Context) error { return nil }
