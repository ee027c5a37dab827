"""docker, podman, nerdctl and the other container and VM managers.

A container runtime acts through its daemon: what a container writes through a bind mount
of the host, or does with the host's namespaces or devices, happens in that daemon's
process, where no capture of Anna's sees it and no backup is taken. So a container with
host access is HIGH and says it runs live and Anna cannot undo it (the code
``uncaptured_write`` makes the daemon's undo never claim it restored). Host access is any
bind mount of a host path — absolute, relative, ``~``, a variable, whatever the syntax:
``-v SRC:DST``, ``-vSRC:DST``, ``-itv SRC:DST``, ``--volume=``, ``--mount type=bind,…``, a
local volume bound to a device or directory (``volume-opt=device=…``, ``volume create --opt
device=…``) — a host namespace (``--pid host``, ``--net=host``…), ``--privileged``,
capabilities, devices, security options, another container's volumes, and a compose file or
kube manifest (what it mounts is not on the command line).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from anna_common.risk.rules.base import RUNS_LIVE, Code, Out, help_only
from anna_common.risk.rules.destructive import vm_storage

if TYPE_CHECKING:
    from anna_common.shell.grammar import SimpleCommand

_CONTAINER_READS = frozenset({"ps", "images", "inspect", "logs", "info", "version", "stats",
                              "top", "port", "history", "search", "list", "ls", "status", ""})
_VIRSH_READS = frozenset({"dominfo", "domstate", "dumpxml", "net-list", "pool-list", "vol-list",
                          "capabilities", "nodeinfo", "domifaddr", "domblklist", "domiflist",
                          "net-info", "pool-info", "vol-info", "hostname", "uri", "sysinfo",
                          "snapshot-list", "list-all"})
_HOST_FLAGS = ("--privileged", "--cap-add", "--device", "--security-opt", "--volumes-from",
               "--pid=host", "--net=host", "--network=host", "--ipc=host", "--uts=host",
               "--userns=host", "--cgroupns=host")
"""Options that give a container the host (a prefix: ``--cap-add=ALL``, ``--device=/dev/x``)."""
_NAMESPACES = frozenset({"--pid", "--net", "--network", "--ipc", "--uts", "--userns",
                         "--cgroupns"})
"""Namespace options whose separate value may be ``host``."""
_VOLUME_LONG = ("--volume", "--mount")
_NAMED_VOLUME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
"""A volume name (docker's own rule): anything else as a source is a host path."""
_FROM_FILE = frozenset({"compose", "stack", "play", "kube", "up", "deploy", "apply"})
"""Verbs that run containers as a file describes them (its mounts are not on the line)."""


def _bind_source(value: str, *, mount: bool) -> bool:
    """The value of ``-v``/``--mount`` binds a host path (or cannot be read as a volume)."""
    if mount:
        fields = dict(part.partition("=")[::2] for part in value.split(","))
        if "volume-opt" in value or fields.get("type", "volume") == "bind" or \
                "bind-propagation" in fields:
            return True
        source = fields.get("source", fields.get("src", ""))
        return bool(source) and not _NAMED_VOLUME.fullmatch(source)
    source = value.partition(":")[0]
    return not _NAMED_VOLUME.fullmatch(source)  # "/etc", "./d", "~/x", "$HOME", "", "//etc"


def _short_cluster_value(text: str) -> tuple[bool, str] | None:
    """``-v/etc:/x``, ``-itv`` (then the value is the next word): (takes next, joined value)
    when a cluster of short options ends in or holds ``v``; None otherwise."""
    if not text.startswith("-") or text.startswith("--") or "v" not in text[1:]:
        return None
    letters, _, rest = text[1:].partition("v")
    if not letters.isalpha() and letters:
        return None
    return (not rest, rest)


def host_access(cmd: SimpleCommand) -> str | None:
    """Why ``cmd`` gives a container the host, or None."""
    words = cmd.args
    for index, word in enumerate(words):
        text = word.text
        nxt = words[index + 1] if index + 1 < len(words) else None
        if text.startswith(_HOST_FLAGS):
            return f"{text.partition('=')[0]} gives the container the host"
        if text in _NAMESPACES and nxt is not None and nxt.text == "host":
            return f"{text} host shares the host's namespace"
        for long in _VOLUME_LONG:
            if text == long and nxt is not None:
                if not nxt.literal or _bind_source(nxt.text, mount=long == "--mount"):
                    return f"{long} {nxt.text[:60]} binds a host path"
            elif text.startswith(long + "=") and (not word.literal or _bind_source(
                    text.partition("=")[2], mount=long == "--mount")):
                return f"{text[:60]} binds a host path"
        cluster = _short_cluster_value(text)
        if cluster is not None:
            takes_next, joined = cluster
            value = nxt if takes_next else None
            source = value.text if value is not None else joined
            if (value is not None and not value.literal) or (not word.literal) or (
                    source and _bind_source(source, mount=False)):
                return f"-v {source[:60]} binds a host path"
        if text in ("--opt", "-o") and nxt is not None and nxt.text.startswith("device="):
            return f"a volume bound to {nxt.text[7:67]} on the host"
    return None


def container(cmd: SimpleCommand, out: Out) -> None:
    """docker/podman/...: inspection reads; host access HIGH and live; the rest MEDIUM."""
    texts = [w.text for w in cmd.args]
    verb = next((t for t in texts if not t.startswith("-")), "")
    reads = _CONTAINER_READS | _VIRSH_READS if cmd.program == "virsh" else _CONTAINER_READS
    if verb in reads or help_only(cmd):
        out.read_only()
        return
    why = host_access(cmd)
    if why is None and (verb in _FROM_FILE or cmd.program in ("docker-compose",
                                                              "podman-compose")):
        why = "it runs containers as a file describes them, with whatever host access it gives"
    if why is None and vm_storage(cmd, out):
        return
    if why is not None:
        out.high(Code.CONTAINER, f"{cmd.program} runs a container with host access ({why})",
                 system=True, target=verb or cmd.program)
        out.high(Code.UNCAPTURED_WRITE, f"{RUNS_LIVE}: {cmd.program} changes the host "
                 "through its daemon, where Anna sees and backs up nothing",
                 system=True, target=verb or cmd.program)
        return
    if verb in ("exec", "attach", "proxy", "port-forward", "cp", "debug", "shell", "login",
                "run-shell", "console") or \
            any("0.0.0.0" in t for t in texts):  # noqa: S104 - detects a bind-all, binds nothing
        out.high(Code.CONTAINER, f"{cmd.program} {verb} opens a way into a container or out of it",
                 system=True, target=verb)
        return
    if verb in ("rm", "rmi", "prune", "system", "volume", "kill") and any(
            t in ("prune", "rm", "-f", "--force", "-a", "--all") for t in texts):
        out.high(Code.CONTAINER, f"{cmd.program} {verb} deletes containers, images or volumes",
                 system=True, target=verb)
        return
    out.medium(Code.CONTAINER, f"{cmd.program} {verb} manages containers", system=True,
               target=verb)
