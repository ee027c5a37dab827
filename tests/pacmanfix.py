"""Real pacman on a scratch root, for every engineer's tests.

Debian's ``pacman-package-manager`` (pacman, makepkg, repo-add) runs here against a
root that lives in a temporary directory; nothing touches the machine's own
``/var/lib/pacman`` or ``/etc/pacman.conf``: every call passes ``--root``,
``--dbpath``, ``--cachedir``, ``--config``, ``--logfile``, ``--gpgdir`` and
``--hookdir`` (see ``/work/shared/real-pacman.md``).

Helpers:

- :func:`build_package` builds a tiny real package with makepkg (``arch=any``, files under
  ``usr/share``). makepkg refuses to run as root, so as root it runs as ``nobody``
  through ``setpriv`` in a directory that user owns.
- :class:`PacmanRoot` is a scratch root with a private ``pacman.conf``; ``install``
  runs the real ``pacman -U``.
- :class:`LocalRepo` is a repository made with ``repo-add``, so ``-Sy``, ``-S`` and
  ``-S --print`` work against a ``file://`` server.
- :func:`write_synthetic_db` writes a local database of N packages directly
  (``local/NAME-VER-REL/desc``), fast enough for benchmarks; real ``pacman -Q`` reads it.

Fixtures (import the ones you use into your test module or conftest, e.g.
``from tests.pacmanfix import pacman_root, hello_package  # noqa: F401``):
``pacman_root``, ``package_builder``, ``hello_package``, ``local_repo``, ``synced_root``.
They skip when pacman is missing (CI installs it) or, for installs, when not root.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

TOOLS = ("pacman", "makepkg", "repo-add", "bsdtar", "fakeroot")
"""Programs the helpers need (Debian: pacman-package-manager, makepkg, libarchive-tools, fakeroot)."""
MISSING_TOOLS = tuple(t for t in TOOLS if shutil.which(t) is None)
"""Which of :data:`TOOLS` are not on PATH."""
HAVE_PACMAN = not MISSING_TOOLS
"""Whether real pacman tests can run here."""
IS_ROOT = os.geteuid() == 0
"""pacman refuses ``-U``/``-S``/``-R`` unless run as root, even on a scratch root."""
NOBODY = 65534
"""uid and gid makepkg runs as when the tests run as root."""
REPO_NAME = "annatest"
"""Name of the repository :class:`LocalRepo` makes by default."""

requires_pacman = pytest.mark.skipif(
    not HAVE_PACMAN, reason=f"pacman tools missing: {', '.join(MISSING_TOOLS)}")
"""Skip marker for tests that run pacman or makepkg (combine with ``pytest.mark.pacman``)."""
requires_root = pytest.mark.skipif(not IS_ROOT, reason="pacman -U/-S/-R need root")
"""Skip marker for tests that install or remove packages."""

_NAME_RE = re.compile(r"^[a-z0-9@_+][a-z0-9@._+-]*$")
_VERSION_RE = re.compile(r"^[A-Za-z0-9._+]+$")


@dataclass(frozen=True)
class PkgSpec:
    """What to build: a tiny ``arch=any`` package whose files all live under ``usr/share``."""

    name: str = "annatest-hello"
    """pkgname."""
    version: str = "1.0"
    """pkgver."""
    rel: str = "1"
    """pkgrel."""
    depends: tuple[str, ...] = ()
    """Dependencies (names; resolved by pacman at install time)."""
    files: tuple[tuple[str, str], ...] = ()
    """(path relative to ``usr/share``, content); default: ``NAME/NAME.txt``."""
    description: str = "Anna test package"
    """pkgdesc."""

    def __post_init__(self) -> None:
        """Refuse names that would not be valid pacman names (they go into a PKGBUILD)."""
        if not _NAME_RE.match(self.name):
            raise ValueError(f"bad package name {self.name!r}")
        for part in (self.version, self.rel):
            if not _VERSION_RE.match(part):
                raise ValueError(f"bad version part {part!r}")
        for dep in self.depends:
            if not _NAME_RE.match(dep):
                raise ValueError(f"bad dependency {dep!r}")
        for rel_path, _ in self.files:
            if rel_path.startswith("/") or ".." in Path(rel_path).parts:
                raise ValueError(f"file must stay under usr/share: {rel_path!r}")

    @property
    def full_version(self) -> str:
        """``VER-REL`` as pacman prints it."""
        return f"{self.version}-{self.rel}"

    @property
    def filename(self) -> str:
        """The file makepkg writes with Debian's makepkg.conf."""
        return f"{self.name}-{self.full_version}-any.pkg.tar.gz"

    def payload(self) -> tuple[tuple[str, str], ...]:
        """The files to package (the default one when none were given)."""
        return self.files or ((f"{self.name}/{self.name}.txt", f"{self.name} {self.full_version}\n"),)


