package handlers

// The sizes the external tests of ApplyLog build their logs around.
const (
	DecodeChunk  = decodeChunk
	RecoverBatch = recoverBatch
)

// HoldProjections makes every batch wait for release before its
// projections are committed (its events are in the log); the returned
// func removes the hook.
func HoldProjections(release <-chan struct{}) func() {
	testHookBeforeProject = func() { <-release }
	return func() { testHookBeforeProject = nil }
}
