// Package validate provides helpers for validating configuration.
package validate
