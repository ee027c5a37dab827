"""Storage redaction: secrets never reach a file Anna writes (history, traces, journal).

Seed 001 asks for packets to be stored "after applying a storage redaction
policy". :func:`redact` is that policy for every stored text: conversation
titles and packets (client history), traces, and the request text the daemon
journals. It is shared by client and daemon, so it lives in ``anna_common``.

What is masked (each a *class*, matched in its spellings, not one example):

* ``NAME=value`` / ``NAME: value`` / ``"NAME": "value"`` / ``NAME = 'a b'`` where
  NAME contains a secret word (password, passwd, pwd, passphrase, secret, token,
  api key, access key, private key, credential), in any case and with any
  prefix (``DB_PASSWORD``, ``aws_secret_access_key``), URL-encoded separators
  (``password%3Dx``) included;
* command-line flags ``--password x``, ``--db-password=x``, ``--api-key 'x'``;
* ``Authorization:`` / ``Proxy-Authorization:`` / ``Cookie:`` header values,
  and ``Bearer <token>`` / ``Basic <token>`` anywhere;
* passwords in URLs (``scheme://user:secret@host``);
* PEM private-key blocks (even when cut off before their END line);
* well-known token shapes: OpenAI ``sk-``, GitHub ``ghp_``/``github_pat_``,
  GitLab ``glpat-``, Slack ``xox?-``, AWS ``AKIA``, Google ``AIza``, Hugging Face
  ``hf_``, npm ``npm_``, Stripe ``sk_live_``, JWTs;
* ``user:password`` piped into ``chpasswd``, and "my password is x" prose.

Redaction over-masks rather than under-masks: a stored text is for humans and
audits, never executed, so a masked harmless word costs nothing.
"""

from __future__ import annotations

import re
from typing import Any

MASK = "***"
"""What a secret is replaced with."""

_WORD = (r"(?:pass(?:word|wd|phrase)|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|"
         r"private[_-]?key|credentials?|auth[_-]?key)")
_QUOTED = r"\"(?:[^\"\\\n]|\\.)*\"|'[^'\n]*'|\\\"(?:[^\"\\\n])*\\\""
_BARE = r"[^\s\"',&;)}\]]+"
_SEP = r"(?:\\?\"|')?\s*(?:=>|[:=]|%(?:25)?3[dDaA])\s*"
# secret_key_base, password_file: a suffix after the strong words (never after "token",
# whose suffixed names are counters: tokens_in, max_tokens)
_SUFFIX = r"(?:(?:(?<=secret)|(?<=ssword)|(?<=sswd)|(?<=phrase))[_.-][A-Za-z0-9_.-]*)?"

