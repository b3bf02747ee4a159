package ports

import "github.com/tokenscope/tokenscope/domain/chainevent"

// CommitListener hears what ingest made durable, after the commit and never before: the
// realtime streams publish from it. Both calls must return at once (queue the work, drop it when
// the queue is full): a listener never slows ingest down.
type CommitListener interface {
	// Committed is called with a batch once its transaction committed (Apply or ApplyPending).
	Committed(b chainevent.Batch)
	// Derived is called once the market data of every token committed so far is derived (after
	// an Apply, which derives in its own transaction, and after each Flush).
	Derived()
}

// StreamHub is the realtime server as the stream publisher sees it (adapters/realtime, over the
// Centrifuge library). Tags travel with a publication so per-subscription filters can match it.
type StreamHub interface {
	// Publish sends data to every subscriber of channel on every node (through the broker).
	Publish(channel string, data []byte, tags map[string]string) error
	// Deliver sends data to the subscribers of channel on this process only.
	Deliver(channel string, data []byte, tags map[string]string) error
	// Reaches reports whether a publication on channel may find a subscriber: one on this
	// process, or possibly one elsewhere when the broker is shared.
	Reaches(channel string) bool
	// LocalChannels lists the channels with subscribers on this process.
	LocalChannels() []string
	// Announce hands data to every node's announcement handler, this process's included.
	Announce(data []byte) error
}
