"""A capless-root read never sees root's secrets, whatever path reaches them (review finding).

Uid 0 without capabilities still owns root's files. The risk engine judges a read by the
words of the command, and the words can reach a file without naming it: a relative path
from ``/``, ``..``, a symlink, a ``cd`` first. So the confinement covers the secrets
themselves (annad.confine.spec.root_secrets). The tests use a decoy secret in a temporary
directory (``masked``), never the machine's real ones.
"""

from __future__ import annotations

import os
import secrets
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from annad.confine.credentials import Identity
from annad.confine.runner import run_confined
from annad.confine.spec import ROOT_SECRET_DIRS, root_secrets

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="builds namespaces as root")
NOBODY = 65534
DECOY = "DECOY-ROOT-SECRET"


@pytest.fixture
def place() -> Iterator[tuple[Identity, Path, Path]]:
    """An owner (nobody, with a home) and a root-only decoy secret file and directory."""
    base = Path(f"/tmp/anna-secrets-{secrets.token_hex(4)}")
    home, vault = base / "home", base / "vault"
    home.mkdir(parents=True)
    base.chmod(0o755)
    os.chown(home, NOBODY, NOBODY)
    vault.mkdir(mode=0o755)
    secret = vault / "secret"
    secret.write_text(DECOY + "\n")
    secret.chmod(0o600)
    keys = base / "keys"
    keys.mkdir(mode=0o700)
    (keys / "id").write_text(DECOY + "\n")
    link = home / "link"
    link.symlink_to(secret)
    os.lchown(link, NOBODY, NOBODY)
    try:
        yield Identity(uid=NOBODY, gid=NOBODY, groups=(NOBODY,), home=str(home),
                       user="nobody"), secret, keys
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _spellings(secret: Path, keys: Path, home: str) -> list[str]:
    rel_from_root = str(secret).lstrip("/")
    up = os.path.relpath(secret, home)
    return [f"cat {secret}", f"cat {rel_from_root}", f"cd {secret.parent} && cat secret",
            f"cat {home}/link", f"cd {home} && cat {up}", f"cat {secret.parent}/s?cret",
            f"d={secret.parent}; cat $d/secret", f"cat {keys}/id", f"ls {keys}; cat {keys}/*"]


def test_the_decoy_is_readable_as_capless_root_without_the_mask(
        place: tuple[Identity, Path, Path]) -> None:
    # proves the test below can fail: capless root owns the decoy and reads it
    owner, secret, keys = place
    result = run_confined(f"cat {secret} {keys}/id", owner, root_read=True, timeout=30)
    assert result.error is None, result.error
    assert result.output.count(DECOY) == 2


def test_masked_secrets_are_unreadable_by_every_spelling(
        place: tuple[Identity, Path, Path]) -> None:
    owner, secret, keys = place
    for command in _spellings(secret, keys, owner.home):
        result = run_confined(command, owner, root_read=True, timeout=30, cwd="/",
                              masked=(str(secret), str(keys)))
        assert result.error is None, (command, result.error)
        assert DECOY not in result.output, command


def test_the_owners_own_reads_are_untouched(place: tuple[Identity, Path, Path]) -> None:
    owner, _, _ = place
    (Path(owner.home) / "notes").write_text("mine\n")
    result = run_confined("cat notes", owner, timeout=30, cwd=owner.home)
    assert result.output == "mine\n"


def test_root_secrets_lists_what_exists_of_the_secret_patterns() -> None:
    # names only: nothing is read
    found = root_secrets()
    for path in ("/etc/shadow", "/etc/gshadow", *ROOT_SECRET_DIRS):
        assert (path in found) == os.path.exists(path), path
    assert all(p.startswith("/") and not p.startswith("/home/") for p in found)
    assert not any(p.startswith("/root/") for p in found)  # /root is covered whole


def test_the_machines_shadow_file_cannot_be_opened_by_a_capless_root_read(
        place: tuple[Identity, Path, Path]) -> None:
    if not os.path.exists("/etc/shadow"):
        pytest.skip("no /etc/shadow here")
    owner, _, _ = place
    # wc -c prints a size, never content, should the mask ever fail
    result = run_confined("wc -c /etc/shadow; cd /etc && wc -c shadow", owner,
                          root_read=True, timeout=30, cwd="/")
    assert result.error is None, result.error
    assert result.output.count("Permission denied") == 2, result.output


def test_links_are_covered_at_their_target_and_dangling_links_are_skipped(
        place: tuple[Identity, Path, Path]) -> None:
    owner, secret, keys = place
    vault = secret.parent
    (vault / "to-secret.key").symlink_to(secret)
    (vault / "gone.key").symlink_to(vault / "nothing-here")
    found = root_secrets([f"{vault}/*.key", f"{keys}"])
    assert str(secret) in found and str(keys) in found
    assert not any("nothing-here" in p or p.endswith("gone.key") for p in found)
    # and the confinement builds with that list: the read runs, the secret stays covered
    result = run_confined(f"cat {vault}/to-secret.key; echo ran", owner, root_read=True,
                          timeout=30, masked=found)
    assert result.error is None and "ran" in result.output and DECOY not in result.output
