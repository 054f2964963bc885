"""How the verbs reach Slack: its settings, its transport and its server (see bot/platforms.py)."""

from __future__ import annotations

import importlib

from bot.platforms import Adapter
from bot.slack.settings import SlackSettings

# Every verb loads each platform's adapter: slack_sdk is imported only by the verbs that reach Slack.


def _transport(settings: SlackSettings):
    from bot.slack.client import SlackTransport, make_client  # noqa: PLC0415 (start-up time, above)

    return SlackTransport(make_client(settings, retries=False))


def _member_names(settings: SlackSettings):
    """users.info: the member's display name, else their full name (scope users:read)."""
    from bot.slack.client import call, make_client  # noqa: PLC0415 (start-up time, above)

    client = make_client(settings, retries=False, timeout=5)  # a page waits for it: no retries, a short wait

    def ask(member: str) -> str | None:
        user = call(client.users_info, user=member)["user"]
        profile = user.get("profile") or {}
        return profile.get("display_name") or profile.get("real_name") or user.get("real_name") or user.get("name")

    return ask


def _place_settings(settings: SlackSettings, places, place: str, *, sending: bool) -> SlackSettings:
    """A hosted place's settings (hosted.place_settings); `sending`: with the token its install keeps,
    unsealed with PAPERBOT_SECRET_KEY and rotated first when due, as `run` does."""
    from bot.places.registry import UnknownPlace  # noqa: PLC0415 (start-up time, above)
    from bot.slack.hosted import place_settings  # noqa: PLC0415

    if not sending:
        return place_settings(settings, place, "")
    from slack_sdk import WebClient  # noqa: PLC0415
    from slack_sdk.oauth.token_rotation import TokenRotator  # noqa: PLC0415

    from bot.places.sealing import Seal  # noqa: PLC0415
    from bot.slack.installs import SlackInstalls  # noqa: PLC0415

    settings.require("PAPERBOT_SECRET_KEY")
    assert settings.secret_key is not None  # required just above
    rotator = None
    if settings.client_id and settings.client_secret:
        client = WebClient(base_url=settings.api_url, timeout=10)
        rotator = TokenRotator(client_id=settings.client_id, client_secret=settings.client_secret, client=client)
    token = SlackInstalls(places, Seal(settings.secret_key), rotator).token(place)
    if token is None:
        raise UnknownPlace(
            f"place {place} has no Slack token: the app is not installed there now (or PAPERBOT_SECRET_KEY "
            "is not the key that sealed it)"
        )
    return place_settings(settings, place, token)


ADAPTER = Adapter(
    name="Slack",
    token="SLACK_BOT_TOKEN",
    settings=SlackSettings,
    wanted=lambda environ: True,
    transport=_transport,
    serve=lambda: importlib.import_module("bot.slack.serve"),
    quiet_loggers=("slack_sdk.web", "slack_sdk.webhook"),
    fallback=True,
    member_names=_member_names,
    installs="SLACK_CLIENT_ID",
    place_settings=_place_settings,
)
