//go:build !unix

package cache

import (
	"io/fs"
	"path/filepath"
)

func filepathWalk(root string, visit func(fs.FileInfo) bool) error {
	return filepath.WalkDir(root, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		if !visit(info) {
			return filepath.SkipAll
		}
		return nil
	})
}
