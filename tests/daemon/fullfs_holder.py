"""Holds a private mount namespace with a small tmpfs on a directory, for a test's daemon to
enter (``nsenter -t PID -m``): the full target disk of tests/daemon/test_faults_undo.py, which
outlives each daemon the test kills, and never appears in the machine's own mount table.

    unshare -m --propagation private python fullfs_holder.py DIR SIZE

Prints ``ready`` once mounted; holds the namespace until its stdin is closed.
"""

from __future__ import annotations

import subprocess
import sys


def main() -> int:
    """Mount, say ready, wait for stdin to close."""
    directory, size = sys.argv[1], sys.argv[2]
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs",
                           directory], check=False, capture_output=True, text=True)
    if done.returncode != 0:
        print(f"cannot mount: {done.stderr.strip()}", flush=True)
        return 1
    print("ready", flush=True)
    sys.stdin.read()
    return 0


if __name__ == "__main__":
    sys.exit(main())
