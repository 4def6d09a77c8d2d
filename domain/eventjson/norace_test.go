//go:build !race

package eventjson_test

const raceEnabled = false
