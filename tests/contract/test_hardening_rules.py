"""Issue 8, program rules: IPC read verbs, interpreter writes Anna cannot see, pacman options
that load foreign code or trust, and seed 000's "disable security mechanisms" through files.

Every class is probed with many spellings, and every command is also wrapped in the
disguises the contract unwraps (``bash -c``, ``sudo sh -c``, ``env sh -c``, ``eval``) and
placed as a check, a step and a rollback command of a plan.
"""

from __future__ import annotations

import shlex
from typing import Any

import pytest

from anna_common.findings import FindingCode
from anna_common.plan import RiskLevel
from anna_common.risk.assess import AssessContext, assess
from anna_common.risk.rules.base import Code
from anna_common.validate import validate

from .plans import plan, step

CTX = AssessContext(distro="arch", home="/home/alice", bootloader="grub")
UNCAPTURED = "uncaptured_write"
SENTENCE = "Anna cannot back this up"


def disguises(command: str) -> list[str]:
    """The command as given and inside the wrappers Anna sees through."""
    quoted = shlex.quote(command)
    return [command, f"bash -c {quoted}", f"sudo sh -c {quoted}",
            f"env LC_ALL=C bash -c {quoted}", f"eval {quoted}"]


def _check(command: str) -> dict[str, Any]:
    return {"id": "c1", "description": "check", "command": command, "risk_level": "INFO",
            "required": True}


def _codes(result: Any) -> set[FindingCode]:
    return {f.code for f in result.errors}


# ---------------------------------------------------------------- 1. IPC read verbs only

