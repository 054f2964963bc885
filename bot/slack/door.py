"""Slack's requests at the HTTP door: the signature, replays, and the shape of what Bolt will read.

    door = SlackDoor(signing_secret)
    door.admit(environ)   # the parsed body, or raises http_door.Refused (401 or 400)

Bolt reads fields of a payload without checking their types (an `event` that is a list, a `view`
that is a string) and answers a 500 with a traceback; every field it or paperbot's listeners
read is checked here first, after the signature, so that a malformed request is a 400.
"""

from __future__ import annotations

import hashlib
import hmac
import io
import json
import re
import time
from collections.abc import Callable
from urllib.parse import parse_qsl

from bot.web.http_door import Refused, ReplayWindow, fresh_timestamp, read_body

_SIGNATURE = re.compile(r"v0=[0-9a-f]{64}")

STR, DICT, LIST, OPTIONAL_STR = (str,), (dict,), (list,), (str, type(None))
#: Fields that Bolt or a listener reads of a payload (and of the event, message or authorization
#: inside it, which Bolt reads alike), and the types Slack sends them in.
_FIELDS: dict[str, tuple[type, ...]] = {
    "type": STR,
    "event": DICT,
    "view": DICT,
    "container": DICT,
    "message": DICT,
    "previous_message": DICT,
    "item": DICT,
    "assistant_thread": DICT,
    "function_data": DICT,
    "tokens": DICT,
    "authorizations": LIST,
    "actions": LIST,
    "user": (dict, str),
    "team": (dict, str, type(None)),
    "enterprise": (dict, str, type(None)),
    "channel": (dict, str),
    "callback_id": STR,
    "action_id": STR,
    "response_url": STR,
    "trigger_id": STR,
    "user_id": STR,
    "channel_id": STR,
    "channel_name": STR,
    "team_id": OPTIONAL_STR,
    "enterprise_id": OPTIONAL_STR,
    "event_id": STR,
    "tab": STR,
    "is_ext_shared_channel": (bool,),
    "is_enterprise_install": (bool, type(None)),
    "user_team": OPTIONAL_STR,
    "app_installed_team_id": OPTIONAL_STR,
}
#: Fields read inside the objects above, when they are objects.
_INSIDE: dict[str, dict[str, tuple[type, ...]]] = {
    "user": {"id": STR, "team_id": OPTIONAL_STR},
    "team": {"id": STR, "enterprise_id": OPTIONAL_STR},
    "enterprise": {"id": STR},
    "channel": {"id": STR, "name": STR},
    "container": {"type": STR, "channel_id": STR, "message_ts": STR, "view_id": STR},
    "view": {"id": STR, "callback_id": STR, "private_metadata": STR, "team_id": OPTIONAL_STR, "state": DICT},
    "function_data": {"execution_id": STR},
}
#: The objects inside a payload that Bolt reads as it reads the payload itself.
_NESTED = ("event", "message", "previous_message", "item", "assistant_thread")
#: What each kind of payload must carry.
_REQUIRED: dict[str, dict[str, tuple[type, ...]]] = {
    "block_actions": {"user": DICT, "actions": LIST},
    "view_submission": {"user": DICT, "view": DICT},
    "view_closed": {"user": DICT, "view": DICT},
    "block_suggestion": {"user": DICT, "action_id": STR},
    "shortcut": {"user": DICT, "callback_id": STR},
    "message_action": {"user": DICT, "callback_id": STR},
    "event_callback": {"event": DICT},
    "url_verification": {"challenge": STR},
}


class SlackDoor:
    """Verifies Slack's signature (once per signature) and the payload's shape, before Bolt sees it."""

    def __init__(self, signing_secret: str, window: ReplayWindow | None = None, clock: Callable[[], float] = time.time):
        self.secret = signing_secret.encode()
        self.window = window if window is not None else ReplayWindow()
        self.clock = clock

    def admit(self, environ) -> dict:
        """The request's payload as Bolt will read it; Refused(401) for a missing, malformed, wrong,
        stale or replayed signature, Refused(400) for a body of a shape Slack does not send."""
        try:
            body = read_body(environ)
            signature = environ.get("HTTP_X_SLACK_SIGNATURE")
            timestamp = self.verify(environ.get("HTTP_X_SLACK_REQUEST_TIMESTAMP"), signature, body)
            if not self.window.first_time(signature, timestamp):
                raise Refused(401, "one already used: a replay")
            payload = parse(body, environ.get("CONTENT_TYPE"))
        except Refused as refusal:
            said = "without a valid Slack signature" if refusal.status == 401 else "with a malformed body"
            raise Refused(refusal.status, f"{said} ({refusal})") from None
        if "command" in payload and b"payload" in body:
            self._spell_out(environ, body)
        return payload

    def _spell_out(self, environ, body: bytes) -> None:
        """Hand Bolt a slash command whose text says "payload" (`/paper search payload`) with the
        word percent-encoded, signed afresh: Bolt takes any form containing it for an interactive
        payload, finds none and answers 404. The form's values are unchanged once decoded."""
        spelled = body.replace(b"payload", b"p%61yload")
        timestamp = environ["HTTP_X_SLACK_REQUEST_TIMESTAMP"]
        digest = hmac.new(self.secret, b"v0:" + timestamp.encode() + b":" + spelled, hashlib.sha256).hexdigest()
        environ["wsgi.input"] = io.BytesIO(spelled)
        environ["CONTENT_LENGTH"] = str(len(spelled))
        environ["HTTP_X_SLACK_SIGNATURE"] = "v0=" + digest

    def verify(self, timestamp: str | None, signature: str | None, body: bytes) -> int:
        """The request's timestamp, if its signature is Slack's and fresh; else Refused(401)."""
        signed = fresh_timestamp(timestamp, signature, _SIGNATURE, self.clock())
        message = b"v0:" + signed.timestamp.encode() + b":" + body
        expected = "v0=" + hmac.new(self.secret, message, hashlib.sha256).hexdigest()
        if not hmac.compare_digest(expected, signed.signature):
            raise Refused(401, "a wrong one")
        return signed.stamp


