"""Anna's own count of piped log lines (annactl.planning.piped_tally) and its view: the log
formats journalctl and dmesg print, messages grouped by their words (numbers aside), secrets
masked in the examples, and untrusted text shown inert."""

from __future__ import annotations

from rich.console import Console

from annactl.planning.piped_tally import tally
from annactl.ui.tally_view import tally_view

SHORT = "\n".join(
    [f"Nov 27 10:00:{i:02d} box kernel: usb 1-2: device descriptor read/64, error -71 ({i})"
     for i in range(30)]
    + ["-- Boot 0123456789abcdef --",
       "Nov 27 10:01:00 box sshd[812]: error: kex_exchange_identification: closed",
       "Nov 27 10:01:01 box sshd[813]: error: kex_exchange_identification: closed",
       "Nov 27 10:01:02 box app[1]: login with password=hunter2secret failed",
       "Nov 27 10:01:03 box app[1]: token ghp_abcdefghijklmnopqrstuvwxyz0123 rejected"])


def test_journal_lines_are_counted_by_program_and_kind() -> None:
    counted = tally(SHORT)
    assert counted is not None
    assert (counted.lines, counted.log_lines, counted.programs, counted.kinds) == (34, 34, 3, 4)
    first, second = counted.top[:2]
    assert (first.count, first.program) == (30, "kernel")
    assert first.example == "usb 1-2: device descriptor read/64, error -71 (0)"
    assert (second.count, second.program) == (2, "sshd")  # the pid is not the program


def test_examples_are_masked() -> None:
    counted = tally(SHORT)
    assert counted is not None
    shown = " ".join(k.example for k in counted.top)
    assert "hunter2secret" not in shown and "password=***" in shown
    assert "ghp_abcdefghijklmnopqrstuvwxyz0123" not in shown


def test_other_log_formats() -> None:
    iso = "2026-11-27T10:00:01+0100 box systemd[1]: Failed to start foo.service.\n" * 3
    precise = "Nov 27 10:00:01.123456 box kernel: EXT4-fs error (device sda1)\n" * 2
    dmesg = "[   12.345678] ata1.00: failed command: READ FPDMA QUEUED\n" * 4
    for text, program, count in ((iso, "systemd", 3), (precise, "kernel", 2),
                                 (dmesg, "kernel", 4)):
        counted = tally(text)
        assert counted is not None, text
        assert (counted.top[0].program, counted.top[0].count) == (program, count)


def test_text_that_is_not_a_log_has_no_count() -> None:
    assert tally("just some words\nand more words\n") is None
    assert tally("") is None
    # fewer than half the lines in a log format: not a log
    assert tally("a\nb\nc\nNov 27 10:00:00 box kernel: x\n") is None
    assert tally("-- No entries --\n") is None


def test_the_top_is_bounded_and_ties_keep_the_order_seen() -> None:
    text = "".join(f"Nov 27 10:00:00 box p{i}: message {chr(97 + i)}\n" for i in range(9))
    counted = tally(text)
    assert counted is not None and counted.kinds == 9 and len(counted.top) == 5
    assert [k.program for k in counted.top] == ["p0", "p1", "p2", "p3", "p4"]


def test_the_view_shows_untrusted_text_inert_and_fits_sixty_columns() -> None:
    hostile = ("Nov 27 10:00:00 box app[1]: \x1b]0;owned\x07[bold red]LOOK[/] "
               "\x1b[2Jcleared " + "x" * 200 + "\n")
    counted = tally(hostile * 2 + SHORT)
    assert counted is not None
    console = Console(width=60, record=True, file=open("/dev/null", "w"),  # noqa: SIM115
                      color_system="truecolor")
    console.print(tally_view(counted))
    raw = console.export_text(styles=True, clear=False)
    assert "\x1b]0;" not in raw and "\x1b[2J" not in raw
    text = console.export_text()
    assert "[bold red]LOOK[/]" in text  # markup shown literally
    words = " ".join(text.split())
    assert "(a count, not a diagnosis): 36 of 36 lines are log lines" in words
    assert "30× kernel usb 1-2" in words and "2× app" in words
    assert max(len(line) for line in text.splitlines()) <= 60
