package main

import (
	"encoding/json"
	"fmt"
	"os"
)

// plural is "1 event", "2 events": n and the noun, with an s unless n is 1.
func plural[N ~int | ~int64 | ~uint64](n N, noun string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func printJSON(v any) error {
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
