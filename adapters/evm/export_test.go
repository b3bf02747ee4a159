package evm

// CapLogs exposes capLogs to the package's tests.
var CapLogs = capLogs

// BatchRefusals exposes batchRefusals to the package's tests.
const BatchRefusals = batchRefusals