def _pkgbuild(spec: PkgSpec) -> str:
    # Only validated names reach this text; the payload is copied from files, never quoted in.
    depends = " ".join(f"'{d}'" for d in spec.depends)
    return (
        f"pkgname={spec.name}\npkgver={spec.version}\npkgrel={spec.rel}\n"
        f"pkgdesc='{spec.description.replace(chr(39), '')}'\n"
        f"arch=('any')\nlicense=('MIT')\ndepends=({depends})\n"
        'package() {\n  cp -a "$startdir/payload/." "$pkgdir/"\n}\n'
    )


def build_package(spec: PkgSpec, dest: Path) -> Path:
    """Build ``spec`` with the real makepkg and return the package file, copied into ``dest``.

    As root, makepkg runs as ``nobody`` (it refuses root) in a fresh directory under the
    system temporary directory that ``nobody`` owns; ``PACMAN=true`` keeps its BUILDINFO
    step from opening the machine's own pacman database.
    """
    work = Path(tempfile.mkdtemp(prefix="anna-makepkg-"))
    try:
        for rel_path, content in spec.payload():
            target = work / "payload" / "usr" / "share" / rel_path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content, encoding="utf-8")
        (work / "PKGBUILD").write_text(_pkgbuild(spec), encoding="utf-8")
        env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": str(work), "PKGDEST": str(work),
               "SRCDEST": str(work), "BUILDDIR": str(work / "build"), "PACMAN": "true",
               "LC_ALL": "C.UTF-8"}
        argv = ["makepkg", "--nodeps", "--skipinteg", "--noconfirm", "--force"]
        if IS_ROOT:
            for path in [work, *work.rglob("*")]:
                os.chown(path, NOBODY, NOBODY)
            argv = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *argv]
        proc = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True,
                              timeout=120, check=False)
        built = work / spec.filename
        if proc.returncode != 0 or not built.is_file():
            raise RuntimeError(f"makepkg failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
        dest.mkdir(parents=True, exist_ok=True)
        return Path(shutil.copy2(built, dest / spec.filename))
    finally:
        shutil.rmtree(work, ignore_errors=True)


@dataclass
class LocalRepo:
    """A pacman repository in a directory, made with the real ``repo-add``."""

    path: Path
    """Directory holding the packages and ``NAME.db.tar.gz``."""
    name: str = REPO_NAME
    """Repository name (the ``[section]`` in pacman.conf)."""

    @classmethod
    def create(cls, path: Path, packages: Iterable[Path], name: str = REPO_NAME) -> LocalRepo:
        """Copy ``packages`` into ``path`` and index them."""
        repo = cls(path=path, name=name)
        path.mkdir(parents=True, exist_ok=True)
        repo.add(packages)
        return repo

    @property
    def db(self) -> Path:
        """The database file repo-add maintains."""
        return self.path / f"{self.name}.db.tar.gz"

    def add(self, packages: Iterable[Path]) -> None:
        """Copy more packages in and re-index (a newer version replaces the older entry)."""
        files = []
        for pkg in packages:
            target = self.path / pkg.name
            if pkg.resolve() != target.resolve():
                shutil.copy2(pkg, target)
            files.append(str(target))
        proc = subprocess.run(["repo-add", "--quiet", str(self.db), *files], capture_output=True,
                              text=True, timeout=60, check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"repo-add failed: {proc.stdout}{proc.stderr}")


@dataclass
class PacmanRoot:
    """A scratch pacman root: its own database, cache, log, keyring dir and pacman.conf."""

    root: Path
    """The installation root (``--root``)."""
    dbpath: Path
    """``ROOT/var/lib/pacman`` (``--dbpath``); the local database is ``dbpath/local``."""
    cachedir: Path
    """``ROOT/var/cache/pacman/pkg`` (``--cachedir``)."""
    config: Path
    """The private pacman.conf (``--config``), outside the root."""
    logfile: Path
    """``--logfile``."""
    gpgdir: Path
    """``--gpgdir`` (unused: signatures are off, but pacman must not look at /etc)."""
    hookdir: Path
    """``--hookdir`` (empty: no hooks from the machine run)."""
    repos: list[LocalRepo] = field(default_factory=list)
    """Repositories listed in :attr:`config`."""

    @classmethod
    def create(cls, base: Path) -> PacmanRoot:
        """Make the directories under ``base`` (``base/root`` is the root) and write the config."""
        root = base / "root"
        made = cls(root=root, dbpath=root / "var/lib/pacman", cachedir=root / "var/cache/pacman/pkg",
                   config=base / "pacman.conf", logfile=base / "pacman.log",
                   gpgdir=base / "gnupg", hookdir=base / "hooks")
        for path in (made.dbpath, made.cachedir, made.gpgdir, made.hookdir):
            path.mkdir(parents=True, exist_ok=True)
        made.write_config()
        return made

    @property
    def local(self) -> Path:
        """The local database directory pacman keeps ``NAME-VER-REL/desc`` in."""
        return self.dbpath / "local"

    def write_config(self) -> None:
        """(Re)write pacman.conf: no signatures, architecture auto, one section per repo."""
        lines = ["[options]", "Architecture = auto", "SigLevel = Never",
                 "LocalFileSigLevel = Never", ""]
        for repo in self.repos:
            lines += [f"[{repo.name}]", f"Server = file://{repo.path}", ""]
        self.config.write_text("\n".join(lines), encoding="utf-8")

    def add_repo(self, repo: LocalRepo) -> None:
        """List ``repo`` in the config (call :meth:`sync` to download its database)."""
        self.repos.append(repo)
        self.write_config()

    def args(self) -> list[str]:
        """The flags that keep pacman inside this root; put them before the operation's own."""
        return ["--root", str(self.root), "--dbpath", str(self.dbpath), "--cachedir",
                str(self.cachedir), "--config", str(self.config), "--logfile", str(self.logfile),
                "--gpgdir", str(self.gpgdir), "--hookdir", str(self.hookdir)]

    def command(self, *args: str) -> list[str]:
        """The full argv of ``pacman ARGS`` against this root."""
        return ["pacman", *self.args(), *args]

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """Run ``pacman ARGS`` against this root; raise with pacman's output when it fails."""
        proc = subprocess.run(self.command(*args), capture_output=True, text=True, timeout=120,
                              check=False, stdin=subprocess.DEVNULL)
        if check and proc.returncode != 0:
            raise RuntimeError(f"pacman {' '.join(args)} failed ({proc.returncode}):\n"
                               f"{proc.stdout}{proc.stderr}")
        return proc

    def install(self, *packages: Path, asdeps: bool = False) -> None:
        """``pacman -U --noconfirm`` (``--asdeps`` marks them installed as dependencies)."""
        self.run("-U", "--noconfirm", *(["--asdeps"] if asdeps else []), *map(str, packages))

    def sync(self) -> None:
        """``pacman -Sy``: download the listed repositories' databases."""
        self.run("-Sy")

    def query(self) -> dict[str, str]:
        """``pacman -Q``: installed name → version."""
        proc = self.run("-Q", check=False)
        if proc.returncode != 0 and not proc.stdout:
            return {}  # pacman -Q exits 1 on an empty database
        return dict(line.split(" ", 1) for line in proc.stdout.splitlines() if " " in line)


@dataclass(frozen=True)
class SyntheticPackage:
    """One entry :func:`write_synthetic_db` wrote."""

    name: str
    """Package name."""
    version: str
    """``VER-REL``."""
    explicit: bool
    """Whether %REASON% says explicitly installed."""


def _desc(pkg: SyntheticPackage, index: int, reason_field: bool) -> str:
    # Shaped like a real desc (pacman 6 field order and typical sizes), so reading it costs
    # what reading a real one does.
    deps = "".join(f"synthetic-lib{(index + k) % 97}\n" for k in range(1, 4))
    reason = "" if pkg.explicit and not reason_field else f"%REASON%\n{0 if pkg.explicit else 1}\n\n"
    return (
        f"%NAME%\n{pkg.name}\n\n%VERSION%\n{pkg.version}\n\n%BASE%\n{pkg.name}\n\n"
        f"%DESC%\nSynthetic package number {index} for Anna's telemetry tests and benchmarks\n\n"
        f"%URL%\nhttps://example.invalid/{pkg.name}\n\n%ARCH%\nx86_64\n\n"
        f"%BUILDDATE%\n{1700000000 + index}\n\n%INSTALLDATE%\n{1700100000 + index}\n\n"
        f"%PACKAGER%\nAnna Tests <tests@example.invalid>\n\n%SIZE%\n{4096 * (index % 500 + 1)}\n\n"
        f"{reason}%LICENSE%\nMIT\n\n%VALIDATION%\nsha256\n\n%DEPENDS%\n{deps}\n"
    )


def write_synthetic_db(dbpath: Path, count: int, *, explicit_every: int = 4) -> list[SyntheticPackage]:
    """Write a local database of ``count`` packages under ``dbpath/local`` and return them.

    Every ``explicit_every``-th package is explicit; explicit ones alternate between no
    %REASON% field and ``%REASON% 0`` (both mean explicit). Deterministic. Real
    ``pacman -Q --dbpath DBPATH`` lists exactly these.
    """
    local = dbpath / "local"
    local.mkdir(parents=True, exist_ok=True)
    (local / "ALPM_DB_VERSION").write_text("9\n", encoding="utf-8")
    made = []
    for i in range(count):
        pkg = SyntheticPackage(name=f"synthetic-pkg{i:05d}", version=f"{i % 7}.{i % 13}.{i}-{1 + i % 3}",
                               explicit=i % explicit_every == 0)
        entry = local / f"{pkg.name}-{pkg.version}"
        entry.mkdir()
        (entry / "desc").write_text(_desc(pkg, i, reason_field=i % 2 == 0), encoding="utf-8")
        (entry / "files").write_text(f"%FILES%\nusr/\nusr/share/{pkg.name}\n\n", encoding="utf-8")
        made.append(pkg)
    return made


# ---- fixtures -----------------------------------------------------------------------------


def _need_pacman() -> None:
    if not HAVE_PACMAN:
        pytest.skip(f"pacman tools missing: {', '.join(MISSING_TOOLS)}")


@pytest.fixture
def pacman_root(tmp_path: Path) -> PacmanRoot:
    """An empty scratch root under ``tmp_path/pacman``."""
    _need_pacman()
    return PacmanRoot.create(tmp_path / "pacman")


@pytest.fixture(scope="session")
def package_builder(tmp_path_factory: pytest.TempPathFactory) -> Callable[[PkgSpec], Path]:
    """``build(spec) -> package file``; each spec is built once per test session."""
    _need_pacman()
    store = tmp_path_factory.mktemp("packages")
    built: dict[PkgSpec, Path] = {}

    def build(spec: PkgSpec) -> Path:
        if spec not in built:
            built[spec] = build_package(spec, store / f"{spec.name}-{spec.full_version}")
        return built[spec]

    return build


@pytest.fixture(scope="session")
def hello_package(package_builder: Callable[[PkgSpec], Path]) -> Path:
    """The default tiny package, ``annatest-hello 1.0-1`` (one file under usr/share)."""
    return package_builder(PkgSpec())


@pytest.fixture
def local_repo(tmp_path: Path, hello_package: Path) -> LocalRepo:
    """A repository ``annatest`` holding :func:`hello_package`."""
    return LocalRepo.create(tmp_path / "repo", [hello_package])


@pytest.fixture
def synced_root(pacman_root: PacmanRoot, local_repo: LocalRepo) -> Iterator[PacmanRoot]:
    """A scratch root with :func:`local_repo` configured and synced (``-S NAME`` works)."""
    if not IS_ROOT:
        pytest.skip("pacman -Sy needs root")
    pacman_root.add_repo(local_repo)
    pacman_root.sync()
    yield pacman_root

