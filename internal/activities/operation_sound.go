//go:build !brokenopid

package activities

// withOperationID is id: the call's operation id reaches its tool (R).
func withOperationID(id string) string { return id }