IPC_CHANGES = [
    "systemctl --no-pager -q stop nginx",
    "systemctl -q --no-block restart nginx",
    "sudo -u root systemctl restart nginx",
    "env SYSTEMD_PAGER=cat systemctl stop nginx",
    "systemctl --user stop pipewire",
    "systemctl daemon-reload",
    "systemctl kill -s 9 nginx",
    "systemctl set-property nginx CPUQuota=1%",
    "systemctl isolate rescue.target",
    "systemctl -H root@server status sshd",
    "systemctl $VERB nginx",
    "busctl call org.freedesktop.login1 /org/freedesktop/login1 "
    "org.freedesktop.login1.Manager PowerOff b false",
    "busctl --user call org.x /x org.x.Y Z",
    "busctl set-property org.freedesktop.hostname1 /org/freedesktop/hostname1 "
    "org.freedesktop.hostname1 Static s x",
    "busctl emit /x org.x.Y Z",
    "busctl monitor",
    "busctl capture",
    "dbus-send --system --print-reply --dest=org.freedesktop.login1 /org/freedesktop/login1 "
    "org.freedesktop.login1.Manager.PowerOff boolean:true",
    "dbus-send --system /org/x org.x.Signal",
    "dbus-send --type=method_call --dest=org.freedesktop.systemd1 /org/freedesktop/systemd1 "
    "org.freedesktop.systemd1.Manager.StopUnit string:sshd.service string:replace",
    "gdbus call --system --dest org.freedesktop.login1 --object-path /org/freedesktop/login1 "
    "--method org.freedesktop.login1.Manager.Reboot false",
    "gdbus emit --session --object-path /x --signal org.x.Y",
    "gdbus monitor --system --dest org.freedesktop.login1",
    "qdbus org.kde.ksmserver /KSMServer logout 0 2 2",
    "qdbus --system org.freedesktop.login1 /org/freedesktop/login1 PowerOff true",
    "dbus-monitor --system",
    "varlinkctl call /run/systemd/io.systemd.x io.systemd.X.Y '{}'",
    "loginctl terminate-user alice",
    "loginctl kill-session 2",
    "loginctl enable-linger alice",
    "loginctl lock-sessions",
    "loginctl -p Name terminate-session 1",
    "nmcli general reload",
    "nmcli general hostname evil",
    "nmcli radio wifi off",
    "nmcli radio all off",
    "nmcli networking off",
    "nmcli connection up home",
    "nmcli -t connection down home",
    "nmcli c modify home ipv4.dns 1.1.1.1",
    "nmcli connection delete home",
    "nmcli -s connection show home",
    "nmcli connection show --show-secrets home",
    "nmcli device wifi show-password",
    "nmcli device disconnect wlan0",
    "kill 1234",
    "kill -9 1234",
    "kill -s TERM 1234",
    "kill -0 -9 1234",
    "pkill firefox",
    "killall -HUP nginx",
    "fuser -k /mnt",
    "journalctl --rotate",
    "journalctl --vacuum-size=100M",
    "journalctl --vacuum-time=1d",
    "journalctl --flush",
    "journalctl --sync",
    "journalctl --relinquish-var",
    "journalctl --setup-keys",
    "journalctl --update-catalog",
    "journalctl --cursor-file=/tmp/cur -n 1",
    "pacman -Syu",
    "pacman -Sy",
    "pacman -S vim",
    "pacman -Ssy vim",
    "pacman -Fy",
    "pacman -R vim",
    "pacman -U /tmp/x.pkg.tar.zst",
    "pacman -D --asdeps vim",
    "timedatectl set-time '2020-01-01 00:00'",
    "timedatectl set-ntp false",
    "hostnamectl set-hostname evil",
    "hostnamectl hostname evil",
    "localectl set-keymap us",
    "resolvectl dns eth0 1.1.1.1",
    "resolvectl log-level debug",
    "networkctl down eth0",
    "networkctl reconfigure eth0",
    "udevadm trigger",
    "udevadm control --reload",
    "machinectl shell root@.host",
    "machinectl terminate vm",
    "coredumpctl debug",
    "systemd-analyze log-level debug",
    "systemd-analyze set-log-level debug",
    "swaymsg exec foo get_tree",
    "swaymsg 'exec rm -rf ~'",
    "swaymsg 'workspace 2; exec_always foo'",
    "swaymsg exit",
    "swaymsg output HDMI-1 disable",
    "i3-msg 'exec xterm'",
    "i3-msg exit",
    "hyprctl dispatch exec kitty",
    "hyprctl --batch 'monitors; dispatch exec x'",
    "hyprctl dispatch exit",
    "hyprctl keyword general:gaps_in 5",
    "hyprctl plugin load /tmp/x.so",
    "awesome-client 'os.execute(\"id\")'",
    "bspc quit",
    "wpctl set-volume @DEFAULT_AUDIO_SINK@ 50%",
    "wpctl settings foo bar",
    "pactl load-module module-native-protocol-tcp auth-anonymous=1",
    "pactl set-sink-volume 0 50%",
    "amixer set Master 50%",
    "amixer -c 0 sset Master mute",
    "xrandr --output HDMI-1 --off",
    "gsettings set org.gnome.desktop.interface gtk-theme Adwaita",
    "gsettings set org.gnome.settings-daemon.plugins.media-keys.custom-keybinding:/x/ "
    "command 'rm -rf ~'",
    "dconf write /org/x \"'y'\"",
    "xdotool type 'rm -rf ~'",
    "xdotool key ctrl+alt+t",
    "xdotool search --name x windowactivate type hi",
    "xdotool exec xterm",
    "ydotool type hello",
    "wtype 'rm -rf ~'",
    "xinput test 10",
    "brightnessctl -m set 50%",
    "playerctl volume 0.5",
    "docker run --rm alpine true",
    "docker run -v /etc:/host alpine true",
    "docker run --mount type=bind,source=/etc,target=/e alpine true",
    "docker run -v /var/run/docker.sock:/var/run/docker.sock alpine true",
    "docker run --privileged alpine true",
    "docker exec -it c sh",
    "docker rm -f c",
    "podman run --cap-add=SYS_ADMIN alpine true",
    "virsh destroy vm",
    "virsh start vm",
    "tmux send-keys -t 0 'rm -rf ~' Enter",
    "tmux run-shell 'rm -rf ~'",
    "tmux ls \\; send-keys -t 0 x Enter",
    "tmux ls -F '#(id)'",
    "tmux -f /tmp/evil.conf ls",
    "tmux kill-server",
    "screen -S x -X stuff 'rm -rf ~\\n'",
    "screen -X quit",
    "ssh-agent -k",
    "ssh-agent rm -rf /tmp/x",
    "gpg-connect-agent '/run /tmp/x' /bye",
    "gpg-connect-agent '/datafile /etc/x' 'getinfo version' /bye",
    "gpg-connect-agent killagent /bye",
    "flatpak remote-add --no-gpg-verify x https://example.org/repo",
    "flatpak install flathub org.x.Y",
    "snap install foo",
    "logger 'fake entry'",
    "wall 'system going down'",
    "pip config set global.index-url http://evil",
    "npm config set registry http://evil",
    "npm audit fix",
    "npm version patch",
]

