package evm

// CapLogs exposes capLogs to the package's tests.
var CapLogs = capLogs
