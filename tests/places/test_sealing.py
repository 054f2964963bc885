"""Tokens sealed with PAPERBOT_SECRET_KEY: unreadable without it, and a key changed without a new install."""

import pytest
from cryptography.fernet import Fernet

from bot.places.sealing import Seal, Unreadable


def test_a_sealed_token_opens_with_its_key_only():
    key, other = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    kept = Seal(key).close("xoxb-secret")
    assert "xoxb" not in kept and Seal(key).open(kept) == "xoxb-secret"
    with pytest.raises(Unreadable):
        Seal(other).open(kept)


def test_a_new_first_key_opens_the_old_tokens_and_seals_them_again():
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    kept = Seal(old).close("xoxb-secret")
    both = Seal(f"{new},{old}")
    assert both.open(kept) == "xoxb-secret"
    again = both.again(kept)
    assert again != kept and Seal(new).open(again) == "xoxb-secret"
    assert both.again(again) == again  # sealed with the first key already: left as it is
    with pytest.raises(Unreadable):
        Seal(new).again(Seal(Fernet.generate_key().decode()).close("x"))
