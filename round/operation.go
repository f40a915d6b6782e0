package round

// OperationID names one call of one round execution (SPEC R):
// "<workflow id>/<run id>/<call id>", where run id is the Temporal run id of
// the round. It is the same for every attempt of the call, survives worker
// crashes, and no other execution produces it, so a tool may use it as an
// idempotency key.
func OperationID(workflowID, temporalRunID, callID string) string {
	return workflowID + "/" + temporalRunID + "/" + callID
}

// IdempotencyHeader carries the operation id of an unsafe HTTP request
// (http_request, ext_* tools).
const IdempotencyHeader = "Idempotency-Key"

// OperationEnv carries the operation id to script_* tools.
const OperationEnv = "TOOLROUND_OPERATION_ID"

// OperationMetaKey is the _meta key of an MCP tools/call request that
// carries the operation id.
const OperationMetaKey = "toolround/operation_id"
