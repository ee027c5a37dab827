#!/bin/sh
# A Debian container with systemd as PID 1, for tests/systemd/ (see
# /work/shared/real-systemd.md and docs/operations.md "Testing on a real systemd").
#
#   container.sh cache CACHE SRC       build CACHE/base (mmdebstrap) and CACHE/venv-KEY (a
#                                      layer over it: Anna's dependencies as wheels, and a
#                                      venv with them; KEY from SRC's pyproject.toml) unless
#                                      they are there already
#   container.sh key SRC               print KEY
#   container.sh run CACHE KEY UPPER NAME -- NSPAWN-ARGS...
#                                      systemd-nspawn on an overlay of CACHE/venv-KEY over
#                                      CACHE/base (the session's changes go to UPPER; the cache
#                                      stays as built), in its own cgroup, removed after
#
# Each set of dependencies has a layer of its own, and a layer is never changed once built:
# two checkouts with different pyproject.toml files (branches tested side by side) each get
# theirs, and neither pulls the venv from under the other's running container.
#
# Only fixed text runs here: every argument is a path or an nspawn option the test fixture
# chose. Nothing touches the machine's /etc, packages or services: mmdebstrap writes only
# CACHE, and nspawn runs in private mount namespaces.
set -eu

SUITE_FILES=""
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] && SUITE_FILES="$SUITE_FILES $f"
done

# nspawn --keep-unit puts its payload/ and supervisor/ cgroups under the caller's cgroup:
# give this script a cgroup of its own in each hierarchy nspawn uses, and remove it after.
# On a hybrid host the pids and memory hierarchies too, beneath the cgroup this script is in:
# the container's cgroup namespace is rooted there, so what the container's systemd makes in
# them (init.sh makes them writable) stays inside this scratch cgroup.
own_cgroup() {
    CGROUPS=""
    for h in /sys/fs/cgroup/systemd /sys/fs/cgroup/unified /sys/fs/cgroup; do
        [ -f "$h/cgroup.procs" ] || continue
        [ "$h" = /sys/fs/cgroup ] && [ -n "$CGROUPS" ] && continue  # hybrid: done above
        d="$h/anna-ci-$1-$$"
        mkdir -p "$d" && echo $$ > "$d/cgroup.procs" && CGROUPS="$CGROUPS $d"
    done
    for c in pids memory; do
        h="/sys/fs/cgroup/$c"
        [ -f "$h/cgroup.procs" ] || continue
        # (the v1 line for this controller in /proc/self/cgroup: ID:CONTROLLERS:PATH)
        at="$(awk -F: -v c="$c" '{ n = split($2, l, ","); for (i = 1; i <= n; i++)
            if (l[i] == c) print $3 }' /proc/$$/cgroup)"
        [ -n "$at" ] || continue
        d="$h${at%/}/anna-ci-$1-$$"
        mkdir -p "$d" && echo $$ > "$d/cgroup.procs" && CGROUPS="$CGROUPS $d"
    done
}
drop_cgroup() {
    for d in $CGROUPS; do
        root="${d%/anna-ci-*}"
        echo $$ > "$root/cgroup.procs" 2>/dev/null || true
        # deepest first (payload/, supervisor/ and what systemd made inside)
        find "$d" -depth -type d -exec rmdir {} + 2>/dev/null || true
    done
}

nspawn() {  # nspawn ROOT ARGS...: the options every run needs where no machined runs
    root="$1"; shift
    systemd-nspawn -D "$root" --register=no --keep-unit --quiet "$@"
}

key_of() {  # key_of SRC: the dependency set's name
    sha256sum "$1/pyproject.toml" | cut -c1-16
}

