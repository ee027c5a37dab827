"""Disks are filesystems, not mounts: containers' bind mounts and image layers are not disks.

The mountinfo lines below are copied from real machines: an nspawn container (the one
tests/systemd/ boots), an Arch btrfs layout, a docker host, a bind-mounted data directory.
"""

from __future__ import annotations

from pathlib import Path

from annad.telemetry import mounts
from annad.telemetry.system import _wanted, collect_disks

NSPAWN = """\
120 100 0:39 / / rw,relatime shared:1 - overlay overlay rw,lowerdir=/var/cache/anna-ci/base,upperdir=/tmp/w/upper/root,workdir=/tmp/w/upper/work
121 120 0:41 / /tmp rw,nosuid,nodev shared:2 - tmpfs tmpfs rw,size=2468412k,nr_inodes=409600
127 126 0:45 /host /run/host ro,nosuid,nodev,noexec shared:6 - tmpfs tmpfs rw,size=4936820k
128 127 254:0 /usr/lib/os-release /run/host/os-release ro,nosuid,nodev,noexec,relatime shared:7 - ext4 /dev/vda rw,discard
129 127 254:0 /run/systemd/nspawn/propagate/anna-dev-11799 /run/host/incoming ro,relatime master:9 - ext4 /dev/vda rw,discard
131 126 254:0 /run/systemd/nspawn/propagate/anna-dev-11799 /run/host/incoming rw,relatime shared:9 - ext4 /dev/vda rw,discard
"""
BTRFS = """\
26 1 0:24 /@ / rw,relatime shared:1 - btrfs /dev/nvme0n1p2 rw,ssd,space_cache=v2,subvolid=256,subvol=/@
27 26 0:24 /@home /home rw,relatime shared:2 - btrfs /dev/nvme0n1p2 rw,ssd,space_cache=v2,subvolid=257,subvol=/@home
28 26 0:24 /@log /var/log rw,relatime shared:3 - btrfs /dev/nvme0n1p2 rw,ssd,subvolid=258,subvol=/@log
29 26 259:1 / /boot rw,relatime shared:4 - vfat /dev/nvme0n1p1 rw,fmask=0022,dmask=0022
30 26 0:24 /@/srv/www /var/www rw,relatime shared:5 - btrfs /dev/nvme0n1p2 rw,ssd,subvolid=256,subvol=/@
"""
DOCKER_HOST = """\
22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
40 22 0:50 / /var/lib/docker/overlay2/4f1e/merged rw,relatime - overlay overlay rw,lowerdir=/l/A,upperdir=/u,workdir=/w
41 22 8:17 / /srv/data rw,relatime shared:7 - xfs /dev/sdb1 rw
42 22 8:17 /home /home rw,relatime shared:7 - xfs /dev/sdb1 rw
43 22 8:33 / /mnt/my\\040disk rw,relatime - ext4 /dev/sdc1 rw
44 22 0:60 / /mnt/nas rw,relatime - nfs4 nas:/export rw
bad line without a separator
"""


def _points(text: str) -> list[str]:
    return [m.mountpoint for m in mounts.disks(mounts.parse(text), _wanted)]


def test_a_containers_disk_is_its_root_not_the_hosts_bind_mounts() -> None:
    assert _points(NSPAWN) == ["/"]


def test_btrfs_subvolumes_are_one_filesystem_shown_at_its_shortest_mount() -> None:
    # / and /home are one btrfs pool (their usage is the same numbers); /var/www is a bind
    assert _points(BTRFS) == ["/", "/boot"]


def test_bind_mounts_image_layers_and_network_filesystems_are_not_disks() -> None:
    points = _points(DOCKER_HOST)
    assert points == ["/", "/mnt/my disk", "/srv/data"]


def test_collect_disks_reads_the_mountinfo_it_is_given(tmp_path: Path) -> None:
    info = tmp_path / "mountinfo"
    info.write_text("22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
                    "23 22 8:1 /var/tmp/x /srv/x rw - ext4 /dev/sda1 rw\n")
    disks = collect_disks(info)
    assert [(d.mountpoint, d.device, d.fstype) for d in disks] == [("/", "/dev/sda1", "ext4")]
    assert disks[0].total_bytes > 0
