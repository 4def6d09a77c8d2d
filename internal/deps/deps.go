//go:build tools

// Package deps pins the modules the project is built on before every
// package that uses them exists.
package deps

import (
	_ "github.com/cloudevents/sdk-go/v2"
	_ "github.com/cockroachdb/apd/v3"
	_ "github.com/cockroachdb/pebble/v2"
	_ "github.com/golang-jwt/jwt/v5"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/spf13/cobra"
)
