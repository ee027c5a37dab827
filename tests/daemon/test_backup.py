"""Snapshots, restores and snapshot targets on real files in tmp_path (no daemon needed)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from annad.backups.backup import BackupRefused, BlobStore, Budget, snapshot
from annad.backups.restore import restore_target
from annad.backups.safefs import UnsafePath
from annad.backups.targets import snapshot_targets


def _store(tmp_path: Path) -> BlobStore:
    return BlobStore(tmp_path / "blobs")


def test_file_roundtrip_with_mode_and_mtime(tmp_path: Path) -> None:
    target = tmp_path / "conf" / "app.conf"
    target.parent.mkdir()
    target.write_bytes(b"a\x00b\n")
    target.chmod(0o4751)  # setuid survives: mode is set after owner
    os.utime(target, ns=(5, 1_234_567_890_123))
    saved = snapshot(str(target), _store(tmp_path), Budget(1 << 20, 100), tree=False)
    target.write_bytes(b"changed")
    target.chmod(0o600)
    assert restore_target(saved[0], _store(tmp_path)) == "restore"
    assert target.read_bytes() == b"a\x00b\n"
    assert target.stat().st_mode & 0o7777 == 0o4751
    assert target.stat().st_mtime_ns == 1_234_567_890_123


def test_absent_path_is_deleted_again_from_its_topmost_new_directory(tmp_path: Path) -> None:
    deep = tmp_path / "a" / "b" / "c.txt"
    saved = snapshot(str(deep), _store(tmp_path), Budget(1 << 20, 100), tree=False)
    assert saved[0].path == str(tmp_path / "a") and saved[0].entries[0].kind == "absent"
    deep.parent.mkdir(parents=True)
    deep.write_text("new")
    assert restore_target(saved[0], _store(tmp_path)) == "delete"
    assert not (tmp_path / "a").exists()


def test_symlinked_dotfile_saves_the_real_file(tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "bashrc"
    real.parent.mkdir()
    real.write_text("real\n")
    link = tmp_path / ".bashrc"
    link.symlink_to(real)
    saved = snapshot(str(link), _store(tmp_path), Budget(1 << 20, 100), tree=False)
    assert [s.entries[0].kind for s in saved] == ["symlink", "file"]
    real.write_text("overwritten through the link\n")
    for target in reversed(saved):
        restore_target(target, _store(tmp_path))
    assert real.read_text() == "real\n" and link.is_symlink()


def test_restore_refuses_a_directory_swapped_for_a_symlink(tmp_path: Path) -> None:
    """Between snapshot and restore the owner makes ~/d a link to another place: refused."""
    home_dir = tmp_path / "d"
    home_dir.mkdir()
    (home_dir / "passwd").write_text("mine\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "passwd").write_text("precious\n")
    saved = snapshot(str(home_dir / "passwd"), _store(tmp_path), Budget(1 << 20, 100),
                     tree=False)
    (home_dir / "passwd").unlink()
    home_dir.rmdir()
    home_dir.symlink_to(elsewhere)
    with pytest.raises(UnsafePath):
        restore_target(saved[0], _store(tmp_path))
    assert (elsewhere / "passwd").read_text() == "precious\n"


def test_restore_outside_the_allowed_roots_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "x"
    saved = snapshot(str(target), _store(tmp_path), Budget(1 << 20, 100), tree=False)
    target.write_text("made by a system step")
    with pytest.raises(OSError, match="outside"):
        restore_target(saved[0], _store(tmp_path), allowed=(str(tmp_path / "home"),))
    assert target.exists()


def test_budget_refuses_instead_of_running_without_backup(tmp_path: Path) -> None:
    big = tmp_path / "big"
    big.mkdir()
    for i in range(5):
        (big / f"f{i}").write_bytes(b"x" * 1000)
    with pytest.raises(BackupRefused, match="backup limit"):
        snapshot(str(big), _store(tmp_path), Budget(3000, 100), tree=True)
    with pytest.raises(BackupRefused, match="too many files"):
        snapshot(str(big), _store(tmp_path), Budget(1 << 20, 3), tree=True)


def test_corrupt_blob_is_not_restored(tmp_path: Path) -> None:
    target = tmp_path / "f"
    target.write_text("good\n")
    saved = snapshot(str(target), _store(tmp_path), Budget(1 << 20, 10), tree=False)
    blob = tmp_path / "blobs" / (saved[0].entries[0].sha256 or "")
    blob.write_text("evil\n")
    target.write_text("changed\n")
    with pytest.raises(OSError, match="corrupt"):
        restore_target(saved[0], _store(tmp_path))
    assert target.read_text() == "changed\n"


def test_targets_from_commands(tmp_path: Path) -> None:
    home = str(tmp_path / "home")
    (tmp_path / "home" / "Pictures").mkdir(parents=True)

    def paths(command: str, cwd: str | None = home) -> list[tuple[str, bool]]:
        found, _ = snapshot_targets(command, home=home, cwd=cwd)
        return [(t.path.replace(home, "~"), t.tree) for t in found]

    assert paths("echo x > ~/.config/a.conf") == [("~/.config/a.conf", False)]
    assert paths("sed -i s/a/b/ $HOME/x.ini && rm -r ~/old") == [("~/x.ini", False),
                                                                  ("~/old", True)]
    assert paths("cp /tmp/w.png ~/Pictures/") == [("~/Pictures/w.png", False)]
    assert paths("cd ~/sub && echo x > rel.txt") == [("~/sub/rel.txt", False)]
    assert paths("true") == []
    found, notes = snapshot_targets("echo 1 > /proc/sys/vm/swappiness", home=home, cwd="/")
    assert found == [] and "kernel or device" in notes[0]
    for command in ('echo x > "$f"', "echo x > $(mktemp)", "cp a b $DEST"):
        with pytest.raises(BackupRefused):
            snapshot_targets(command, home=home, cwd=home)
    with pytest.raises(BackupRefused):
        snapshot_targets("echo x > rel.txt", home=home, cwd=None)
