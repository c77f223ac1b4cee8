//go:build !linux

package shells

func dropStartupCode() {}
