"""Settings, read once at start and checked before anything runs.

    settings = Settings.load(os.environ, dotenv=".env")
    settings.require("SLACK_BOT_TOKEN", "PAPERBOT_CHANNEL")   # per verb

A missing or malformed value raises :class:`SettingError`, whose message is the
one line the operator sees: the setting's name and what is wrong with it. A
mistake in the schedule must show up when the process starts, not at 9 a.m. on
Monday, so everything that can be checked here is.
"""

from __future__ import annotations

import difflib
import io
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, time
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from dotenv import dotenv_values
from dotenv.parser import parse_stream

from bot.calendar import Group, Meeting, PostSchedule, ScheduleError

#: Every setting, with its default and its one-line meaning. `.env.example`,
#: README and a test are kept in step with this table.
SETTINGS: dict[str, tuple[str | None, str]] = {
    "SLACK_BOT_TOKEN": (None, "bot token (xoxb-...): needed by run, post-week and remind"),
    "SLACK_APP_TOKEN": (None, "app-level token (xapp-...): when set, run uses Socket Mode"),
    "SLACK_SIGNING_SECRET": (None, "verifies Slack's HTTP requests: needed by run in HTTP mode"),
    "SLACK_API_URL": ("https://slack.com/api/", "Web API base URL (a proxy or a local test server)"),
    "PORT": ("3000", "HTTP mode port; Slack's request URL is http(s)://HOST:PORT/slack/events"),
    "PAPERBOT_DB": ("data/paperbot.db", "the SQLite file"),
    "PAPERBOT_CHANNEL": (None, "channel ID that gets the weekly post and schedule changes"),
    "PAPERBOT_SCHEDULE": ("0 9 * * mon", "when the weekly post goes out: a 5-field crontab"),
    "PAPERBOT_TIMEZONE": ("UTC", "IANA zone of the schedule, weeks and dates"),
    "PAPERBOT_MEETING": (None, "when the group meets, e.g. 'thu 16:00' (default: the post's time)"),
    "PAPERBOT_REMIND_DAYS": ("2", "days before the meeting that the presenter is reminded"),
    "PAPERBOT_ADMINS": ("", "comma-separated Slack user IDs with admin rights"),
    "PAPERBOT_FOCUS_TAG": (None, "when set, papers of the week are drawn from this tag"),
}

_USER_ID = re.compile(r"^[UW][A-Z0-9]+$")
_CHANNEL_ID = re.compile(r"^[CGD][A-Z0-9]+$")


class SettingError(ValueError):
    """A setting is missing or malformed; str() is the line to show."""

    def __init__(self, name: str, problem: str):
        super().__init__(f"{name}: {problem}")
        self.name = name


#: A name in `.env` this close to one of ours (difflib's ratio) is taken for a misspelling of it:
#: SLACK_API_ULR, SLACK_BOT_TOKN; another tool's SLACK_USER_TOKEN or SLACK_CLIENT_SECRET is not.
MISSPELT = 0.9


def _misspelt(key: str) -> str | None:
    """The setting that `key` (not one of ours) misspells; '' when it is surely meant as ours but
    is like none of them (PAPERBOT_X); None when it may well be another tool's."""
    folded = key.upper().replace("-", "_")
    if folded in SETTINGS:  # port, slack_bot_token, PAPERBOT-CHANNEL: names are case-sensitive
        return folded
    close = difflib.get_close_matches(folded, list(SETTINGS), n=1, cutoff=MISSPELT)
    if close:
        return close[0]
    if folded.startswith("PAPERBOT"):
        return (difflib.get_close_matches(folded, list(SETTINGS), n=1) or [""])[0]
    return None


