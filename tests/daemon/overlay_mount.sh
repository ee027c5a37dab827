#!/bin/sh
# overlay_mount.sh LOWER UPPER WORK POINT -- ARGV...: run ARGV with an overlay mounted at
# POINT, in the private mount namespace `unshare -m --propagation private` gave this script
# (tests/daemon/test_capture_user_overlay_state.py: a per-user daemon's state directory on
# overlayfs; a mount under a directory the daemon cannot search).
# Fixed text only: every argument is a path the test made or the daemon's own argv.
set -eu
mount -t overlay anna-test-overlay -o "lowerdir=$1,upperdir=$2,workdir=$3" "$4"
shift 5
exec "$@"
