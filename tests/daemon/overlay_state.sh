#!/bin/sh
# overlay_state.sh LOWER UPPER WORK POINT -- ARGV...: run ARGV with an overlay mounted at
# POINT (the daemon's state directory), in the private mount namespace `unshare -m
# --propagation private` gave this script (tests/daemon/test_capture_user_overlay_state.py).
# Fixed text only: every argument is a path the test made or the daemon's own argv.
set -eu
mount -t overlay anna-test-state -o "lowerdir=$1,upperdir=$2,workdir=$3" "$4"
shift 5
exec "$@"
