#!/bin/sh
# The container's PID 1 for a moment, then systemd (tests/systemd/machine.py boots with it).
#
# On a host whose pids and memory controllers are cgroup v1 hierarchies (the hybrid layout),
# systemd-nspawn mounts them read-only in the container (it delegates v1 controllers only
# into a user namespace), so the container's systemd cannot give annad.service its
# Delegate=pids memory, and annad cannot make a cgroup for each confined run, as it does on
# a real machine. container.sh roots these hierarchies, through the container's cgroup
# namespace, at a scratch cgroup of the test's own, so making them writable here hands the
# container that scratch subtree and nothing above it. systemd decides which controllers it
# manages when it starts, so this runs before it. Where nspawn mounted cgroup v2 (a v2 host)
# the container's cgroup is delegated already and there is nothing to do.
set -eu
for h in pids memory; do
    if mountpoint -q "/sys/fs/cgroup/$h"; then
        mount -o remount,bind,rw "/sys/fs/cgroup/$h"
    fi
done
exec /lib/systemd/systemd "$@"
