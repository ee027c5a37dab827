"""Daemon settings: command-line arguments, ``ANNAD_*`` variables, ``/etc/anna/annad.toml``.

Precedence, highest first: explicit arguments (``annad --socket ...``), ``ANNAD_*``
environment variables, the TOML file, defaults. The TOML file is
``/etc/anna/annad.toml`` unless ``ANNAD_CONFIG`` names another one, so tests never
read the machine's configuration. Settings are built once, in ``main()``.

Paths that are left unset are derived from the mode: as root the system paths
(``/run/anna/annad.sock``, ``/var/lib/anna``); otherwise a per-user daemon under
``$XDG_RUNTIME_DIR/anna`` and ``$XDG_STATE_HOME/anna/annad``.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from anna_common.errors import AnnaError, ErrorCode
from anna_common.protocol.models import GROUP, SYSTEM_SOCKET, SYSTEM_STATE_DIR, DaemonMode

DEFAULT_CONFIG = Path("/etc/anna/annad.toml")
"""The system configuration file (``ANNAD_CONFIG`` overrides it)."""
SOCKET_NAME = "annad.sock"
"""File name of the socket inside its directory."""


def config_file() -> Path:
    """The TOML file the settings read: ``$ANNAD_CONFIG`` or ``/etc/anna/annad.toml``."""
    override = os.environ.get("ANNAD_CONFIG")
    return Path(override) if override else DEFAULT_CONFIG


def user_state_base() -> Path:
    """``$XDG_STATE_HOME/anna`` (default ``~/.local/state/anna``), as the client computes it."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "anna"


def user_runtime_dir() -> Path:
    """Where a per-user daemon listens: ``$XDG_RUNTIME_DIR/anna``, else the user state dir."""
    base = os.environ.get("XDG_RUNTIME_DIR")
    return Path(base) / "anna" if base else user_state_base()


