"""Storage redaction (seed 001 "store packets after a redaction policy"): attacker variants."""

from __future__ import annotations

import json

import pytest

from anna_common.redact import MASK, redact, redact_value

SECRET = "hunter2xyz"

LEAKS = [
    f"password={SECRET}",
    f"PASSWORD = \"{SECRET}\"",
    f"Password: '{SECRET}'",
    f"DB_PASSWORD={SECRET}",
    f"export MYSQL_PWD={SECRET}",
    f"aws_secret_access_key = {SECRET}",
    f"api_key={SECRET}&user=me",
    f"apiKey:{SECRET}",
    f"X-Api-Key: {SECRET}",
    f"GITHUB_TOKEN={SECRET}",
    f"client_secret%3D{SECRET}",
    f"https://host/login?password%3D{SECRET}",
    f"curl -u 'me' --password {SECRET} https://x",
    f"mysql --password='{SECRET}' -u root",
    f"tool --db-password=\"{SECRET}\"",
    f"tool --api-key {SECRET}",
    f"tool --token={SECRET}",
    f"curl -H 'Authorization: Bearer {SECRET}' https://api",
    f"curl -H \"Authorization: token {SECRET}\" https://api",
    f"authorization:Basic {SECRET}",
    f"Proxy-Authorization: Negotiate {SECRET}",
    f"Cookie: session={SECRET}",
    f"use bearer {SECRET} please",
    f"Authorization: Basic {SECRET}=",
    f"https://admin:{SECRET}@example.com/x",
    f"ftp://:{SECRET}@host",
    f"echo 'root:{SECRET}' | chpasswd",
    f"echo bob:{SECRET} | sudo chpasswd",
    f"my password is {SECRET}",
    f"the passphrase was {SECRET}",
    f'{{"password": "{SECRET}"}}',
    f'{{\\"password\\": \\"{SECRET}\\"}}',
    f"-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn{SECRET}\n-----END OPENSSH PRIVATE KEY-----",
    f"-----BEGIN RSA PRIVATE KEY-----\nMIIE{SECRET}",
    f"password => '{SECRET}'",
    f"PASSWORD:\"{SECRET}\"",
    f"secret_key_base = {SECRET}",
    f"DB_PASSWORD_FILE_CONTENT={SECRET}",
    f"password%253D{SECRET}",
    f"Authorization%3A%20Bearer%20{SECRET}",
    f"X-Auth-Token: {SECRET}",
    f"PGPASSWORD={SECRET} psql -U app",
    f"sshpass -p {SECRET} ssh host",
    f"sshpass -p'{SECRET}' ssh host",
    f"mysql -u root -p{SECRET} db",
    f"curl -u admin:{SECRET} https://x",
    f"curl --user 'admin:{SECRET}' https://x",
    f"password: {SECRET}",
]

TOKENS = [
    "sk-proj-abcdefghijklmnop",
    "sk_live_abcdefghijkl1234",
    "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "github_pat_11ABCDEFG0123456789abcdef",
    "glpat-abcdefghij0123456789",
    "xoxb-1234567890-abcdefghij",
    "AKIAABCDEFGHIJKLMNOP",
    "AIzaSyA1234567890abcdefghijklmnopqrstuv",
    "hf_abcdefghijklmnopqrstuvwxyz",
    "npm_abcdefghijklmnopqrstuvwxyz",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
]

BENIGN = [
    "install firefox and set my wallpaper to /home/me/a.png",
    "how many tokens did that use?",
    '{"tokens_in": 120, "tokens_out": 40, "max_tokens": 2048}',
    "passwd alice",
    "pacman -S keepassxc",
    "ssh-keygen -t ed25519 -f ~/.ssh/id_ed25519",
    "tool --token-file /etc/app/token.path",
    "systemctl restart sshd",
    "mysql -u root -p db",
    "curl -u admin https://x",
    "sshpass -f ~/.pw ssh host",
    "show basic system information",
    "the bearer of bad news",
]


@pytest.mark.parametrize("text", LEAKS)
def test_named_secrets_are_masked(text: str) -> None:
    out = redact(text)
    assert SECRET not in out, out
    assert MASK in out


@pytest.mark.parametrize("token", TOKENS)
def test_token_shapes_are_masked_without_a_name(token: str) -> None:
    out = redact(f"here it is {token} ok")
    assert token not in out and MASK in out and out.endswith(" ok"), out


@pytest.mark.parametrize("text", BENIGN)
def test_benign_text_is_kept(text: str) -> None:
    assert redact(text) == text


def test_literal_secrets_and_idempotence() -> None:
    assert redact("key is q9-LITERAL-77", ("q9-LITERAL-77",)) == f"key is {MASK}"
    once = redact(LEAKS[1])
    assert redact(once) == once


def test_json_stays_json_after_redaction() -> None:
    doc = {"request": f"log in with password=\"{SECRET}\" and token: {SECRET}",
           "password": SECRET, "nested": [{"api_key": SECRET}], "tokens_in": 5,
           "password_set": True, "pin_password": 1234, "api_key_set": False}
    text = redact(json.dumps(doc))
    back = json.loads(text)
    assert SECRET not in text and back["tokens_in"] == 5
    value = redact_value(doc)
    assert SECRET not in json.dumps(value)
    assert value["password"] == MASK and value["nested"][0]["api_key"] == MASK


def test_flag_without_value_does_not_swallow_the_next_flag() -> None:
    assert redact("mysql --password --verbose") == "mysql --password --verbose"
