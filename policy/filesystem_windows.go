package policy

import "io/fs"

// plantable is false on Windows: no container shell plants links there.
func plantable(string, fs.FileInfo) bool { return false }

func searchable(string) bool { return true }