IPC_READS = [
    "systemctl status nginx",
    "systemctl --no-pager -q status nginx",
    "systemctl -p ActiveState show nginx",
    "systemctl -P ActiveState show nginx",
    "systemctl show --value -p ActiveState nginx",
    "systemctl show -p ActiveState nginx",
    "systemctl is-active -q nginx",
    "systemctl is-enabled nginx",
    "systemctl list-units --type=service --state=running",
    "systemctl --user status pipewire",
    "systemctl cat nginx",
    "systemctl get-default",
    "busctl list",
    "busctl status",
    "busctl tree org.freedesktop.login1",
    "busctl introspect org.freedesktop.login1 /org/freedesktop/login1",
    "busctl get-property org.freedesktop.hostname1 /org/freedesktop/hostname1 "
    "org.freedesktop.hostname1 Hostname",
    "busctl call org.freedesktop.hostname1 /org/freedesktop/hostname1 "
    "org.freedesktop.DBus.Properties Get ss org.freedesktop.hostname1 Hostname",
    "dbus-send --system --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus "
    "org.freedesktop.DBus.ListNames",
    "dbus-send --print-reply --dest=org.freedesktop.hostname1 /org/freedesktop/hostname1 "
    "org.freedesktop.DBus.Properties.Get string:org.freedesktop.hostname1 string:Hostname",
    "gdbus introspect --system --dest org.freedesktop.login1 --object-path "
    "/org/freedesktop/login1",
    "gdbus call --system --dest org.freedesktop.hostname1 --object-path "
    "/org/freedesktop/hostname1 --method org.freedesktop.DBus.Properties.GetAll "
    "org.freedesktop.hostname1",
    "qdbus",
    "qdbus org.kde.KWin",
    "loginctl list-sessions",
    "loginctl show-session 1",
    "loginctl -p Name show-session 1",
    "loginctl user-status alice",
    "nmcli",
    "nmcli general status",
    "nmcli g",
    "nmcli -t -f active,ssid dev wifi",
    "nmcli -g IP4.ADDRESS device show wlan0",
    "nmcli device status",
    "nmcli connection show",
    "nmcli c s",
    "nmcli radio wifi",
    "nmcli networking connectivity",
    "kill -l",
    "kill -0 1234",
    "kill -s 0 1234",
    "pkill -0 firefox",
    "killall -l",
    "fuser -v /mnt",
    "journalctl -u nginx --since today",
    "journalctl -b -p err --no-pager",
    "pacman -Qi vim",
    "pacman -Q",
    "pacman -Ss vim",
    "pacman -Si vim",
    "pacman -Sl",
    "pacman -Sg",
    "pacman -Fl vim",
    "pacman -T vim",
    "pacman -Qkk vim",
    "pacman -Q --root /mnt",
    "timedatectl status",
    "hostnamectl",
    "hostnamectl hostname",
    "localectl status",
    "resolvectl status",
    "resolvectl log-level",
    "networkctl status",
    "networkctl list",
    "udevadm info /dev/sda",
    "udevadm monitor",
    "machinectl list",
    "coredumpctl list",
    "systemd-analyze blame",
    "systemd-analyze log-level",
    "swaymsg -t get_tree",
    "swaymsg -t get_outputs",
    "i3-msg -t get_workspaces",
    "hyprctl monitors",
    "hyprctl -j clients",
    "wpctl status",
    "wpctl settings",
    "pactl list short sinks",
    "amixer get Master",
    "xrandr",
    "xrandr -q",
    "xrandr --listmonitors",
    "gsettings get org.gnome.desktop.interface gtk-theme",
    "xdotool getactivewindow",
    "xdotool getmouselocation",
    "brightnessctl get",
    "playerctl volume",
    "playerctl status",
    "docker ps",
    "docker images",
    "docker inspect c",
    "podman ps -a",
    "virsh list --all",
    "virsh dumpxml vm",
    "tmux ls",
    "tmux list-sessions",
    "tmux list-windows -t 0",
    "tmux has-session -t main",
    "screen -ls",
    "flatpak list",
    "pip config list",
    "pip config get global.index-url",
    "npm config get registry",
    "npm audit",
    "npm version",
]


@pytest.mark.parametrize("command", IPC_CHANGES)
def test_ipc_programs_that_change_the_machine_are_not_read_only(command: str) -> None:
    for text in disguises(command):
        verdict = assess(text, CTX)
        assert verdict.risk > RiskLevel.INFO and not verdict.read_only, (text, verdict)


@pytest.mark.parametrize("command", IPC_CHANGES[::3])
def test_ipc_changes_are_refused_as_checks(command: str) -> None:
    result = validate(plan(necessary_checks=[_check(command)]), CTX)
    assert _codes(result) & {FindingCode.CHECK_NOT_READ_ONLY, FindingCode.BANNED_COMMAND}, \
        command


@pytest.mark.parametrize("command", IPC_READS)
def test_ipc_read_verbs_stay_info(command: str) -> None:
    verdict = assess(command, CTX)
    assert verdict.risk == RiskLevel.INFO, (command, verdict.reasons)
    result = validate(plan(necessary_checks=[_check(command)]), CTX)
    assert FindingCode.CHECK_NOT_READ_ONLY not in _codes(result), command


@pytest.mark.parametrize("command", [
    "busctl monitor", "dbus-monitor --system", "nmcli -s c show home",
    "busctl call org.freedesktop.login1 /org/freedesktop/login1 "
    "org.freedesktop.login1.Manager PowerOff b false",
    "swaymsg 'exec rm -rf ~'", "xdotool type 'rm -rf ~'", "tmux send-keys 'rm -rf ~' Enter",
    "systemctl -H root@server status sshd", "docker run -v /etc:/host alpine true",
    "machinectl shell root@.host", "qdbus org.kde.ksmserver /KSMServer logout 0 2 2",
])
def test_ipc_that_reaches_other_sessions_secrets_or_machines_is_high(command: str) -> None:
    assert assess(command, CTX).risk == RiskLevel.HIGH, command


