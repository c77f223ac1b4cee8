#!/usr/bin/env python3
"""Make a rootless OCI bundle for runc that mirrors cshell's sandbox.

usage: mkbundle.py BUNDLE [--rw DIR] [--] [ARG ...]      (default ARG: /bin/true)

Run it as the user who will run the container: it starts from
`runc spec --rootless`, so the uid/gid maps are the caller's. Then, like
container/container_linux.go:

  * root: BUNDLE/rootfs, read-only; an empty mount point per top-level host
    directory and the host's top-level symlinks recreated (/bin -> usr/bin...)
  * every top-level host directory except the private ones bound recursively
    read-only ("rro"); DIR (the working directory) bound read-write on top
  * private /tmp and /run (tmpfs), /dev tmpfs + devpts/shm/mqueue (runc's
    defaults), sysfs read-only, no /sys/fs/cgroup mount
  * namespaces: user, pid, mount, ipc, uts (runc's) + network + cgroup
  * no capabilities, no rlimits, no_new_privs, hostname "cshell",
    net.ipv4.ip_unprivileged_port_start=0

Prints the bundle path.
"""
import json
import os
import subprocess
import sys

# Top-level directories the sandbox gets its own of (cshell's privateTop).
PRIVATE = {"proc", "dev", "sys", "tmp", "run", "lost+found", ".cshell"}


def main(argv):
    if not argv or argv[0].startswith("-"):
        sys.exit(__doc__)
    bundle = os.path.abspath(argv[0])
    rest = argv[1:]
    rw = None
    if rest[:1] == ["--rw"]:
        if len(rest) < 2:
            sys.exit("mkbundle.py: --rw needs a directory")
        rw = os.path.realpath(rest[1])
        rest = rest[2:]
    if rest[:1] == ["--"]:
        rest = rest[1:]
    args = rest or ["/bin/true"]

    rootfs = os.path.join(bundle, "rootfs")
    os.makedirs(rootfs, exist_ok=True)
    config = os.path.join(bundle, "config.json")
    if os.path.lexists(config):
        os.unlink(config)
    subprocess.run(["runc", "spec", "--rootless", "--bundle", bundle], check=True)
    with open(config) as f:
        spec = json.load(f)

    shared = []
    for name in sorted(os.listdir("/")):
        host, mnt = "/" + name, os.path.join(rootfs, name)
        if os.path.islink(host):
            if not os.path.lexists(mnt):
                os.symlink(os.readlink(host), mnt)
        elif os.path.isdir(host):
            os.makedirs(mnt, exist_ok=True)
            if name not in PRIVATE:
                shared.append(host)
    for name in ("proc", "dev", "sys", "tmp", "run"):
        os.makedirs(os.path.join(rootfs, name), exist_ok=True)

    proc = spec["process"]
    proc.update(
        args=args,
        terminal=False,
        cwd=rw or "/",
        env=["PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "HOME=/tmp"],
        noNewPrivileges=True,
        capabilities={"bounding": [], "effective": [], "permitted": []},
    )
    proc.pop("rlimits", None)
    spec["root"] = {"path": "rootfs", "readonly": True}
    spec["hostname"] = "cshell"

    # runc's defaults up to /dev/mqueue; replace its rootless /sys rbind and
    # cgroup mount with a plain read-only sysfs (we own a network namespace).
    mounts = [m for m in spec["mounts"] if not m["destination"].startswith("/sys")]
    mounts.append({"destination": "/sys", "type": "sysfs", "source": "sysfs",
                   "options": ["nosuid", "noexec", "nodev", "ro"]})
    for dst in ("/tmp", "/run"):
        mode = "mode=1777" if dst == "/tmp" else "mode=755"
        mounts.append({"destination": dst, "type": "tmpfs", "source": "tmpfs",
                       "options": ["nosuid", "nodev", mode]})
    for host in shared:
        mounts.append({"destination": host, "type": "bind", "source": host,
                       "options": ["rbind", "rro", "nosuid", "nodev"]})
    if rw:
        mounts.append({"destination": rw, "type": "bind", "source": rw,
                       "options": ["rbind", "rw", "nosuid", "nodev"]})
    spec["mounts"] = mounts

    linux = spec["linux"]
    have = {ns["type"] for ns in linux["namespaces"]}
    for kind in ("network", "cgroup"):
        if kind not in have:
            linux["namespaces"].append({"type": kind})
    linux["sysctl"] = {"net.ipv4.ip_unprivileged_port_start": "0"}

    with open(config, "w") as f:
        json.dump(spec, f, indent=1)
        f.write("\n")
    print(bundle)


if __name__ == "__main__":
    main(sys.argv[1:])
