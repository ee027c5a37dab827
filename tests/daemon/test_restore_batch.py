"""A tree restored in one batch (files staged, one flush, then renamed) is as exact as one
restored file by file, refuses what the per-file restore refuses, replaces nothing when a
copy fails; a tree that was not there before goes into the trash at once."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from annad.backups.backup import BlobStore, Budget, snapshot
from annad.backups.leftovers import RESTORE_MARK
from annad.backups.restore import BATCH, restore_target
from annad.backups.safefs import UnsafePath
from annad.backups.trash import Trash
from tests.waiting import wait_until


def _store(tmp_path: Path) -> BlobStore:
    return BlobStore(tmp_path / "blobs")


def _make_tree(top: Path) -> None:
    """A tree of more than BATCH entries: files of several modes and times, a link, a
    nested directory with its own mode."""
    for d in range(3):
        sub = top / f"d{d}"
        sub.mkdir(parents=True)
        for f in range(BATCH):
            path = sub / f"f{f}"
            path.write_bytes(f"{d}.{f}\n".encode() * (f + 1))
            path.chmod(0o640 if f % 2 else 0o4755)
            os.utime(path, ns=(7, 1_000_000_000 * (d + 1) + f))
    (top / "d1" / "link").symlink_to("f3")
    (top / "d2" / "deep").mkdir()
    (top / "d2" / "deep" / "x").write_text("deep\n")
    (top / "d2").chmod(0o750)


def _listing(top: Path) -> dict[str, tuple[object, ...]]:
    out: dict[str, tuple[object, ...]] = {}
    for root, dirs, files in os.walk(top):
        for name in dirs + files:
            path = Path(root) / name
            info = path.lstat()
            content = os.readlink(path) if path.is_symlink() else (
                path.read_bytes() if path.is_file() else None)
            mtime = None if path.is_dir() else info.st_mtime_ns
            out[str(path.relative_to(top))] = (info.st_mode, info.st_uid, mtime, content)
    return out


def test_a_removed_tree_comes_back_exact(tmp_path: Path) -> None:
    top = tmp_path / "old"
    _make_tree(top)
    before = _listing(top)
    assert len(before) > BATCH * 3  # the batch path
    saved = snapshot(str(top), _store(tmp_path), Budget(1 << 24, 1000), tree=True)
    (top / "d0" / "f0").write_text("changed since\n")
    (top / "d1" / "new").write_text("not in the snapshot\n")
    (top / "d2" / "deep" / "x").unlink()
    assert restore_target(saved[0], _store(tmp_path)) == "restore"
    assert _listing(top) == before
    assert not [p for p in top.rglob("*") if RESTORE_MARK in p.name]


def test_a_directory_swapped_for_a_link_is_never_followed(tmp_path: Path) -> None:
    """``d1`` made a link to another place since: the batch replaces the link with the saved
    directory and writes nothing through it."""
    top = tmp_path / "old"
    _make_tree(top)
    before = _listing(top)
    saved = snapshot(str(top), _store(tmp_path), Budget(1 << 24, 1000), tree=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "f0").write_text("precious\n")
    for path in sorted((top / "d1").iterdir()):
        path.unlink()
    (top / "d1").rmdir()
    (top / "d1").symlink_to(elsewhere)
    assert restore_target(saved[0], _store(tmp_path)) == "restore"
    assert sorted(p.name for p in elsewhere.iterdir()) == ["f0"]
    assert (elsewhere / "f0").read_text() == "precious\n"
    assert not (top / "d1").is_symlink() and _listing(top) == before


def test_a_parent_swapped_for_a_link_is_refused_in_a_batch(tmp_path: Path) -> None:
    """A directory above the tree made a link since: refused before anything is written."""
    parent = tmp_path / "p"
    top = parent / "old"
    _make_tree(top)
    saved = snapshot(str(top), _store(tmp_path), Budget(1 << 24, 1000), tree=True)
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "old").mkdir(parents=True)
    parent.rename(tmp_path / "moved")
    parent.symlink_to(elsewhere)
    with pytest.raises(UnsafePath):
        restore_target(saved[0], _store(tmp_path))
    assert [p.name for p in elsewhere.rglob("*")] == ["old"]


def test_a_corrupt_blob_replaces_nothing_of_the_batch(tmp_path: Path) -> None:
    top = tmp_path / "old"
    _make_tree(top)
    saved = snapshot(str(top), _store(tmp_path), Budget(1 << 24, 1000), tree=True)
    last = next(e for e in reversed(saved[0].entries) if e.kind == "file")
    (tmp_path / "blobs" / (last.sha256 or "")).write_text("evil\n")
    for path in sorted((top / "d0").iterdir()):
        path.write_text("changed since\n")
    with pytest.raises(OSError, match="corrupt"):
        restore_target(saved[0], _store(tmp_path))
    assert {p.read_text() for p in (top / "d0").iterdir()} == {"changed since\n"}
    assert not [p for p in top.rglob("*") if RESTORE_MARK in p.name]


def test_a_tree_that_was_not_there_goes_into_the_trash(tmp_path: Path) -> None:
    made = tmp_path / "home" / "made"
    saved = snapshot(str(made), _store(tmp_path), Budget(1 << 20, 100), tree=False)
    _make_tree(made)
    trash = Trash(tmp_path / "trash")
    assert restore_target(saved[0], _store(tmp_path), trash=trash) == "delete"
    assert not made.exists()
    assert sorted(p.name for p in (tmp_path / "home").iterdir()) == []
    wait_until(lambda: not any((tmp_path / "trash").iterdir()), "the trash to empty itself")


def test_what_a_daemon_that_died_left_in_the_trash_goes_when_the_next_one_starts(
        tmp_path: Path) -> None:
    """A kill -9 while an undo's made tree waited in the trash leaves it there; the next
    daemon's trash empties it without waiting for a step to throw something (the suite saw
    a recovered undo's tree stay for good)."""
    left = tmp_path / "trash" / "taken-1-0-made"
    _make_tree(left)
    trash = Trash(tmp_path / "trash")
    assert any(left.iterdir())
    trash.resume()
    wait_until(lambda: not any((tmp_path / "trash").iterdir()), "the trash to empty itself")
    Trash(tmp_path / "nothing").resume()  # no trash yet: nothing to do, nothing made
    assert not (tmp_path / "nothing").exists()