cmd_cache() {
    cache="$1"; src="$2"
    mkdir -p "$cache"
    exec 9>"$cache/lock"
    flock 9
    if [ ! -e "$cache/base.done" ]; then
        . /etc/os-release
        rm -rf "$cache/base"
        # (the machine's own mirrors; an old snapshot mirror needs the date checks off)
        # shellcheck disable=SC2086
        unshare -m --propagation private mmdebstrap --mode=root --variant=minbase \
            --include=systemd,systemd-sysv,dbus,dbus-user-session,libpam-systemd,python3,python3-venv,sudo,iproute2,procps,passwd,ca-certificates \
            --aptopt='Acquire::Check-Valid-Until "false"' --aptopt='Acquire::Check-Date "false"' \
            "$VERSION_CODENAME" "$cache/base" $SUITE_FILES
        touch "$cache/base.done"
    fi
    layer="$cache/venv-$(key_of "$src")"
    if [ ! -e "$layer.done" ]; then
        rm -rf "$layer" "$layer.tmp"
        top="$layer.tmp/root"
        mkdir -p "$top/opt/anna-src" "$top/etc/ssl/certs" "$layer.tmp/work"
        cp "$src/pyproject.toml" "$src/README.md" "$top/opt/anna-src/"
        for pkg in anna_common annad annactl; do cp -r "$src/$pkg" "$top/opt/anna-src/"; done
        cp "$(dirname "$0")/wheels.sh" "$top/opt/anna-wheels.sh"
        # the machine's pip configuration, CA bundle and proxy variables (a proxy's CA, a
        # mirror) for this one networked run; the booted containers have no network
        [ -f /etc/pip.conf ] && cp /etc/pip.conf "$top/etc/pip.conf"
        [ -f /etc/ssl/certs/ca-certificates.crt ] && \
            cp /etc/ssl/certs/ca-certificates.crt "$top/etc/ssl/certs/ca-certificates.crt"
        own_cgroup cache
        trap drop_cgroup EXIT
        # the layer is the upper directory of this run's overlay over base
        unshare -m --propagation private "$0" _overlay "$cache/base" "$layer.tmp" \
            /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
            ${PIP_INDEX_URL:+PIP_INDEX_URL=$PIP_INDEX_URL} \
            ${PIP_EXTRA_INDEX_URL:+PIP_EXTRA_INDEX_URL=$PIP_EXTRA_INDEX_URL} \
            ${http_proxy:+http_proxy=$http_proxy} ${https_proxy:+https_proxy=$https_proxy} \
            ${HTTP_PROXY:+HTTP_PROXY=$HTTP_PROXY} ${HTTPS_PROXY:+HTTPS_PROXY=$HTTPS_PROXY} \
            ${no_proxy:+no_proxy=$no_proxy} ${NO_PROXY:+NO_PROXY=$NO_PROXY} \
            /bin/sh /opt/anna-wheels.sh
        drop_cgroup
        trap - EXIT
        rm -rf "$top/opt/anna-src" "$top/opt/anna-wheels.sh"
        mv "$top" "$layer"
        rm -rf "$layer.tmp"
        touch "$layer.done"
    fi
}

cmd_run() {  # run CACHE KEY UPPER NAME -- ARGS
    cache="$1"; key="$2"; upper="$3"; name="$4"; shift 4
    [ "$1" = "--" ] && shift
    [ -e "$cache/venv-$key.done" ] || { echo "no layer venv-$key in $cache: run cache" >&2; exit 2; }
    own_cgroup "$name"
    trap drop_cgroup EXIT
    status=0
    unshare -m --propagation private "$0" _overlay "$cache/venv-$key:$cache/base" "$upper" "$@" \
        || status=$?
    drop_cgroup
    trap - EXIT
    # nspawn leaves empty propagation directories behind where /run is no tmpfs
    rmdir "/run/systemd/nspawn/propagate/$name" 2>/dev/null || true
    exit "$status"
}

cmd_overlay() {  # (inside a private mount namespace) _overlay LOWER[:LOWER…] UPPER ARGS
    lower="$1"; upper="$2"; shift 2
    mkdir -p "$upper/root" "$upper/work" "$upper/merged"
    mount -t overlay overlay \
        -o "lowerdir=$lower,upperdir=$upper/root,workdir=$upper/work" "$upper/merged"
    nspawn "$upper/merged" "$@"
}

case "${1:-}" in
    cache) shift; cmd_cache "$@" ;;
    key) shift; key_of "$1" ;;
    run) shift; cmd_run "$@" ;;
    _overlay) shift; cmd_overlay "$@" ;;
    _nspawn) shift; nspawn "$@" ;;
    *) echo "usage: $0 cache CACHE SRC | key SRC | run CACHE KEY UPPER NAME -- NSPAWN-ARGS" >&2
       exit 2 ;;
esac
