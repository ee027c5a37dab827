"""Start a program with decoy trees bound over real ones, in a private mount namespace.

``unshare -m --propagation private PYTHON tests/decoyns.py DECOY TARGET [DECOY TARGET…] --
ARGV…``: each DECOY directory is bound over TARGET (``/etc``…) in the new namespace only,
then ARGV is executed there. The daemon under test and every step it runs see the decoys;
the machine's own trees are never reachable by their paths.
"""

from __future__ import annotations

import ctypes
import os
import sys

MS_BIND = 0x1000
MS_REC = 0x4000


def main(argv: list[str]) -> int:
    """Bind the decoys, then become ARGV."""
    split = argv.index("--")
    pairs, program = argv[1:split], argv[split + 1:]
    libc = ctypes.CDLL(None, use_errno=True)
    for decoy, target in zip(pairs[::2], pairs[1::2], strict=True):
        if libc.mount(decoy.encode(), target.encode(), None, MS_BIND | MS_REC, None) != 0:
            print(f"decoyns: cannot bind {decoy} over {target}: "
                  f"{os.strerror(ctypes.get_errno())}", file=sys.stderr)
            return 125
    os.execv(program[0], program)
    return 125


if __name__ == "__main__":
    sys.exit(main(sys.argv))
