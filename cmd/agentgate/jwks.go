package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentgate/agentgate/handlers/attest"
	"github.com/agentgate/agentgate/handlers/history/report"
)

// jwksHelp is the help of every --jwks flag.
const jwksHelp = "signing keys: a gate's JWKS URL (http(s)://HOST/.well-known/jwks.json), a JWKS file, a data dir or its keys folder, or a compliance bundle (its bundled keys)"

// loadJWKS reads the key set --jwks names (jwksHelp): a URL is fetched, a
// folder is read as a data dir's keyring (DIR or DIR/keys; no key is ever
// created), a file is a JWKS document or else a compliance bundle, whose
// bundled key set is taken. The fetch is bounded to 30 s.
func loadJWKS(ctx context.Context, src string) ([]byte, error) {
	lower := strings.ToLower(src)
	if strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://") {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		return attest.FetchJWKS(ctx, src)
	}
	info, err := os.Stat(src)
	if err != nil {
		return nil, fmt.Errorf("reading --jwks %s: %w", src, err)
	}
	if info.IsDir() {
		dataDir := src
		if _, err := os.Stat(filepath.Join(src, "keys")); err != nil && filepath.Base(filepath.Clean(src)) == "keys" {
			dataDir = filepath.Dir(filepath.Clean(src))
		}
		kr, err := attest.ReadKeyring(dataDir)
		if err != nil {
			return nil, fmt.Errorf("reading --jwks %s as a data dir or its keys folder: %w", src, err)
		}
		return kr.JWKS(), nil
	}
	set, jwksErr := attest.FetchJWKS(ctx, src)
	if jwksErr == nil {
		return set, nil
	}
	f, err := os.Open(src)
	if err != nil {
		return nil, fmt.Errorf("reading --jwks %s: %w", src, err)
	}
	defer f.Close()
	b, err := report.ReadBundle(f)
	if err != nil {
		return nil, fmt.Errorf("reading --jwks %s: neither a JWKS (%v) nor a compliance bundle (%w)", src, jwksErr, err)
	}
	if _, err := attest.ParseJWKS(b.JWKS); err != nil {
		return nil, fmt.Errorf("reading --jwks %s: the bundle's key set: %w", src, err)
	}
	return b.JWKS, nil
}
