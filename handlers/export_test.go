package handlers

// The sizes the external tests of ApplyLog build their logs around.
const (
	DecodeChunk  = decodeChunk
	RecoverBatch = recoverBatch
)