# ------------------------------------------- 2. interpreter writes Anna cannot see (class 4)

UNCAPTURED_CODE = [
    "python3 -c 'open(\"/home/alice/x\", \"w\").write(\"1\")'",
    "python -c 'import os; os.remove(\"/etc/x\")'",
    "python3 -c 'import os; o = os; o.remove(\"/x\")'",
    "python3 -c 'from pathlib import Path; Path(\"/etc/x\").write_text(\"y\")'",
    "python3 -c 'from pathlib import Path; Path(\"/etc/x\").open(\"w\").write(\"y\")'",
    "python3 -c 'from pathlib import Path; Path(\"/etc/a\").replace(\"/etc/b\")'",
    "python3 -c 'import shutil; shutil.rmtree(\"/x\")'",
    "python3 -c 'getattr(__import__(\"os\"), \"sys\" + \"tem\")(\"id\")'",
    "python3 -c 'print(open(\"/etc/x\", mode=\"a\"))'",
    "python3 -c 'import sys; sys.path.insert(0, \"/tmp\"); import json'",
    "python3 -c 'x = [print][0]; eval(\"1\")'",
    "python3 -c 'import subprocess; subprocess.run([\"ls\"])'",
    "python3 -c 'print(().__class__.__bases__)'",
    "python3 -c 'from os import system; system(\"id\")'",
    "python3 -c 'import os as o; o.unlink(\"/x\")'",
    "python3 -c 'import tempfile; tempfile.mkstemp()'",
    "python3 -c 'def ('",
    "python3 -c 'import glob; glob.os.system(\"id\")'",
    "python3 -c 'import os; os.path.os.remove(\"/x\")'",
    "python3 - <<'PY'\nopen('/etc/x', 'w').write('1')\nPY",
    "python3 <<< 'import os; os.system(\"id\")'",
    "sudo python3 - <<'PY'\nimport shutil\nshutil.rmtree('/srv/x')\nPY",
    "cat x.py | python3",
    "python3 script.py",
    "perl -e 'print 1'",
    "perl -E 'say 1'",
    "perl -ne 'print if /x/' f",
    "perl -lne 'print' f",
    "perl -pi -e 's/a/b/' /home/alice/f",
    "perl -i -pe 's/a/b/' /home/alice/f",
    "ruby -e 'File.write(\"/x\", \"y\")'",
    "node -e 'require(\"fs\").writeFileSync(\"/x\", \"y\")'",
    "node --eval 'console.log(1)'",
    "node -p '1 + 1'",
    "php -r 'file_put_contents(\"/x\", \"y\");'",
    "lua -e 'io.open(\"/x\", \"w\")'",
    "Rscript -e 'writeLines(\"y\", \"/x\")'",
    "osascript -e 'do shell script \"id\"'",
    "awk '{print $1 > \"/etc/x\"}' f",
    "awk '{print >> \"/home/alice/out\"}' f",
    "awk 'BEGIN { printf \"%s\", \"a\" > \"/etc/x\" }'",
    "awk '{print | \"sh\"}' f",
    "awk '{a[$1]++} END {for (k in a) print k | \"sort\"}' f",
    "awk 'BEGIN{system(\"id\")}'",
    "awk 'BEGIN{\"id\" | getline x; print x}'",
    "gawk 'BEGIN{print \"x\" |& \"cat\"}'",
    "gawk -i inplace '{print}' /home/alice/f",
    "gawk -iinplace '{print}' /home/alice/f",
    "gawk --include=inplace '{print}' /home/alice/f",
    "gawk -l /tmp/x.so '{print}' f",
    "gawk '@load \"filefuncs\"; {print}' f",
    "awk -f prog.awk f",
    "gawk -e 'BEGIN{system(\"id\")}'",
    "journalctl --cursor-file=/etc/x -n 1",
    "crudini --set /etc/x.ini section key value",
    "augtool -s set /files/etc/hosts/1/ipaddr 1.2.3.4",
]

