package container

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
)

// WarmCgroupLock starts, in the background, the wait that the first move of
// a process between cgroups costs, so that a shell about to be started as
// root does not wait for it in full.
//
// Every move between cgroups (a write to cgroup.procs, cgroup v1 or v2)
// takes the kernel's global cgroup_threadgroup_rwsem for writing, and the
// first writer after an idle spell waits for an RCU grace period before it
// gets it: 6-16 ms on this project's machines, while the new container's
// init waits for its cgroups. A writer that comes within a grace period of
// the last one pays nothing. libcontainer moves the init into its cgroups
// only after cshell has built the shell's plan and spec and started the
// init (5-8 ms of work), so a move made now, of this process into the
// cgroup it is already in, lets the grace period run meanwhile. The move
// changes nothing; an error (a cgroup this process may not be moved into)
// still took the lock, and is ignored.
//
// It does nothing where cshell makes no cgroups (an unprivileged user, or
// root in a container engine with a read-only cgroup filesystem).
func WarmCgroupLock() {
	if !ownCgroups() {
		return
	}
	if procs := ownProcsFile(); procs != "" {
		warmCgroupLock(procs)
	}
}

// warmCgroupLock moves this process into the cgroup whose cgroup.procs
// file is procs, in a goroutine; the channel gets the write's error.
func warmCgroupLock(procs string) <-chan error {
	done := make(chan error, 1)
	go func() {
		f, err := os.OpenFile(procs, os.O_WRONLY, 0)
		if err == nil {
			_, err = f.Write([]byte("0")) // 0: this process, all its threads
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		done <- err
	}()
	return done
}

// ownProcsFile is the cgroup.procs file of the cgroup this process is in,
// on one hierarchy (see procsFile).
func ownProcsFile() string {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	return procsFile(data, func(p string) bool {
		_, err := os.Stat(p)
		return err == nil
	})
}

// procsFile picks, from /proc/self/cgroup's lines (ID:CONTROLLERS:PATH),
// the cgroup.procs file of this process's cgroup: on the unified hierarchy
// when /sys/fs/cgroup is one, else on the first cgroup v1 hierarchy of a
// controller mounted under its name. exists says whether a file is there.
func procsFile(data []byte, exists func(string) bool) string {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 || !strings.HasPrefix(parts[2], "/") {
			continue
		}
		var dir string
		switch {
		case parts[0] == "0" && parts[1] == "":
			dir = "/sys/fs/cgroup"
			if !exists(dir + "/cgroup.controllers") {
				continue // hybrid: the unified hierarchy is mounted elsewhere, holding little
			}
		case parts[1] != "" && !strings.HasPrefix(parts[1], "name="):
			dir = "/sys/fs/cgroup/" + strings.Split(parts[1], ",")[0]
		default:
			continue
		}
		p := filepath.Join(dir, parts[2], "cgroup.procs")
		if strings.HasPrefix(p, dir+"/") && exists(p) {
			return p
		}
	}
	return ""
}