_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # PEM private keys first: their body would otherwise be cut into pieces.
    (re.compile(r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY-----(?:.*?-----END[A-Z0-9 ]*PRIVATE KEY-----"
                r"|.*\Z)", re.S), f"-----PRIVATE KEY {MASK}-----"),
    # Authorization headers: the whole value (scheme and credentials) up to the line end.
    (re.compile(r"(?i)\b((?:proxy-)?authorization|cookie|set-cookie)(\\?[\"']?\s*(?::|%3A)\s*)"
                r"([^\n\"'\\&]+)"), rf"\1\2{MASK}"),
    # a bearer token anywhere ("Basic" only after Authorization:, above: it is an English word)
    (re.compile(r"(?i)(?<![A-Za-z])(bearer)(\s+|%20|\+)[A-Za-z0-9._~+/=%-]{8,}"),
     rf"\1\2{MASK}"),
    # NAME=value where NAME carries a secret word (prefixes such as DB_ or aws_ included).
    (re.compile(rf"(?i)(?<![A-Za-z0-9])([A-Za-z0-9_.-]*?{_WORD}{_SUFFIX})({_SEP})"
                rf"({_QUOTED}|{_BARE})"), "value"),
    # --password x / --db-password=x / -password 'x y'
    (re.compile(rf"(?i)(?<![\w-])(--?[A-Za-z0-9-]*?{_WORD})(\s+|=)(?!-)({_QUOTED}|{_BARE})"),
     "value"),
    # sshpass -p secret; mysql -psecret; curl -u user:secret
    (re.compile(r"(\bsshpass\b(?:\s+-[A-Za-z]\S*)*?\s+-p\s*)(\S+)"), rf"\1{MASK}"),
    (re.compile(r"(\b(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n|;&]*?\s-p)([^\s-]\S*)"),
     rf"\1{MASK}"),
    (re.compile(r"(\bcurl\b[^\n|;&]*?\s(?:-u|--user)[\s=]*['\"]?[^\s:'\"]*):([^\s'\"]+)"),
     rf"\1:{MASK}"),
    # scheme://user:secret@host
    (re.compile(r"([a-zA-Z][a-zA-Z0-9+.-]*://[^/\s:@]*):[^/\s@]+@"), rf"\1:{MASK}@"),
    # user:password | chpasswd
    (re.compile(r"(?<![\w/])([a-z_][a-z0-9_-]*):[^\s'\":]+(['\"]?\s*\|\s*(?:sudo\s+)?chpasswd)"),
     rf"\1:{MASK}\2"),
    # "my password is hunter2"
    (re.compile(r"(?i)\b(pass(?:word|phrase)|pin)(\s+(?:is|was)\s+)(\S+)"), rf"\1\2{MASK}"),
    # Token shapes that need no name next to them.
    (re.compile(r"\b(sk|rk)_(live|test)_[A-Za-z0-9]{8,}"), rf"\1_\2_{MASK}"),
    (re.compile(r"\bsk-[A-Za-z0-9_-]{4,}"), f"sk-{MASK}"),
    (re.compile(r"\b(gh[pousr]_|github_pat_|glpat-|xox[abprs]-|hf_|npm_)[A-Za-z0-9_-]{8,}"),
     rf"\1{MASK}"),
    (re.compile(r"\b(AKIA|ASIA)[0-9A-Z]{16}\b"), rf"\1{MASK}"),
    (re.compile(r"\bAIza[0-9A-Za-z_-]{30,}"), f"AIza{MASK}"),
    (re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"), MASK),
)


_SECRET_KEY = re.compile(rf"(?i)^[A-Za-z0-9_.-]*?{_WORD}{_SUFFIX}$")
_LITERAL = re.compile(r"^(?:true|false|null|-?\d+(?:\.\d+)?)$")


def _masked_value(found: re.Match[str]) -> str:
    """NAME, separator, then the value masked with its quotes kept (stored JSON stays JSON)."""
    value = found.group(3)
    if _LITERAL.match(value):  # keep JSON valid: `"password_set": true` → `"***"`
        return f'{found.group(1)}{found.group(2)}"{MASK}"'
    for quote in ('\\"', '"', "'"):
        if len(value) >= 2 * len(quote) and value.startswith(quote) and value.endswith(quote):
            return f"{found.group(1)}{found.group(2)}{quote}{MASK}{quote}"
    return f"{found.group(1)}{found.group(2)}{MASK}"


def redact(text: str, secrets: tuple[str, ...] = ()) -> str:
    """``text`` with literal ``secrets`` and every secret-looking value replaced by ``***``."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, MASK)
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(_masked_value if replacement == "value" else replacement, text)
    return text


def redact_private_keys(text: str) -> str:
    """``text`` with PEM private-key blocks masked (the one secret that spans lines; fast on
    a megabyte, so a caller can mask them all before cutting out what it keeps and
    masking the rest in that, :mod:`annactl.planning.piped`)."""
    pattern, replacement = _PATTERNS[0]
    return pattern.sub(replacement, text)


def redact_value(value: Any, secrets: tuple[str, ...] = ()) -> Any:
    """:func:`redact` applied to every string in a JSON-like value (keys too)."""
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, dict):
        # {"password": "x"}: the name is the key, so the value is masked whole.
        return {redact(str(k), secrets): MASK if isinstance(v, str) and _SECRET_KEY.match(str(k))
                else redact_value(v, secrets) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_value(v, secrets) for v in value]
    return value
