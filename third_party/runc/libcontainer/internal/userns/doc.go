// Package userns provides helpers for interacting with Linux user namespaces.
package userns