def parse(raw: bytes, content_type: str | None) -> dict:
    """The body parsed as Bolt parses it (JSON, a form, or a form's `payload` of JSON), checked for
    the fields Bolt and the listeners read; Refused(400) if Slack would not send it."""
    try:
        body = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise Refused(400, "a body that is not UTF-8") from None
    kind = (content_type or "").split(";")[0].strip().lower()
    if kind == "application/json" or body.startswith("{"):  # as Bolt decides
        payload = _json(body, "a JSON body")
        _check_kind(payload)
        return payload
    if kind not in ("application/x-www-form-urlencoded", ""):
        raise Refused(400, f"a body of type {kind[:40]!r}, neither a form nor JSON")
    form = dict(parse_qsl(body, keep_blank_values=True))
    if "payload" in form:
        payload = _json(form["payload"], "a form's payload")
        _check_kind(payload)
        return payload
    if form.get("ssl_check"):
        return form
    if not form.get("command", "").startswith("/") or not form.get("user_id"):
        raise Refused(400, "a slash command without its command or user_id")
    return form


def _json(text: str, what: str) -> dict:
    try:
        payload = json.loads(text)
    except (ValueError, RecursionError):
        raise Refused(400, f"{what} that is not JSON") from None
    if not isinstance(payload, dict):
        raise Refused(400, f"{what} that is not a JSON object")
    return payload


def _check_kind(payload: dict) -> None:
    kind = payload.get("type")
    if not isinstance(kind, str):
        raise Refused(400, "a payload without a type")
    kind = re.sub(r"[^\w.-]", "?", kind[:40])  # said in the log: one line, whatever it holds
    for field, types in _REQUIRED.get(kind, {}).items():
        if not isinstance(payload.get(field), types):
            raise Refused(400, f"{kind}: {field} is not a {types[0].__name__}")
    if kind == "block_actions" and not payload["actions"]:
        raise Refused(400, "block_actions: no actions")
    if kind in ("view_submission", "view_closed") and not isinstance(payload["view"].get("callback_id"), str):
        raise Refused(400, f"{kind}: the view has no callback_id")
    if kind == "event_callback" and not isinstance(payload["event"].get("type"), str):
        raise Refused(400, "event_callback: the event has no type")
    _check_object(payload, kind, "payload", 0)


def _check_object(obj: dict, kind: str, where: str, depth: int) -> None:  # noqa: C901 (a check per field Slack sends)
    """The fields of `obj` that Bolt and the listeners read are of the types Slack sends."""
    if depth > 8:  # an event inside a message inside an event...: nothing Slack sends nests so
        raise Refused(400, f"{kind}: nested too deep")
    for name, types in _FIELDS.items():
        if name in obj and not isinstance(obj[name], types):
            _wrong(kind, f"{where}.{name}", obj[name])
    for name, fields in _INSIDE.items():
        inner = obj.get(name)
        if isinstance(inner, dict):
            for field, types in fields.items():
                if field in inner and not isinstance(inner[field], types):
                    _wrong(kind, f"{where}.{name}.{field}", inner[field])
    state = (obj.get("view") or {}).get("state") if isinstance(obj.get("view"), dict) else None
    if state is not None:
        values = state.get("values", {})
        if not isinstance(values, dict) or not all(
            isinstance(block, dict) and all(isinstance(v, dict) for v in block.values()) for block in values.values()
        ):
            raise Refused(400, f"{kind}: the view's state is not blocks of inputs")
    for action in obj.get("actions", []):
        if not isinstance(action, dict) or not isinstance(action.get("action_id"), str):
            raise Refused(400, f"{kind}: an action without an action_id")
        for field in ("value", "type", "block_id"):
            if field in action and not isinstance(action[field], str):
                _wrong(kind, f"{where}.actions[].{field}", action[field])
    for authorization in obj.get("authorizations", []):
        if not isinstance(authorization, dict):
            raise Refused(400, f"{kind}: an authorization that is not an object")
        _check_object(authorization, kind, f"{where}.authorizations[]", depth + 1)
    for name in _NESTED:
        if isinstance(obj.get(name), dict):
            _check_object(obj[name], kind, f"{where}.{name}", depth + 1)


def _wrong(kind: str, where: str, value) -> None:
    raise Refused(400, f"{kind}: {where} is a {type(value).__name__}")
