"""The forty held-out requests of docs/templates.md: which template answers each, and what
it says (read each answer by hand; the verdicts are in the doc's table).

Run: ``PYTHONPATH=. .venv/bin/python bench/templates_heldout.py``
"""

from anna_common.distro import context_from_telemetry
from annactl.planning import templates
from tests.planner.conftest import make_telemetry

HOME = "/home/user"
REQUESTS = """how is my system?
is my computer ok
why is my disk full?
what is taking up my disk space
how much space do i have left
show disk usage
show failed services
what services failed?
what is using my memory?
what's eating my RAM
which process is using the most cpu?
why is my cpu usage so high
install htop
install ripgrep
install neovim please
remove nginx
uninstall vlc
clean the package cache
restart the ssh service
restart nginx
enable docker
enable the firewall
start bluetooth
restart NetworkManager
change my wallpaper to ~/Pictures/fjord.png
set my background to ~/bg.jpg
add an alias ll='ls -la' to my bashrc
add export EDITOR=nvim to my zshrc
update my system
upgrade all packages
what kernel am i running?
show me the last boot errors
turn off bluetooth
install google-chrome
what is my ip address
free up some memory
check my temperatures
list my largest files
set my wallpaper to https://example.com/a.png
restart sshd please""".splitlines()


def main() -> None:
    """Print each request's template, confidence, notes and steps."""
    snapshot = make_telemetry(extra_packages=("openssh", "networkmanager", "bluez", "neovim"))
    context = context_from_telemetry(snapshot, HOME)
    for number, request in enumerate(REQUESTS, 1):
        found = templates.match(request, snapshot, context=context, home=HOME)
        if found is None:
            print(f"{number}. {request} -> no template")
            continue
        print(f"{number}. {request} -> {found.template} confident={found.confident} "
              f"refused={found.rejected}")
        if found.plan is not None:
            print("   notes:", found.plan.notes_for_user[:300])
            for step in found.plan.command_plan:
                print("   step:", step.command)


if __name__ == "__main__":
    main()
