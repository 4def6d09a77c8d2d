package embedded_test

import (
	"os"
	"path/filepath"
)

func removeAll(dir, sub string) error { return os.RemoveAll(filepath.Join(dir, sub)) }
