//go:build goexperiment.jsonv2

package eventjson

// oracleIsV2 reports whether encoding/json is the jsonv2 experiment's.
const oracleIsV2 = true
