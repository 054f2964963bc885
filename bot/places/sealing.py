"""Secrets kept in the database sealed with PAPERBOT_SECRET_KEY: a hosted install's Slack tokens.

    seal = Seal(settings.secret_key)
    kept = seal.close("xoxb-…")       # what the database holds
    token = seal.open(kept)           # raises Unreadable for another key's or a damaged text

Fernet (cryptography): AES-128-CBC with an HMAC-SHA256, so a token read from a stolen backup without
the key is useless, and one changed in the database is refused rather than sent to Slack.
"""

from __future__ import annotations

from cryptography.fernet import Fernet, InvalidToken

#: How the operator makes a key (docs/operations.md says it too).
MAKE_A_KEY = 'python -c "from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())"'


class Unreadable(ValueError):
    """A sealed text that this key does not open: another key's, or changed."""


def valid_key(key: str) -> bool:
    try:
        Fernet(key.encode())
    except ValueError:
        return False
    return True


class Seal:
    def __init__(self, key: str):
        self._fernet = Fernet(key.encode())

    def close(self, secret: str) -> str:
        return self._fernet.encrypt(secret.encode()).decode()

    def open(self, sealed: str) -> str:
        try:
            return self._fernet.decrypt(sealed.encode()).decode()
        except InvalidToken:
            raise Unreadable("a sealed token this PAPERBOT_SECRET_KEY does not open") from None
