// Package procstat reads what cshell needs of a process from /proc/PID/stat
// (Linux): its state and its start time, so that a zombie or a reused pid
// is not taken for the process a record names.
package procstat