PYTHON_AND_AWK_READ_ONLY = [
    ("python3 -c 'print(1)'", RiskLevel.LOW),
    ("python3 -c 'import sys; print(sys.version)'", RiskLevel.LOW),
    ("python3 -c 'import os; print(os.getcwd(), os.path.exists(\"/etc\"))'", RiskLevel.LOW),
    ("python3 -c 'import json, sys; print(json.load(sys.stdin)[\"x\"])'", RiskLevel.LOW),
    ("python3 -c 'from pathlib import Path; print(Path(\"/etc/hostname\").read_text())'",
     RiskLevel.LOW),
    ("python3 -c 'print(open(\"/etc/hostname\").read().strip().replace(\"a\", \"b\"))'",
     RiskLevel.LOW),
    ("python3 - <<'PY'\nimport platform\nprint(platform.system())\nPY", RiskLevel.LOW),
    ("awk '{print $1}' f", RiskLevel.INFO),
    ("awk -F: '$3 >= 1000 {print $1}' /etc/passwd", RiskLevel.INFO),
    ("awk '{ if ($3 > 100) print $1 }' f", RiskLevel.INFO),
    ("awk '{print ($1 > 5)}' f", RiskLevel.INFO),
    ("awk '/a|b/ {print}' f", RiskLevel.INFO),
    ("awk '{n = $1 / 2; print n}' f", RiskLevel.INFO),
    ("awk '{print \"a > b\"}' f", RiskLevel.INFO),
]


@pytest.mark.parametrize("command", UNCAPTURED_CODE)
def test_interpreter_writes_anna_cannot_see_are_high_and_say_so(command: str) -> None:
    for text in disguises(command):
        verdict = assess(text, CTX)
        assert verdict.risk == RiskLevel.HIGH, (text, verdict.reasons)
        assert UNCAPTURED in verdict.codes, (text, verdict.codes)
        assert any(SENTENCE in r for r in verdict.reasons), verdict.reasons


def test_the_code_has_the_agreed_wire_value() -> None:
    assert Code.UNCAPTURED_WRITE.value == "uncaptured_write"
    assert Code("uncaptured_write") is Code.UNCAPTURED_WRITE


@pytest.mark.parametrize("command", UNCAPTURED_CODE[::4])
def test_uncaptured_steps_and_rollbacks_carry_the_reason_in_the_annotated_plan(
        command: str) -> None:
    data = plan(necessary_checks=[],
                command_plan=[step("s1", command, rollback="r1")],
                rollback_plan=[{"id": "r1", "description": "undo", "command": command}])
    result = validate(data, CTX)
    assert result.plan is not None, result.errors
    for annotated in (result.plan.steps[0], result.plan.rollback[0]):
        assert annotated.final_risk == RiskLevel.HIGH
        assert UNCAPTURED in annotated.codes
        assert any(SENTENCE in r for r in annotated.reasons)
    assert SENTENCE in result.plan.model_dump_json()
    checked = validate(plan(necessary_checks=[_check(command)]), CTX)
    assert FindingCode.CHECK_NOT_READ_ONLY in _codes(checked)


def test_code_after_a_perl_option_cluster_is_analysed() -> None:
    verdict = assess("perl -ne 'system(\"rm -rf /\")' f", CTX)
    assert verdict.banned and str(Code.BAN_RECURSIVE_DELETE) in verdict.codes


@pytest.mark.parametrize(("command", "tier"), PYTHON_AND_AWK_READ_ONLY)
def test_code_proven_read_only_keeps_its_tier(command: str, tier: RiskLevel) -> None:
    verdict = assess(command, CTX)
    assert verdict.risk == tier, (command, verdict.reasons)
    assert UNCAPTURED not in verdict.codes


# ------------------------------------------ 3. pacman options that load foreign code or trust

PACMAN_HIGH = [
    "pacman -S --hookdir /tmp/hooks vim",
    "pacman -S --hookdir=/home/alice/h vim",
    "pacman --config /tmp/pacman.conf -Syu",
    "pacman -Syu --config=/home/alice/p.conf",
    "pacman -S --root /mnt vim",
    "pacman -Su --root=/mnt",
    "pacman -Sr /mnt vim",
    "pacman -S -r/mnt vim",
    "pacman -S --dbpath /tmp/db vim",
    "pacman -Sb /tmp/db vim",
    "pacman -S --sysroot /mnt vim",
    "pacman -S --gpgdir /tmp/gnupg vim",
    "pacman -S --cachedir /tmp/cache vim",
    "pacman -S --logfile /etc/shadow vim",
    "pacman -S --config $CONF vim",
    "pacman -R --root /tmp/r vim",
    "pacman -U /tmp/x.pkg.tar.zst",
    "pacman -U foo",
    "pacman -U https://example.org/x.pkg.tar.zst",
    "pacman -U file:///tmp/x.pkg.tar.zst",
    "pacman --upgrade ./x.pkg.tar.zst",
    "pacman -S --overwrite '*' vim",
    "pacman -S --assume-installed glibc=9 vim",
    "pacman -S --dbonly vim",
    "pacman -Sdd vim",
    "pacman -S --nodeps --nodeps vim",
    "pacman -Rdd vim",
    "makepkg -si",
    "makepkg -i",
    "makepkg --install",
    "makepkg --syncdeps --install",
    "makepkg -fsri",
    "yay -S foo",
    "paru -S foo",
    "yay",
    "paru -Syu",
]


