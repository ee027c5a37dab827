# Run once inside the cached rootfs, with the machine's network (container.sh cache):
# Anna's dependencies as wheels in /opt/anna/wheels, and /opt/anna/venv with them installed.
# Afterwards pip in the container installs offline from those wheels (/etc/pip.conf), so
# the README's set-up (python3 -m venv .venv && .venv/bin/pip install -e .) works in a
# container booted without network.
set -eu
python3 -m venv /opt/anna/venv
pip=/opt/anna/venv/bin/pip
# the build backend pyproject.toml names, so that later installs need no index
$pip wheel -q --disable-pip-version-check -w /opt/anna/wheels /opt/anna-src 'setuptools>=68' wheel
rm -f /opt/anna/wheels/anna-*.whl
$pip install -q --disable-pip-version-check --no-index --find-links /opt/anna/wheels \
    /opt/anna-src 'setuptools>=68' wheel
$pip uninstall -q -y anna
printf '[global]\nno-index = true\nfind-links = /opt/anna/wheels\ndisable-pip-version-check = true\n' \
    > /etc/pip.conf
