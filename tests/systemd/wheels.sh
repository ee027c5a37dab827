# Run once inside the cached rootfs, with the machine's network (container.sh cache):
# Anna's dependencies as wheels in /opt/anna/wheels, and /opt/anna/venv with them installed.
# Afterwards pip in the container installs offline from those wheels (/etc/pip.conf), so
# the README's set-up (python3 -m venv .venv && .venv/bin/pip install -e .) works in a
# container booted without network.
set -eu
# (this runs on an overlay whose upper layer becomes the cache's layer for this dependency
# set: a cache of the first layout has a venv in its base, which the layer hides)
rm -rf /opt/anna
python3 -m venv /opt/anna/venv
pip=/opt/anna/venv/bin/pip
# Anna's dependencies (read from pyproject.toml) and the build backend it names, so that later
# installs need no index. Anna itself is not built here: bdist_wheel fails with EEXIST on this
# overlay; the containers install it editable from their copy of the checkout (install.sh)
deps="$(python3 -c 'import tomllib
with open("/opt/anna-src/pyproject.toml", "rb") as f:
    print("\n".join(tomllib.load(f)["project"]["dependencies"]))')"
# shellcheck disable=SC2086
$pip wheel -q --disable-pip-version-check -w /opt/anna/wheels $deps 'setuptools>=68' wheel
# shellcheck disable=SC2086
$pip install -q --disable-pip-version-check --no-index --find-links /opt/anna/wheels \
    $deps 'setuptools>=68' wheel
printf '[global]\nno-index = true\nfind-links = /opt/anna/wheels\ndisable-pip-version-check = true\n' \
    > /etc/pip.conf