@pytest.mark.parametrize("command", PACMAN_HIGH)
def test_pacman_options_that_load_foreign_code_or_trust_are_high(command: str) -> None:
    for text in [command, f"sudo {command}", f"sudo --preserve-env {command}",
                 *disguises(command)[1:]]:
        verdict = assess(text, CTX)
        assert verdict.risk == RiskLevel.HIGH and not verdict.banned, (text, verdict.reasons)


@pytest.mark.parametrize("command", [
    "pacman -S vim", "pacman -Syu", "pacman -R vim",
    "pacman -S --hookdir /etc/pacman.d/hooks/ vim",
    "pacman -S --dbpath /var/lib/pacman/ --root / vim",
    "pacman -S --config /etc/pacman.conf --gpgdir /etc/pacman.d/gnupg vim",
    "pacman -S --cachedir /var/cache/pacman/pkg vim",
])
def test_pacman_with_the_systems_own_values_stays_medium(command: str) -> None:
    assert assess(command, CTX).risk == RiskLevel.MEDIUM, command


# -------------------------------------------------- 4. seed 000 through the files (ban)

SECURITY_BANS = [
    # SELinux
    "echo 'SELINUX=disabled' | sudo tee /etc/selinux/config",
    "echo SELINUX=permissive > /etc/selinux/config",
    "echo 'SELINUX = Disabled' >> /etc/selinux/config",
    "printf 'SELINUX=%s\\n' disabled | sudo tee /etc/selinux/config",
    "printf 'SELINUX=\\x64isabled\\n' > /etc/selinux/config",
    "echo -e 'SELINUX=\\x64isabled' > /etc/selinux/config",
    "sudo sed -i 's/^SELINUX=.*/SELINUX=disabled/' /etc/selinux/config",
    "sudo sed -i 's/enforcing/permissive/g' /etc/selinux/config",
    "sudo sed -i -e 's|SELINUX=enforcing|SELINUX=disabled|' /etc/selinux/config",
    "sudo tee /etc/selinux/config <<'END'\nSELINUX=disabled\nSELINUXTYPE=targeted\nEND",
    "cat > /etc/selinux/config <<END\nSELINUX=permissive\nEND",
    "sudo tee /etc/selinux/config <<< $'SELINUX=\\x64isabled'",
    "echo U0VMSU5VWD1kaXNhYmxlZA== | base64 -d | sudo tee /etc/selinux/config",
    "echo 'delbasid=XUNILES' | rev | sudo tee /etc/selinux/config",
    "echo 'selinux=disabled' | tr a-z A-Z | sudo tee /etc/selinux/config",
    "V=disabled; echo \"SELINUX=$V\" | sudo tee /etc/selinux/config",
    "sudo tee /e?c/selinux/config <<< 'SELINUX=disabled'",
    "echo SELINUX=disabled | sudo dd of=/etc/selinux/config",
    "echo SELINUX=disabled > /tmp/s && sudo cp /tmp/s /etc/selinux/config",
    "echo SELINUX=disabled > /tmp/s; sudo mv /tmp/s /etc/sysconfig/selinux",
    "echo SELINUX=disabled | sudo tee /etc/selinux/config.tmp && "
    "sudo mv /etc/selinux/config.tmp /etc/selinux/config",
    "printf 'SELINUX=disabled' > /tmp/s; sudo dd if=/tmp/s of=/etc/selinux/config",
    "sudo augtool set /files/etc/selinux/config/SELINUX disabled",
    "echo 'set /files/etc/selinux/config/SELINUX permissive' | sudo augtool -s",
    "sudo perl -pi -e 's/SELINUX=enforcing/SELINUX=disabled/' /etc/selinux/config",
    "sudo perl -i -pe 's/enforcing/permissive/' /etc/selinux/config",
    "sudo bash -c 'cat > /etc/selinux/config' <<< 'SELINUX=disabled'",
    "echo SELINUX=disabled | sudo sh -c 'tee /etc/selinux/config'",
    # pacman signature checking
    "echo 'SigLevel = Never' | sudo tee -a /etc/pacman.conf",
    "sudo sed -i 's/^SigLevel.*/SigLevel = Optional TrustAll/' /etc/pacman.conf",
    "sudo sed -i 's/Required DatabaseOptional/Never/' /etc/pacman.conf",
    "printf '[custom]\\nSigLevel = Never\\nServer = file:///x\\n' | "
    "sudo tee /etc/pacman.d/custom.conf",
    "echo 'SigLevel = PackageNever DatabaseNever' >> /etc/pacman.conf",
    "echo 'LocalFileSigLevel = Never' >> /etc/pacman.conf",
    "sudo tee -a /etc/pacman.conf <<'END'\n[evil]\nSigLevel = TrustAll\nEND",
    "sudo crudini --set /etc/pacman.conf options SigLevel Never",
    # sudoers
    "echo '%wheel ALL=(ALL:ALL) NOPASSWD: ALL' | sudo tee /etc/sudoers.d/wheel",
    "echo 'alice ALL=(ALL) NOPASSWD:ALL' >> /etc/sudoers",
    "echo 'alice ALL=(ALL) NOPASSWD: SETENV: ALL' | sudo tee -a /etc/sudoers.d/a",
    "echo 'alice ALL=(root) NOPASSWD: /bin/bash' | sudo tee /etc/sudoers.d/a",
    "echo 'Defaults !authenticate' | sudo tee /etc/sudoers.d/x",
    "echo 'ALL ALL=(ALL) ALL' | sudo tee /etc/sudoers.d/x",
    "sudo sed -i 's/^# %wheel ALL=(ALL:ALL) NOPASSWD: ALL/%wheel ALL=(ALL:ALL) NOPASSWD: ALL/' "
    "/etc/sudoers",
    "sudo sed -i '/NOPASSWD/s/^# //' /etc/sudoers",
    "sudo sed -i 's/^#\\s*\\(%wheel.*NOPASSWD.*\\)/\\1/' /etc/sudoers",
    "sudo sed -i '$a alice ALL=(ALL) NOPASSWD: ALL' /etc/sudoers",
    "echo 'alice ALL=(ALL) NOPASSWD: ALL' > /tmp/x && sudo cp /tmp/x /etc/sudoers.d/alice",
    "printf 'alice ALL=(ALL) NOPASSWD: ALL\\n' > /tmp/x; "
    "sudo install -m 440 /tmp/x /etc/sudoers.d/alice",
    "echo 'alice ALL=(ALL) NOPASSWD: ALL' | sudo EDITOR='tee -a' visudo",
    "cp /dev/stdin /etc/sudoers.d/x <<< 'bob ALL=(ALL) NOPASSWD: ALL'",
    "sudo tee /etc/sudoers.d/{a,b} <<< 'bob ALL=(ALL) NOPASSWD: ALL'",
    "install -m 440 /dev/stdin /etc/sudoers.d/x <<< 'alice ALL=(ALL) NOPASSWD: ALL'",
    "sed -i -e '$a\\' -e 'alice ALL=(ALL) NOPASSWD: ALL' /etc/sudoers",
    "echo 'alice ALL=(ALL) NOPASSWD: ALL' > /tmp/x; sudo ln -sf /tmp/x /etc/sudoers.d/x",
    "sudo sh -c 'cat > /etc/sudoers.d/x' <<'END'\nalice ALL=(ALL) NOPASSWD: ALL\nEND",
    # kernel command line
    "sudo sed -i 's/GRUB_CMDLINE_LINUX_DEFAULT=\"/&apparmor=0 /' /etc/default/grub",
    "echo 'GRUB_CMDLINE_LINUX=\"selinux=0\"' | sudo tee -a /etc/default/grub",
    "sudo grubby --update-kernel=ALL --args=\"selinux=0\"",
    "sudo grubby --update-kernel=ALL --args 'enforcing=0'",
    "sudo kernelstub -a \"apparmor=0\"",
    "sudo kernelstub --add-options 'audit=0'",
    "echo \"options root=/dev/sda2 audit=0\" | sudo tee -a /boot/loader/entries/arch.conf",
    "echo 'quiet security=none' | sudo tee /etc/kernel/cmdline",
    "sudo grub2-editenv - set kernelopts='root=/dev/sda1 selinux=0'",
    "sudo efibootmgr -c -d /dev/sda -u 'root=/dev/sda2 apparmor=0'",
    "sudo augtool set /files/etc/default/grub/GRUB_CMDLINE_LINUX '\"selinux=0\"'",
    # kernel protections
    "echo 0 | sudo tee /proc/sys/kernel/randomize_va_space",
    "echo 1 > /proc/sys/kernel/randomize_va_space",
    "echo 0 > /proc/sys/kernel/yama/ptrace_scope",
    "echo 0 | tee /proc/sys/kernel/kptr_restrict",
    "echo 0 > /proc/sys/fs/protected_symlinks",
    "sudo sysctl -w kernel.yama.ptrace_scope=0",
    "sysctl -w kernel.randomize_va_space=00",
    "sysctl -w kernel.yama.ptrace_scope=0x0",
    "echo 00 > /proc/sys/kernel/randomize_va_space",
    "echo 0 > /proc/sys/kernel/randomize_va_spac?",
    "echo 0 > /proc/sys/kernel/yama/*",
    "echo 'kernel.kptr_restrict=0' | sudo sysctl -p -",
    "sudo sysctl -p /dev/stdin <<< 'kernel.kptr_restrict=0'",
    "sudo sysctl kernel/randomize_va_space=1",
    "sysctl -w kernel.randomize_va_space=0",
    "sysctl -w 'fs.protected_hardlinks = 0'",
    "sysctl -w vm.swappiness=10 kernel.kptr_restrict=0",
    "echo 'kernel.yama.ptrace_scope = 0' | sudo tee /etc/sysctl.d/10-ptrace.conf",
    "echo 'kernel.randomize_va_space=0' >> /etc/sysctl.conf",
    "printf 'kernel.unprivileged_bpf_disabled = 0\\n' > /usr/lib/sysctl.d/99-x.conf",
    "echo 'kernel.kptr_restrict=0' > /tmp/k.conf && sudo sysctl -p /tmp/k.conf",
    "sudo sed -i 's/kernel.randomize_va_space = 2/kernel.randomize_va_space = 0/' "
    "/etc/sysctl.conf",
    "sudo sed -i '/ptrace_scope/s/1/0/' /etc/sysctl.d/10-ptrace.conf",
    # /etc/shadow opened to others
    "sudo chmod 666 /etc/shadow",
    "sudo chmod 644 /etc/shadow",
    "sudo chmod 0777 /etc/gshadow",
    "sudo chmod o+r /etc/shadow",
    "sudo chmod o+w /etc/shadow",
    "sudo chmod a+rw /etc/gshadow",
    "sudo chmod +r /etc/shadow",
    "sudo chmod u=rw,o=r /etc/shadow",
    "sudo chmod o=u /etc/shadow",
    "sudo chmod -v 666 /etc/shadow-",
    "sudo chmod --reference=/etc/passwd /etc/shadow",
    "sudo setfacl -m o::rw /etc/shadow",
    "sudo setfacl -m other::r /etc/shadow",
    "sudo setfacl --modify=o::r /etc/gshadow",
    "sudo chmod 777 /etc/sh*",
    "sudo chmod 666 /e?c/shadow",
    "sudo chown alice /etc/shadow",
    "sudo chown alice:alice /etc/shadow",
    "sudo chgrp users /etc/shadow",
]