def _check_dotenv(path: Path) -> None:
    """A line of `.env` that cannot be read, or a misspelt name (PAPERBOT_TIMEZON, SLACK_API_ULR,
    port), would leave a setting at its default without a word: say which line instead (other
    names may be another tool's)."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as e:
        raise SettingError(str(path), f"is not UTF-8 text (byte {e.start}): save it as UTF-8") from None
    for binding in parse_stream(io.StringIO(text)):
        raw = binding.original.string
        line = binding.original.line + raw[: len(raw) - len(raw.lstrip())].count("\n")  # past blank lines
        if binding.error:
            shown = binding.original.string.strip()[:60]
            raise SettingError(str(path), f"line {line} cannot be read ({shown!r}): write it as NAME=value")
        key = binding.key or ""
        if key in SETTINGS and binding.value is None:  # a bare name: not the blank "NAME=" of a default
            raise SettingError(
                str(path), f"line {line}: {key} has no '=': write {key}=value, or {key}= for the default"
            )
        meant = None if key in SETTINGS else _misspelt(key)
        if meant is not None:
            hint = f" (did you mean {meant}?)" if meant else ""
            raise SettingError(str(path), f"line {line}: {key} is not a paperbot setting{hint}")


@dataclass(frozen=True)
class Settings:
    bot_token: str | None = None
    app_token: str | None = None
    signing_secret: str | None = None
    api_url: str = "https://slack.com/api/"
    port: int = 3000
    db_path: Path = Path("data/paperbot.db")
    channel: str | None = None
    schedule: PostSchedule = field(default_factory=lambda: PostSchedule("0 9 * * mon", ZoneInfo("UTC")))
    timezone: ZoneInfo = field(default_factory=lambda: ZoneInfo("UTC"))
    meeting: Meeting = field(default_factory=lambda: Meeting(0, time(9, 0)))
    remind_days: int = 2
    admins: frozenset[str] = frozenset()
    focus_tag: str | None = None

    @classmethod
    def load(cls, environ: Mapping[str, str], dotenv: str | Path | None = ".env") -> Settings:
        """Settings from `environ`, falling back to the `dotenv` file; the environment wins."""
        values: dict[str, str] = {}
        if dotenv is not None and Path(dotenv).is_file():
            _check_dotenv(Path(dotenv))
            values.update({k: v for k, v in dotenv_values(dotenv).items() if v is not None})
        values.update({k: v for k, v in environ.items() if k in SETTINGS})

        def get(name: str) -> str | None:
            raw = values.get(name)
            if raw is None or not raw.strip():
                return SETTINGS[name][0]
            return raw.strip()

        bot_token = get("SLACK_BOT_TOKEN")
        if bot_token is not None and not bot_token.startswith("xoxb-"):
            raise SettingError("SLACK_BOT_TOKEN", "must be a bot token starting with xoxb-")
        app_token = get("SLACK_APP_TOKEN")
        if app_token is not None and not app_token.startswith("xapp-"):
            raise SettingError("SLACK_APP_TOKEN", "must be an app-level token starting with xapp-")

        api_url = get("SLACK_API_URL") or ""
        if not re.match(r"^https?://[^\s/]+", api_url):
            raise SettingError("SLACK_API_URL", f"must be an http(s) URL, not {api_url!r}")
        if not api_url.endswith("/"):
            api_url += "/"

        port = _integer("PORT", get("PORT") or "", 1, 65535)

        tz_name = get("PAPERBOT_TIMEZONE") or "UTC"
        try:
            tz = ZoneInfo(tz_name)
        except (ZoneInfoNotFoundError, ValueError):
            raise SettingError(
                "PAPERBOT_TIMEZONE", f"unknown time zone {tz_name!r} (use an IANA name such as Europe/Berlin)"
            ) from None

        try:
            schedule = PostSchedule(get("PAPERBOT_SCHEDULE") or "", tz)
        except ScheduleError as e:
            raise SettingError("PAPERBOT_SCHEDULE", str(e)) from None

        meeting_text = get("PAPERBOT_MEETING")
        if meeting_text is None:
            meeting = schedule.default_meeting()
        else:
            try:
                meeting = Meeting.parse(meeting_text)
            except ValueError as e:
                raise SettingError("PAPERBOT_MEETING", str(e)) from None

        remind_days = _integer("PAPERBOT_REMIND_DAYS", get("PAPERBOT_REMIND_DAYS") or "", 1, 14)

        admins = frozenset(a.strip() for a in (get("PAPERBOT_ADMINS") or "").split(",") if a.strip())
        for admin in sorted(admins):
            if not _USER_ID.match(admin):
                raise SettingError("PAPERBOT_ADMINS", f"{admin!r} is not a Slack user ID (like U012ABCDEF)")

        channel = get("PAPERBOT_CHANNEL")
        if channel is not None and not _CHANNEL_ID.match(channel):
            raise SettingError(
                "PAPERBOT_CHANNEL", f"{channel!r} is not a channel ID (like C012ABCDEF; see the channel's details)"
            )

        focus = get("PAPERBOT_FOCUS_TAG")
        if focus is not None:
            from bot.catalog import fold_tag

            focus = fold_tag(focus)
            if not focus:
                raise SettingError("PAPERBOT_FOCUS_TAG", "is not a tag")

        return cls(
            bot_token=bot_token,
            app_token=app_token,
            signing_secret=get("SLACK_SIGNING_SECRET"),
            api_url=api_url,
            port=port,
            db_path=Path(get("PAPERBOT_DB") or "data/paperbot.db").expanduser(),
            channel=channel,
            schedule=schedule,
            timezone=tz,
            meeting=meeting,
            remind_days=remind_days,
            admins=admins,
            focus_tag=focus,
        )

    def require(self, *names: str) -> None:
        """Raise SettingError for the first of `names` that has no value."""
        attrs = {
            "SLACK_BOT_TOKEN": self.bot_token,
            "SLACK_APP_TOKEN": self.app_token,
            "SLACK_SIGNING_SECRET": self.signing_secret,
            "PAPERBOT_CHANNEL": self.channel,
        }
        for name in names:
            if not attrs[name]:
                raise SettingError(name, f"is not set ({SETTINGS[name][1]})")

    @property
    def group(self) -> Group:
        return Group(self.timezone, self.meeting, self.schedule, self.remind_days)

    @property
    def socket_mode(self) -> bool:
        return self.app_token is not None

    def now(self) -> datetime:
        return datetime.now(self.timezone)


def _integer(name: str, raw: str, low: int, high: int) -> int:
    try:
        value = int(raw)
    except ValueError:
        raise SettingError(name, f"must be a whole number, not {raw!r}") from None
    if not low <= value <= high:
        raise SettingError(name, f"must be between {low} and {high}, not {value}")
    return value


def check_focus_tag(settings: Settings, store) -> None:
    """PAPERBOT_FOCUS_TAG must name a tag that papers have, or no post could ever be made."""
    from bot import catalog

    if settings.focus_tag and settings.focus_tag not in catalog.tag_names(store):
        close = catalog.closest_tags(store, settings.focus_tag)
        hint = f" (closest: {', '.join(close)})" if close else ""
        raise SettingError("PAPERBOT_FOCUS_TAG", f"no paper has the tag {settings.focus_tag!r}{hint}")