class DaemonSettings(BaseSettings):
    """Everything ``annad`` can be configured with."""

    model_config = SettingsConfigDict(
        env_prefix="ANNAD_", extra="forbid", use_attribute_docstrings=True,
        validate_default=True,
    )

    socket: Path | None = None
    """Socket path; default ``/run/anna/annad.sock`` (system) or ``$XDG_RUNTIME_DIR/anna/``."""
    state_dir: Path | None = None
    """Journal and backups; default ``/var/lib/anna`` (system) or ``~/.local/state/anna/annad``."""
    pacman_dbpath: Path = Path("/var/lib/pacman")
    """The pacman database telemetry reads."""
    user_mode: bool | None = None
    """Run as a per-user daemon (user-scope steps only). Default: on unless running as root."""
    idle_exit_s: float = Field(default=600.0, ge=0)
    """User mode: exit after this many seconds without requests or a running plan (0: never)."""
    step_timeout_s: float = Field(default=300.0, gt=0, le=24 * 3600)
    """Per-step timeout; the step's whole process group is killed when it runs over."""
    check_timeout_s: float = Field(default=30.0, gt=0, le=3600)
    """Timeout of each necessary check."""
    max_output: int = Field(default=64 * 1024, ge=1024, le=16 * 1024 * 1024)
    """Bytes of output kept per step (the tail)."""
    check_output: int = Field(default=16 * 1024, ge=256, le=1024 * 1024)
    """Bytes of output a check returns (the tail)."""
    backup_max_bytes: int = Field(default=256 * 1024 * 1024, ge=0)
    """Largest total a step's snapshot may take; a step needing more is refused, not run."""
    backup_max_files: int = Field(default=20_000, ge=1)
    """Most files a step's snapshot may take."""
    backup_keep_days: float = Field(default=30.0, ge=0)
    """Backups of plans that can no longer be rolled back are removed this many days after
    the plan finished (``annactl gc``; plans that can be rolled back are kept)."""
    backup_keep_max_bytes: int = Field(default=1024 * 1024 * 1024, ge=0)
    """While all backups take more than this, those of the oldest plans that can no longer
    be rolled back are removed too."""
    home_override: Path | None = None
    """Home for user-scope steps and assessments instead of the caller's passwd entry (tests)."""
    distro: str | None = None
    """Distribution family to judge plans for (``arch``), when os-release does not say."""
    group: str = GROUP
    """Members of this group (and root) may submit, execute and roll back."""
    telemetry_refresh_s: float = Field(default=15.0, gt=0)
    """Background telemetry refresh period."""
    stop_grace_s: float = Field(default=90.0, ge=0)
    """On SIGTERM, wait this long for a running plan to finish before cancelling it."""
    confine_python: str | None = None
    """Interpreter that runs the confinement helper of checks and INFO steps (default: the
    daemon's own). If it cannot build the confinement, those commands do not run."""
    capture_max_files: int = Field(default=20_000, ge=1, le=10_000_000)
    """Most entries (files, directories, links, deletions) a captured step may change; past
    it the step is refused (``OBSERVED_CHANGE_TOO_LARGE``), nothing of it lands."""
    capture_max_bytes: int = Field(default=1 << 30, ge=1)
    """Largest total apparent size of the files a captured step may write (a sparse file
    counts whole); past it the step is refused, nothing of it lands."""
    capture_max_depth: int = Field(default=64, ge=1, le=2048)
    """Deepest directory level below a mount point a captured step may write at."""
    capture_userns: bool = True
    """A per-user daemon (not root) captures its steps' writes in overlays in a user
    namespace of its own. False (or a kernel that forbids it): it does not, and its file
    steps are HIGH, "runs live; Anna cannot undo it"."""
    policy_file: Path = Path("/etc/anna/policy.toml")
    """The administrator's policy (docs/policy.md); a malformed one stops the daemon."""
    user_policy: bool = True
    """Also apply each plan owner's ``~/.config/anna/policy.toml`` (restrictions only)."""
    recipes_dir: Path = Path("/etc/anna/recipes.d")
    """Where recipes live (``NAME.toml``); ``annactl recipe run NAME`` and the
    ``anna-recipe@NAME.timer`` run them."""
    notify_command: str = "notify-send"
    """The program that tells a desktop session a plan waits (a name on PATH or a path)."""
    notify_runtime_root: Path = Path("/run/user")
    """System daemon: where logged-in users' session buses are (``UID/bus``)."""
    lockout_revert_s: float = Field(default=120.0, ge=0.5, le=24 * 3600)
    """A plan that can cut the person off (sshd, network, firewall, PAM, sudoers, display
    manager) is rolled back after this many seconds unless ``annactl confirm ID`` arrives
    from a new connection."""
    etc_root: Path = Path("/etc")
    """The configuration tree lock-out checks and etckeeper look at (tests: a scratch tree)."""
    snapshots: bool = True
    """Take snapper and etckeeper snapshots around plans when the machine has them."""
    snapper: str = "snapper"
    """The snapper program."""
    etckeeper: str = "etckeeper"
    """The etckeeper program."""
    etckeeper_conf_dir: Path | None = None
    """``ETCKEEPER_CONF_DIR`` for etckeeper (default: its own, ``/etc/etckeeper``)."""
    preview: bool = True
    """Preview every plan at submit: file steps over a throw-away overlay (diffs), pacman
    through ``--print``, unit states, validators on the previewed files."""
    preview_timeout_s: float = Field(default=20.0, gt=0, le=600)
    """Wall time of a plan's overlay preview run."""
    preview_memory: int = Field(default=512 * 1024 ** 2, ge=16 * 1024 ** 2, le=64 * 1024 ** 3)
    """Memory of a plan's overlay preview, all its processes together (bytes): its cgroup's
    cap, or where none can be made (a per-user daemon) the sum its helper watches; past it
    the preview stops with ``PREVIEW_MEMORY_EXCEEDED``."""
    preview_validator_path: list[Path] = []
    """Directories searched for validators (sshd, visudo…) before the fixed PATH."""
    log_level: str = "INFO"
    """Logging level for stderr (journald)."""

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Arguments, then ``ANNAD_*`` variables, then the TOML file (no dotenv, no secrets dir)."""
        toml = TomlConfigSettingsSource(settings_cls, toml_file=config_file())
        return (init_settings, env_settings, toml)

    # ------------------------------------------------------------------ derived values

    @property
    def mode(self) -> DaemonMode:
        """``user`` when asked for, or by default when not running as root."""
        user = self.user_mode if self.user_mode is not None else os.geteuid() != 0
        return DaemonMode.USER if user else DaemonMode.SYSTEM

    @property
    def socket_path(self) -> Path:
        """The socket to listen on."""
        if self.socket is not None:
            return self.socket
        if self.mode is DaemonMode.SYSTEM:
            return Path(SYSTEM_SOCKET)
        return user_runtime_dir() / SOCKET_NAME

    @property
    def state_path(self) -> Path:
        """The state directory (journal, backups)."""
        if self.state_dir is not None:
            return self.state_dir
        if self.mode is DaemonMode.SYSTEM:
            return Path(SYSTEM_STATE_DIR)
        return user_state_base() / "annad"

    @property
    def socket_mode(self) -> int:
        """0660 for the system daemon (root and group anna), 0600 for a per-user one."""
        return 0o660 if self.mode is DaemonMode.SYSTEM else 0o600


def untrusted(path: Path) -> str | None:
    """Why a file root reads as Anna's configuration could be another user's to change
    (None: it cannot, or it does not exist): the file or a directory above it is owned by a
    uid other than root, or writable by group or others (a world-writable sticky directory
    such as /tmp protects an entry owned by root). Only a root daemon asks: a per-user
    daemon's files are its user's own."""
    if os.geteuid() != 0:
        return None
    current = Path(os.path.abspath(path))  # noqa: PTH100 - no symlinks resolved: each is checked
    child_trusted = False
    seen = 0
    while True:
        try:
            info = current.lstat()
        except FileNotFoundError:
            if seen == 0:
                return None  # no file there: nothing is read
            return f"{current} does not exist"
        except OSError as exc:
            return f"{current} cannot be checked ({exc.strerror})"
        seen += 1
        if stat.S_ISLNK(info.st_mode):
            if info.st_uid != 0:
                return f"{current} is a link owned by uid {info.st_uid}"
            target = Path(os.path.realpath(current))
            why = untrusted(target)
            if why is not None:
                return why
        elif info.st_uid != 0:
            return f"{current} is owned by uid {info.st_uid}, not root"
        sticky = stat.S_ISDIR(info.st_mode) and bool(info.st_mode & stat.S_ISVTX)
        if info.st_mode & 0o022 and not stat.S_ISLNK(info.st_mode) and not (
                sticky and child_trusted):
            return f"{current} is writable by {'others' if info.st_mode & 0o002 else 'its group'}"
        child_trusted = True
        if current.parent == current:
            return None
        current = current.parent


def refuse_untrusted(path: Path, what: str) -> None:
    """Raise ``CONFIG_INVALID`` naming ``path`` when another user could change it."""
    why = untrusted(path)
    if why is not None:
        raise AnnaError(f"{what} {path} is refused: {why}; a root daemon reads only files "
                        "root alone can change", code=ErrorCode.CONFIG_INVALID,
                        hint=f"chown root:root {path} && chmod go-w {path}")


def load_settings(**arguments: Any) -> DaemonSettings:
    """Build settings from arguments (None means "not given"), env and TOML.

    Raises :class:`AnnaError` with ``CONFIG_INVALID`` on a bad value or file, and on a
    configuration file or ``confine_python`` another user could change (a root daemon).
    """
    given = {k: v for k, v in arguments.items() if v is not None}
    refuse_untrusted(config_file(), "the configuration file")
    try:
        settings = DaemonSettings(**given)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "settings"
        raise AnnaError(f"invalid configuration: {where}: {first.get('msg', 'invalid value')}",
                        code=ErrorCode.CONFIG_INVALID,
                        hint=f"check {config_file()} and ANNAD_* variables") from None
    except (OSError, ValueError) as exc:
        raise AnnaError(f"cannot read configuration: {exc}", code=ErrorCode.CONFIG_INVALID,
                        hint=f"check {config_file()}") from None
    if settings.confine_python is not None:
        # the interpreter runs every check and INFO step's confinement as root
        program = settings.confine_python
        found = program if "/" in program else shutil.which(program)
        refuse_untrusted(Path(found or program), "confine_python")
    return settings