NOT_BANNED = [
    "sudo sed -i 's/permissive/enforcing/' /etc/selinux/config",
    "echo 'SELINUX=enforcing' | sudo tee /etc/selinux/config",
    "echo 'SigLevel = Required DatabaseOptional' | sudo tee -a /etc/pacman.conf",
    "echo 'alice ALL=(ALL) NOPASSWD: /usr/bin/pacman' | sudo tee /etc/sudoers.d/alice",
    "echo '%wheel ALL=(ALL:ALL) ALL' | sudo tee /etc/sudoers.d/wheel",
    "sudo grubby --update-kernel=ALL --remove-args=\"selinux=0\"",
    "echo 'GRUB_CMDLINE_LINUX=\"quiet splash\"' | sudo tee -a /etc/default/grub",
    "echo 2 > /proc/sys/kernel/randomize_va_space",
    "echo 'kernel.yama.ptrace_scope = 1' | sudo tee /etc/sysctl.d/10-ptrace.conf",
    "sysctl -w vm.swappiness=10",
    "sysctl kernel.randomize_va_space",
    "sudo chmod 640 /etc/shadow",
    "sudo perl -pi -e 's/permissive/enforcing/' /etc/selinux/config",
    "crudini --get /etc/pacman.conf options SigLevel",
    "cp ~/backup/config /etc/selinux/config",
    "grep -q SELINUX=enforcing /etc/selinux/config || sudo cp /root/good /etc/selinux/config",
    "sudo chmod 0400 /etc/shadow",
    "sudo chmod o-rwx /etc/shadow",
    "sudo chown root:shadow /etc/shadow",
    "sudo setfacl -m u:alice:r /etc/shadow",
    "echo 'SELINUX=disabled' > ~/notes.txt",
    "grep SELINUX /etc/selinux/config",
    "echo 'alice ALL=(ALL) NOPASSWD: ALL'",
    "cat /etc/sysctl.d/10-ptrace.conf",
]


@pytest.mark.parametrize("command", SECURITY_BANS)
def test_security_switched_off_through_its_files_is_banned(command: str) -> None:
    for text in disguises(command):
        verdict = assess(text, CTX)
        assert verdict.banned, (text, verdict.reasons)
        assert str(Code.BAN_SECURITY_DISABLE) in verdict.codes, (text, verdict.codes)


@pytest.mark.parametrize("command", SECURITY_BANS[::3])
def test_security_bans_hold_as_check_step_and_rollback(command: str) -> None:
    as_check = validate(plan(necessary_checks=[_check(command)]), CTX)
    as_step = validate(plan(command_plan=[step("s1", command)], rollback_plan=[]), CTX)
    as_rollback = validate(plan(rollback_plan=[{"id": "restore_config", "description": "undo",
                                                "command": command}]), CTX)
    for result in (as_check, as_step, as_rollback):
        assert FindingCode.BANNED_COMMAND in _codes(result), command
        assert not result.ok


@pytest.mark.parametrize("command", NOT_BANNED)
def test_hardening_and_harmless_mentions_are_not_banned(command: str) -> None:
    assert not assess(command, CTX).banned, command
