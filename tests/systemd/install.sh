# Run inside the container before it boots (tests/systemd/machine.py): install the worktree
# copied to /opt/anna-src into the cached venv, offline (its dependencies are there
# already), and put the entry points where a package puts them (annad.service runs
# /usr/bin/annad).
set -eu
/opt/anna/venv/bin/pip install -q --no-index --no-deps --no-build-isolation -e /opt/anna-src
ln -sf /opt/anna/venv/bin/annad /usr/bin/annad
ln -sf /opt/anna/venv/bin/annactl /usr/bin/annactl
