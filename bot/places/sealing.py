"""Secrets kept in the database sealed with PAPERBOT_SECRET_KEY: a hosted install's Slack tokens.

PAPERBOT_SECRET_KEY may hold several keys, comma-separated: the first seals, each opens (cryptography's
MultiFernet), so a key is changed without a new install everywhere: put the new one first and the old
one after it; `run` seals every kept token again with the first at its start; then drop the old one.

    seal = Seal(settings.secret_key)
    kept = seal.close("xoxb-…")       # what the database holds
    token = seal.open(kept)           # raises Unreadable for another key's or a damaged text

Fernet (cryptography): AES-128-CBC with an HMAC-SHA256, so a token read from a stolen backup without
the key is useless, and one changed in the database is refused rather than sent to Slack.
"""

from __future__ import annotations

from cryptography.fernet import Fernet, InvalidToken, MultiFernet

#: How the operator makes a key (docs/hosting.md says it too).
MAKE_A_KEY = 'python -c "from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())"'


class Unreadable(ValueError):
    """A sealed text that this key does not open: another key's, or changed."""


def keys(setting: str) -> list[str]:
    """The keys PAPERBOT_SECRET_KEY holds, the sealing one first."""
    return [k.strip() for k in setting.split(",") if k.strip()]


class Seal:
    def __init__(self, key: str):
        every = [Fernet(k.encode()) for k in keys(key)]
        self._first = every[0]
        self._fernet = MultiFernet(every)

    def close(self, secret: str) -> str:
        return self._fernet.encrypt(secret.encode()).decode()

    def again(self, sealed: str) -> str:
        """`sealed` sealed with the first key, as it is when it was (Unreadable when no key opens it)."""
        try:
            self._first.decrypt(sealed.encode())
            return sealed
        except InvalidToken:
            pass
        try:
            return self._fernet.rotate(sealed.encode()).decode()
        except InvalidToken:
            raise Unreadable("a sealed token this PAPERBOT_SECRET_KEY does not open") from None

    def open(self, sealed: str) -> str:
        try:
            return self._fernet.decrypt(sealed.encode()).decode()
        except InvalidToken:
            raise Unreadable("a sealed token this PAPERBOT_SECRET_KEY does not open") from None
