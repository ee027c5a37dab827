#!/bin/sh
# readonly_cgroups.sh PROGRAM ARGS...: run PROGRAM (annad) where no cgroup can be made.
#
# Run it under `unshare -m --propagation private` (tests/daemon/test_confine_cgroups.py
# does): in that private mount namespace every cgroup hierarchy is made read-only, as in a
# container whose cgroups are not delegated, then PROGRAM replaces this shell. The machine's
# own mounts and cgroups are not touched (the remounts stay in the private namespace).
set -eu
for point in $(findmnt -rn -t cgroup,cgroup2 -o TARGET); do
    mount -o remount,bind,ro "$point"
done
exec "$@"
