//go:build brokenopid

package activities

// withOperationID drops the operation id: a deliberately broken build
// that the crash matrix (L1, CRASH_BUILD_TAGS=brokenopid) must catch.
func withOperationID(string) string { return "" }
