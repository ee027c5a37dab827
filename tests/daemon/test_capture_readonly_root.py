"""Issue 36.9: a read-only ``/`` with a writable ``/home`` (an immutable or A/B system)
still previews and captures home writes: the read-only root is bound read-only, and the
writable mounts below it get their overlays (before, binding ``/`` skipped every mount
below it, so every preview of a home write failed)."""

from __future__ import annotations

from annad.capture.layers import mount_plan

_LINE = "{id} 1 8:{id} / {point} {opts} shared:{id} - {fs} /dev/sda{id} {opts}"


def _mountinfo(*mounts: tuple[str, str, str]) -> str:
    return "\n".join(_LINE.format(id=i + 20, point=point, opts=opts, fs=fs)
                     for i, (point, opts, fs) in enumerate(mounts))


def test_writable_mounts_below_a_read_only_root_are_overlaid() -> None:
    plan, layers = mount_plan(_mountinfo(("/", "ro,relatime", "ext4"),
                                         ("/home", "rw,relatime", "ext4"),
                                         ("/var", "rw,relatime", "btrfs"),
                                         ("/proc", "rw,nosuid", "proc")), "/var/lib/anna")
    assert plan[0] == ["bind", "/"]
    assert sorted(layers.values()) == ["/home", "/var"]
    assert ["overlay", "/home", next(k for k, v in layers.items() if v == "/home")] in plan
    assert ["bind", "/proc"] in plan  # virtual trees stay bound, as before


def test_mounts_below_a_virtual_tree_stay_covered_by_it() -> None:
    plan, layers = mount_plan(_mountinfo(("/", "rw", "ext4"), ("/sys", "rw", "sysfs"),
                                         ("/sys/fs/cgroup", "rw", "cgroup2")), "/x")
    assert list(layers.values()) == ["/"]
    assert not any(op[1] == "/sys/fs/cgroup" for op in plan)


def test_a_read_only_mount_below_a_writable_root_is_bound_read_only() -> None:
    plan, layers = mount_plan(_mountinfo(("/", "rw", "ext4"), ("/boot", "ro", "vfat"),
                                         ("/boot/efi", "rw", "vfat")), "/x")
    assert list(layers.values()) == ["/", "/boot/efi"]
    assert plan.index(["bind", "/boot"]) < next(i for i, op in enumerate(plan)
                                                if op[1] == "/boot/efi")
