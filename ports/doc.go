// Package ports declares what the use cases (app/) and the workflows (workflows/) need from the
// outside world, as small interfaces named for their consumer's needs. Adapters implement
// them; gomock doubles live in ports/portsmock (regenerate with `make mocks`). It imports
// domain packages and the standard library only.
package ports

//go:generate go tool -modfile=../tools/go.mod mockgen -typed -destination=portsmock/portsmock.go -package=portsmock github.com/tokenscope/tokenscope/ports Clock,AccountStore,Pinger,IngestStore,Ingester,MarketRefresher,TokenReader,TradeReader,PoolReader,RedPacketReader,PositionReader,KYTProvider,KYTStore,KYTStarter,AssetPricer,EndpointStore,AttemptStore,WebhookSender,URLGuard,FilterCompiler,EventSource,DeliveryStarter,AttemptLookup,DeliveryFeeder,RetryStarter,JobStore,JobRunner,WalletRederiver,CandleStore,RateLimiter,TradeRetainer,ChainSource,ChainCheckpointStore,CheckpointedIngester,ChainMonitor
