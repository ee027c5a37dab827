"""packaging/PKGBUILD builds a real Arch package with the real makepkg.

makepkg refuses root, so as root it runs as ``nobody`` (``setpriv``) in a temporary copy of
the committed tree; ``PACMAN=true`` keeps it away from the machine's package database. The
build needs a Python that ``nobody`` can run with ``build``, ``installer``, ``setuptools``
and ``wheel`` (Debian: python3-build python3-installer python3-wheel).
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
NOBODY = 65534
SYSTEM_PYTHON = Path("/usr/bin/python3")


def _python_ready() -> bool:
    if not SYSTEM_PYTHON.exists():
        return False
    probe = subprocess.run([str(SYSTEM_PYTHON), "-c", "import build, installer, setuptools, wheel"],
                           capture_output=True, check=False)
    return probe.returncode == 0


pytestmark = [
    pytest.mark.pacman, pytest.mark.slow,
    pytest.mark.skipif(shutil.which("makepkg") is None or shutil.which("bsdtar") is None
                       or shutil.which("fakeroot") is None, reason="makepkg tools missing"),
    pytest.mark.skipif(not _python_ready(), reason="python3-build/installer/wheel missing"),
    pytest.mark.skipif(os.geteuid() != 0, reason="runs makepkg as nobody through setpriv"),
]


@pytest.fixture
def tree() -> Iterator[Path]:
    """The committed tree (git archive HEAD) in a directory ``nobody`` owns."""
    base = Path(tempfile.mkdtemp(prefix="anna-pkg-"))
    archive = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", "HEAD"],
                             capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(base / "src", filter="data")
    bin_dir = base / "bin"
    bin_dir.mkdir()
    # Arch's `python` is Python 3. Two Debian differences are bridged here, not in the
    # PKGBUILD: Debian 12's setuptools is 66 where pyproject asks for 68 (skip only build's
    # version check), and Debian's default install scheme is /usr/local where Arch's is /usr.
    shim = bin_dir / "python"
    shim.write_text(f"""#!/bin/sh
if [ "$1" = "-m" ] && [ "$2" = "build" ]; then shift 2; exec {SYSTEM_PYTHON} -m build -x "$@"; fi
if [ "$1" = "-m" ] && [ "$2" = "installer" ]; then
  shift 2; DEB_PYTHON_INSTALL_LAYOUT=deb_system exec {SYSTEM_PYTHON} -m installer "$@"
fi
exec {SYSTEM_PYTHON} "$@"
""")
    shim.chmod(0o755)
    for path in [base, *base.rglob("*")]:
        os.chown(path, NOBODY, NOBODY, follow_symlinks=False)
    try:
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_makepkg_builds_the_package_with_units_sysusers_tmpfiles(tree: Path) -> None:
    env = {"PATH": f"{tree / 'bin'}:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": str(tree),
           "PKGDEST": str(tree / "out"), "SRCDEST": str(tree), "BUILDDIR": str(tree / "build"),
           "PACMAN": "true", "LC_ALL": "C.UTF-8"}
    (tree / "out").mkdir()
    os.chown(tree / "out", NOBODY, NOBODY)
    argv = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
            "makepkg", "--nodeps", "--nocheck", "--noconfirm", "--force"]
    proc = subprocess.run(argv, cwd=tree / "src" / "packaging", env=env, capture_output=True,
                          text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    built = sorted((tree / "out").glob("anna-*.pkg.tar.*"))
    assert len(built) == 1, list((tree / "out").iterdir())
    listing = subprocess.run(["bsdtar", "-tf", str(built[0])], capture_output=True, text=True,
                             check=True).stdout.splitlines()
    for wanted in ("usr/bin/annactl", "usr/bin/annad", "usr/lib/systemd/system/annad.service",
                   "usr/lib/sysusers.d/anna.conf", "usr/lib/tmpfiles.d/anna.conf",
                   "etc/anna/annad.toml", "usr/share/doc/anna/usage.md"):
        assert wanted in listing, wanted
    assert any(p.endswith("annactl/interactive/tui/anna.tcss") for p in listing)
    assert any(p.endswith("annactl/planning/prompts/") or "/annactl/planning/prompts/" in p for p in listing)
    info = subprocess.run(["bsdtar", "-xOf", str(built[0]), ".PKGINFO"], capture_output=True,
                          text=True, check=True).stdout
    assert "depend = python-textual" in info and "backup = etc/anna/annad.toml" in info
