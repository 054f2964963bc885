"""Discord's requests at the HTTP door: the Ed25519 signature, replays, and the interaction's shape.

    door = DiscordDoor(public_key_hex)
    interaction = door.admit(environ)   # the parsed body, or raises http_door.Refused (401 or 400)

Discord signs timestamp + body with the application's key and keeps probing the endpoint with
bad signatures: anything unsigned, wrongly signed, stale or replayed is a 401; a signed body of a
shape Discord does not send is a 400, checked here so that nothing behind the door fails on it.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable

from nacl.exceptions import BadSignatureError
from nacl.signing import VerifyKey

from bot.web.http_door import Refused, ReplayWindow, fresh_timestamp, read_body

_SIGNATURE = re.compile(r"[0-9a-fA-F]{128}")
_SNOWFLAKE = re.compile(r"[0-9]{1,21}")

PING, COMMAND, COMPONENT, AUTOCOMPLETE, MODAL_SUBMIT = 1, 2, 3, 4, 5


class DiscordDoor:
    def __init__(self, public_key: str, window: ReplayWindow | None = None, clock: Callable[[], float] = time.time):
        self.key = VerifyKey(bytes.fromhex(public_key))
        self.window = window if window is not None else ReplayWindow()
        self.clock = clock

    def admit(self, environ) -> dict:
        """The interaction, if Discord signed it and it has the shape Discord sends."""
        try:
            body = read_body(environ)
            signature = environ.get("HTTP_X_SIGNATURE_ED25519")
            timestamp = self.verify(environ.get("HTTP_X_SIGNATURE_TIMESTAMP"), signature, body)
            if not self.window.first_time(signature.lower(), timestamp):
                raise Refused(401, "one already used: a replay")
            return parse(body)
        except Refused as refusal:
            said = "without a valid Discord signature" if refusal.status == 401 else "with a malformed body"
            raise Refused(refusal.status, f"{said} ({refusal})") from None

    def verify(self, timestamp: str | None, signature: str | None, body: bytes) -> int:
        signed = fresh_timestamp(timestamp, signature, _SIGNATURE, self.clock())
        try:
            self.key.verify(signed.timestamp.encode() + body, bytes.fromhex(signed.signature))
        except BadSignatureError:
            raise Refused(401, "a wrong one") from None
        return signed.stamp


def parse(raw: bytes) -> dict:
    """The interaction, checked for the fields paperbot reads; Refused(400) otherwise."""
    try:
        interaction = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise Refused(400, "a body that is not JSON") from None
    return check(interaction)


def check(interaction) -> dict:  # noqa: C901 (a check per field Discord sends)
    """`interaction` (from a request's body, or the Gateway's INTERACTION_CREATE), if it has the
    fields paperbot reads in the types Discord sends; Refused(400) otherwise."""
    if not isinstance(interaction, dict):
        raise Refused(400, "a body that is not a JSON object")
    kind = interaction.get("type")
    if type(kind) is not int or kind not in (PING, COMMAND, COMPONENT, AUTOCOMPLETE, MODAL_SUBMIT):
        raise Refused(400, "an interaction of no known type")
    if kind == PING:
        return interaction
    for name in ("id", "token", "application_id"):
        if not isinstance(interaction.get(name), str) or not interaction[name]:
            raise Refused(400, f"an interaction without its {name}")
    if not _SNOWFLAKE.fullmatch(interaction["id"]) or not _SNOWFLAKE.fullmatch(interaction["application_id"]):
        raise Refused(400, "an interaction whose id is not a snowflake")
    if not re.fullmatch(r"[A-Za-z0-9._-]{1,500}", interaction["token"]):
        raise Refused(400, "an interaction token of a shape Discord does not send")
    if not isinstance(interaction.get("data"), dict):
        raise Refused(400, "an interaction without data")
    user = user_of(interaction)
    if user is None:
        raise Refused(400, "an interaction without its user")
    member = interaction.get("member")
    if member is not None:
        if not isinstance(member, dict):
            raise Refused(400, "a member that is not an object")
        perms = member.get("permissions", "0")
        if not isinstance(perms, str) or not perms.isascii() or not perms.isdigit() or len(perms) > 30:
            raise Refused(400, "member permissions that are not a number")
    data = interaction["data"]
    if kind in (COMMAND, AUTOCOMPLETE):
        if not isinstance(data.get("name"), str):
            raise Refused(400, "a command without its name")
        _check_options(data.get("options", []), 0)
    if kind == COMPONENT:
        if not isinstance(data.get("custom_id"), str) or len(data["custom_id"]) > 100:
            raise Refused(400, "a component without its custom_id")
        if "message" in interaction and not isinstance(interaction["message"], dict):
            raise Refused(400, "a message that is not an object")
    if kind == MODAL_SUBMIT and (
        not isinstance(data.get("custom_id"), str) or not isinstance(data.get("components"), list)
    ):
        raise Refused(400, "a form without its custom_id or inputs")
    return interaction


def _check_options(options, depth: int) -> None:
    if depth > 3 or not isinstance(options, list) or len(options) > 25:
        raise Refused(400, "options of a shape Discord does not send")
    for o in options:
        if not isinstance(o, dict) or not isinstance(o.get("name"), str) or type(o.get("type")) is not int:
            raise Refused(400, "an option without its name or type")
        if "options" in o:
            _check_options(o["options"], depth + 1)
        value = o.get("value")
        if value is not None and not isinstance(value, str | int | float | bool):
            raise Refused(400, "an option value of a shape Discord does not send")
        if isinstance(value, str) and len(value) > 6000:
            raise Refused(400, "an option value longer than Discord sends")


def user_of(interaction: dict) -> str | None:
    """Who acted: `member.user.id` in a server, `user.id` in a DM."""
    member = interaction.get("member")
    holder = member.get("user") if isinstance(member, dict) else interaction.get("user")
    if not isinstance(holder, dict):
        return None
    uid = holder.get("id")
    return uid if isinstance(uid, str) and _SNOWFLAKE.fullmatch(uid) else None
