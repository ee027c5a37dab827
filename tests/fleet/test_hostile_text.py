"""Plan text is untrusted: in an exported playbook it can neither add YAML structure nor be
templated by Ansible (Jinja ``{{ }}``, ``{% %}``, ``{# #}``) — in commands, checks,
rollback commands, descriptions, ids and goals, in both modes.

Parsed back with PyYAML, every untrusted string is exactly the plan's text and carries
the ``!unsafe`` tag; run by the real ansible-playbook, the hostile text reaches bash
verbatim and nothing it asks Jinja to do happens.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from annactl.commands.yamlout import Template, YamlError, dump, quote

from .plans import annotate_dict, plan_dict, playbook

yaml = pytest.importorskip("yaml")


class Unsafe(str):
    """A string that carried ``!unsafe``."""


class _Loader(yaml.SafeLoader):  # type: ignore[misc,name-defined]
    pass


_Loader.add_constructor("!unsafe", lambda loader, node: Unsafe(loader.construct_scalar(node)))


def load(text: str) -> Any:
    return yaml.load(text, Loader=_Loader)


def jinja_variants(d: Path) -> list[str]:
    """Texts that would run a command on the controller if Ansible templated them (double
    quotes only inside: the steps wrap them in single quotes for bash)."""
    return [
        f'{{{{ lookup("pipe", "touch {d}/pwned-lookup") }}}}',
        f'{{% set x = lookup("pipe", "touch {d}/pwned-set") %}}{{{{ x }}}}',
        f'{{{{ query("pipe", "touch {d}/pwned-query") }}}}',
        f'{{# a comment #}}{{{{lookup("pipe","touch {d}/pwned-tight")}}}}',
        f'{{%- for i in [1] -%}}{{{{ lookup("pipe","touch {d}/pwned-for") }}}}{{%- endfor -%}}',
        f'{{{{ "{{{{" }}}} lookup("pipe","touch {d}/pwned-nested") {{{{ "}}}}" }}}}',
    ]


YAML_INJECTIONS = [
    "plain\n- hosts: all\n  tasks:\n    - ansible.builtin.shell: touch /tmp/anna-pwned",
    'quote" and: colon # hash',
    "!!python/object/apply:os.system ['touch /tmp/anna-pwned']",
    "&anchor value *alias",
    "line\u2028separator\u2029para\x85nel\rcr\ttab",
    "\ufeffbom \u202eoverride \u200bzero-width \x1b[31mesc\x07",
    "--- \n...\n%YAML 1.1",
    "back\\slash \\n not a newline \\x41",
    "😀 astral \U0001F600",
]


@pytest.mark.parametrize("text", [*YAML_INJECTIONS, "{{ x }} {% if %} {# c #}"])
def test_quote_round_trips_every_text_as_one_line(text: str) -> None:
    doc = dump({"k": text, "t": Template("{{ ok }}")})
    body = doc.split("\n", 1)[1]
    assert len(body.strip().splitlines()) == 2
    loaded = load(doc)
    assert loaded["k"] == text and isinstance(loaded["k"], Unsafe)
    assert loaded["t"] == "{{ ok }}" and not isinstance(loaded["t"], Unsafe)


def test_lone_surrogate_is_refused() -> None:
    with pytest.raises(YamlError):
        quote("a\ud800b")


def test_odd_keys_are_refused() -> None:
    with pytest.raises(YamlError):
        dump({"a: b": 1})


def _hostile_plan(d: Path) -> Any:
    jinja = jinja_variants(d)
    steps = [(f"s{i}", f"printf '%s' '{text}' > {d}/out{i}.txt", "LOW")
             for i, text in enumerate(jinja)]
    steps.append(("boom", f"cp {d}/missing {d}/never", "LOW"))
    data = plan_dict(
        steps, checks=[("c0", f"echo '{jinja[0]}'")],
        rollback=[("u0", f"printf '%s' '{jinja[1]}' > {d}/undo0.txt")],
        rollback_ids={"s0": "u0"}, goal=YAML_INJECTIONS[0] + jinja[2])
    for i, step in enumerate(data["command_plan"]):
        step["description"] = YAML_INJECTIONS[i % len(YAML_INJECTIONS)] + jinja[3]
    data["command_plan"][1]["id"] = "id-" + jinja[4]
    return annotate_dict(data)


@pytest.mark.parametrize("mode", ["shell", "annad"])
def test_every_plan_string_is_unsafe_and_verbatim(tmp_path: Path, mode: str) -> None:
    plan = _hostile_plan(tmp_path)
    play = load(playbook(plan, mode))  # type: ignore[arg-type]
    assert isinstance(play, list) and len(play) == 1  # no injected play
    strings: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)
        elif isinstance(node, str):
            strings.append(node)

    walk(play)
    # a templated (not unsafe) string is one of Anna's own: it holds no plan text
    for s in strings:
        if not isinstance(s, Unsafe):
            assert "pwned" not in s and "hosts: all" not in s, s
    # all plan text is in the one !unsafe JSON text, exactly as the plan has it
    export = play[0]["vars"]["anna_export"]
    assert isinstance(export, Unsafe)
    import json

    data = json.loads(export)
    assert json.loads(data["plan"]) == plan.plan.model_dump(mode="json")
    assert data["digest"] == plan.digest
    # the only other unsafe strings are names, which never reach a shell
    for s in strings:
        if isinstance(s, Unsafe) and s is not export:
            assert s.startswith(("Anna", "check ", "step ", "undo ", "/", "0600", "file",
                                 ".anna-plan", "fleet", "run", "--", "anna_", "absent")), s


def test_ansible_never_templates_plan_text(tmp_path: Path, run_playbook) -> None:
    d = tmp_path / "scratch"
    d.mkdir()
    plan = _hostile_plan(d)
    ran = run_playbook(_write(tmp_path, playbook(plan, "shell")))
    assert ran.rc != 0  # the last step fails: the rescue ran the hostile undo too
    assert not list(d.glob("pwned*")), ran.out
    assert not Path("/tmp/anna-pwned").exists()
    for i, text in enumerate(jinja_variants(d)):
        # the steps ran verbatim (only s0 has an undo command, and it writes undo0.txt)
        assert (d / f"out{i}.txt").read_text() == text
    # s0's output was undone by its (hostile) rollback command, which ran verbatim
    assert (d / "undo0.txt").read_text() == jinja_variants(d)[1]


def test_ansible_writes_hostile_output_verbatim(tmp_path: Path, run_playbook) -> None:
    d = tmp_path / "scratch"
    d.mkdir()
    jinja = jinja_variants(d)
    plan = annotate_dict(plan_dict(
        [(f"s{i}", f"printf '%s' '{text}' > {d}/out{i}.txt", "LOW")
         for i, text in enumerate(jinja)], checks=[("c0", f"echo '{jinja[0]}'")]))
    ran = run_playbook(_write(tmp_path, playbook(plan, "shell")))
    assert ran.rc == 0, ran.out + ran.err
    assert not list(d.glob("pwned*"))
    for i, text in enumerate(jinja):
        assert (d / f"out{i}.txt").read_text() == text


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "play.yml"
    path.write_text(text)
    return path


def test_control_without_unsafe_ansible_would_template(tmp_path: Path, run_playbook) -> None:
    """The detector works: the same text written *without* ``!unsafe`` is templated by
    Ansible and creates the marker file (so the tests above could fail)."""
    d = tmp_path / "scratch"
    d.mkdir()
    text = jinja_variants(d)[0]
    play = [{"name": "control", "hosts": Template("all"), "gather_facts": False,
             "tasks": [{"ansible.builtin.shell": {"cmd": Template(f"printf '%s' '{text}'"),
                                                  "executable": "/bin/bash"}}]}]
    ran = run_playbook(_write(tmp_path, dump(play)))
    assert ran.rc == 0, ran.out + ran.err
    assert (d / "pwned-lookup").exists()
