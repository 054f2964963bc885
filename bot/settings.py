"""Settings, read once at start and checked before anything runs.

    settings = Settings.load(os.environ, dotenv=".env")   # or a platform adapter's subclass
    settings.require("PAPERBOT_CHANNEL")                   # per verb

`Settings` holds what any group has, whatever its platform; a platform adapter subclasses
`PlatformSettings` with its own names (`NAMES`), fields (`_fields`) and id forms. A missing or malformed value raises
:class:`SettingError`, whose message is the one line the operator sees: the setting's name and
what is wrong with it. A mistake in the schedule must show up when the process starts, not at
9 a.m. on Monday, so everything that can be checked here is.
"""

from __future__ import annotations

import difflib
import functools
import io
import logging
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, time
from pathlib import Path
from typing import Any, ClassVar, Self
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from dotenv import dotenv_values

from bot.calendar import Meeting, MeetingCalendar, PostSchedule, ScheduleError
from bot.catalog import queries as catalog
from bot.catalog.papers import fold_tag
from bot.intake.lookup import Lookups

#: Every setting any group has, with its default and its one-line meaning. `.env.example`,
#: README and a test are kept in step with this table and the platform's.
SETTINGS: dict[str, tuple[str | None, str]] = {
    "PAPERBOT_DB": ("data/paperbot.db", "the SQLite file, or a PostgreSQL URL (postgresql://user:pass@host/db)"),
    "PAPERBOT_CHANNEL": (None, "channel ID that gets the weekly post and schedule changes"),
    "PAPERBOT_SCHEDULE": ("0 9 * * mon", "when the weekly post goes out: a 5-field crontab"),
    "PAPERBOT_TIMEZONE": ("UTC", "IANA zone of the schedule, weeks and dates"),
    "PAPERBOT_MEETING": (None, "when the group meets, e.g. 'thu 16:00' (default: the post's time)"),
    "PAPERBOT_REMIND_DAYS": ("2", "days before the meeting that the presenter is reminded"),
    "PAPERBOT_ADMINS": ("", "comma-separated member IDs with admin rights"),
    "PAPERBOT_FOCUS_TAG": (None, "when set, papers of the week are drawn from this tag"),
    "PAPERBOT_ROTATION": ("catalog", "the paper of the week when nobody chose one: 'catalog' or 'votes'"),
    "PAPERBOT_ARXIV_API": ("https://export.arxiv.org/api/query", "where `add` and `suggest` look arXiv ids up"),
    "PAPERBOT_CROSSREF_API": ("https://api.crossref.org", "where `add` and `suggest` look DOIs up"),
    "PAPERBOT_MEETING_MINUTES": ("60", "how long a meeting lasts, in minutes (calendar events)"),
    "PAPERBOT_MEETING_PLACE": (None, "where the group meets (calendar LOCATION when set; Discord events: its channel)"),
    "PAPERBOT_PUBLIC_URL": (None, "where users reach PORT (may carry a path): run serves the calendars and page"),
    "PAPERBOT_GROUP_NAME": (None, "the group's name in its posts, reminders, page and calendar (default: none)"),
    "PAPERBOT_HOSTED": (
        None,
        "serve each workspace and server that adds the app as a place of its own (default: with SLACK_CLIENT_ID)",
    ),
    "PAPERBOT_SECRET_KEY": (None, "a Fernet key that seals the tokens a hosted install keeps in its database"),
}

#: The longest group name kept: a page's title and a calendar's name stay one line.
GROUP_NAME_CHARS = 80
#: How a group's paper of the week is chosen: the catalog in turn, or the members' votes.
ROTATIONS = ("catalog", "votes")
#: The shortest and longest meeting, in minutes.
MEETING_MINUTES = (15, 480)

#: A lookup of one setting's value: its text, or its default when unset or blank.
Get = Callable[[str], "str | None"]


class SettingError(ValueError):
    """A setting is missing or malformed; str() is the line to show."""

    def __init__(self, name: str, problem: str):
        super().__init__(f"{name}: {problem}")
        self.name = name


class SettingErrors(SettingError):
    """Several settings are missing or malformed; str() is one line for each."""

    def __init__(self, errors: list[SettingError]):
        ValueError.__init__(self, "\n".join(str(e) for e in errors))
        self.name = errors[0].name
        self.errors = errors


#: A name in `.env` this close to one of ours (difflib's ratio) is taken for a misspelling of it:
#: PAPERBOT_TIMEZOME, PAPERBOT_CHANEL; another tool's DATABASE_URL or HOST is not.
MISSPELT = 0.9


def _misspelt(key: str, names: Mapping[str, object]) -> str | None:
    """The setting of `names` that `key` (not one of them) misspells; '' when it is surely meant as
    ours but is like none of them (PAPERBOT_X); None when it may well be another tool's."""
    folded = key.upper().replace("-", "_")
    if folded in names:  # port, paperbot_timezone, PAPERBOT-CHANNEL: names are case-sensitive
        return folded
    close = difflib.get_close_matches(folded, list(names), n=1, cutoff=MISSPELT)
    if close:
        return close[0]
    if folded.startswith("PAPERBOT"):
        return (difflib.get_close_matches(folded, list(names), n=1) or [""])[0]
    return None


#: python-dotenv's public reader says which statement it could not read only in a warning, on this logger.
_DOTENV_LOG = "dotenv.main"


class _Unreadable(logging.Filter):
    """Keeps the line numbers of the statements python-dotenv skipped, and keeps its warning off the log."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[int] = []

    def filter(self, record: logging.LogRecord) -> bool:
        line = record.args[0] if isinstance(record.args, tuple) and record.args else None
        if "could not parse" in str(record.msg) and isinstance(line, int):  # its line number, the one argument
            self.lines.append(line)
            return False
        return True


def _line_of(text: str, key: str) -> int:
    """The line (from 1) where `key` is set in `text`."""
    pattern = re.compile(rf"^\s*(?:export\s+)?{re.escape(key)}\s*(?:=|$)")
    for number, line in enumerate(text.splitlines(), 1):
        if pattern.match(line):
            return number
    return 1


def _read_dotenv(path: Path, names: Mapping[str, object]) -> dict[str, str]:
    """The values of `.env`. A line that cannot be read, or a misspelt name (PAPERBOT_TIMEZON, port),
    would leave a setting at its default without a word: say which line instead (other names may
    be another tool's)."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as e:
        raise SettingError(str(path), f"is not UTF-8 text (byte {e.start}): save it as UTF-8") from None
    unreadable = _Unreadable()
    log = logging.getLogger(_DOTENV_LOG)
    level = log.level
    log.setLevel(logging.WARNING)  # its warnings reach the filter even when the verb logs nothing
    log.addFilter(unreadable)
    try:
        values = dotenv_values(stream=io.StringIO(text))
    finally:
        log.removeFilter(unreadable)
        log.setLevel(level)
    lines = text.splitlines()
    problems: list[tuple[int, str]] = []
    for line in unreadable.lines:
        shown = lines[line - 1].strip()[:60] if 0 < line <= len(lines) else ""
        problems.append((line, f"line {line} cannot be read ({shown!r}): write it as NAME=value"))
    for key, value in values.items():
        line = _line_of(text, key)
        if key in names and value is None:  # a bare name: not the blank "NAME=" of a default
            problems.append((line, f"line {line}: {key} has no '=': write {key}=value, or {key}= for the default"))
            continue
        meant = None if key in names else _misspelt(key, names)
        if meant is not None:
            hint = f" (did you mean {meant}?)" if meant else ""
            problems.append((line, f"line {line}: {key} is not a paperbot setting{hint}"))
    if problems:
        raise SettingError(str(path), min(problems)[1])  # the first in the file, as a reader meets it
    return {k: v for k, v in values.items() if v is not None}


def _database(value: str) -> Path | str:
    """PAPERBOT_DB: a PostgreSQL URL as it is, else a SQLite file's path."""
    if value.startswith(("postgresql://", "postgres://")):
        return value
    return Path(value).expanduser()


@dataclass(frozen=True)
class Settings:
    #: A SQLite file's path, or a PostgreSQL URL (a str: a Path would fold its "//").
    db_path: Path | str = Path("data/paperbot.db")
    #: The platform's id of the group's channel, opaque here.
    channel: str | None = None
    schedule: PostSchedule = field(default_factory=lambda: PostSchedule("0 9 * * mon", ZoneInfo("UTC")))
    timezone: ZoneInfo = field(default_factory=lambda: ZoneInfo("UTC"))
    meeting: Meeting = field(default_factory=lambda: Meeting(0, time(9, 0)))
    remind_days: int = 2
    #: The platform's ids of the members with admin rights, opaque here.
    admins: frozenset[str] = frozenset()
    focus_tag: str | None = None
    #: How the paper of the week is picked among papers not yet featured: 'catalog' (lowest number) or 'votes'.
    rotation: str = "catalog"
    #: Where papers are looked up by arXiv id and by DOI (a proxy, or a stand-in in tests).
    arxiv_api: str = "https://export.arxiv.org/api/query"
    crossref_api: str = "https://api.crossref.org"
    meeting_minutes: int = 60
    meeting_place: str | None = None
    #: Where users reach the HTTP port, without a trailing slash (`https://example.org/paperbot`).
    public_url: str | None = None
    #: The group's name on its page and calendar (None: "Reading group").
    group_name: str | None = None
    #: Does `run` serve every workspace and server that adds the app, each its own place (bot/places/)?
    hosted: bool = False
    #: The Fernet key that seals the tokens a hosted install keeps (bot/places/sealing.py).
    secret_key: str | None = field(default=None, repr=False)

    #: The names this class reads: a platform's subclass adds its own.
    NAMES: ClassVar[dict[str, tuple[str | None, str]]] = SETTINGS
    #: How the platform's channel and member ids look, for messages that ask for one of several platforms'.
    CHANNEL_FORM: ClassVar[str] = "a channel ID"
    MEMBER_FORM: ClassVar[str] = "a user ID"

    @classmethod
    def load(cls, environ: Mapping[str, str], dotenv: str | Path | None = ".env") -> Self:
        """Settings from `environ`, falling back to the `dotenv` file; the environment wins."""
        values: dict[str, str] = {}
        if dotenv is not None and Path(dotenv).is_file():
            values.update(_read_dotenv(Path(dotenv), cls.NAMES))
        values.update({k: v for k, v in environ.items() if k in cls.NAMES})

        # Every bad setting is named at once: after one, it is read as unset and the rest checked again.
        unset: set[str] = set()

        def get(name: str) -> str | None:
            raw = values.get(name)
            if name in unset or raw is None or not raw.strip():
                return cls.NAMES[name][0]
            return raw.strip()

        errors: list[SettingError] = []
        for _ in range(len(cls.NAMES) + 1):
            try:
                fields = cls._fields(get)
            except SettingError as e:
                if e.name in unset:  # its default is no better: the names so far are what can be said
                    break
                errors.append(e)
                unset.add(e.name)
                continue
            if not errors:
                return cls(**fields)
            break
        raise errors[0] if len(errors) == 1 else SettingErrors(errors)

    @classmethod
    def _fields(cls, get: Get) -> dict[str, Any]:
        """The fields read from the settings' text, each checked; a subclass adds its own."""
        tz = parse_timezone("PAPERBOT_TIMEZONE", get("PAPERBOT_TIMEZONE") or "UTC")
        schedule = parse_schedule("PAPERBOT_SCHEDULE", get("PAPERBOT_SCHEDULE") or "", tz)
        meeting_text = get("PAPERBOT_MEETING")
        meeting = (
            schedule.default_meeting() if meeting_text is None else parse_meeting("PAPERBOT_MEETING", meeting_text)
        )
        if problem := MeetingCalendar(tz, meeting, schedule).never_pairs(datetime.now(tz)):
            raise SettingError("PAPERBOT_SCHEDULE", problem)
        remind_days = integer("PAPERBOT_REMIND_DAYS", get("PAPERBOT_REMIND_DAYS") or "", 1, 14)
        admins = frozenset(a.strip() for a in (get("PAPERBOT_ADMINS") or "").split(",") if a.strip())
        focus = get("PAPERBOT_FOCUS_TAG")
        if focus is not None:
            focus = parse_focus_tag("PAPERBOT_FOCUS_TAG", focus)
        rotation = parse_rotation("PAPERBOT_ROTATION", get("PAPERBOT_ROTATION") or "catalog")
        minutes = integer("PAPERBOT_MEETING_MINUTES", get("PAPERBOT_MEETING_MINUTES") or "60", *MEETING_MINUTES)
        apis = {name: get(name) or "" for name in ("PAPERBOT_ARXIV_API", "PAPERBOT_CROSSREF_API")}
        for name, url in apis.items():
            if not re.match(r"^https?://[^\s/]+", url):
                raise SettingError(name, f"must be an http:// or https:// address, not {url!r}")

        public_url = get("PAPERBOT_PUBLIC_URL")
        if public_url is not None:
            public_url = public_url.rstrip("/")
            if not re.fullmatch(r"https?://[^\s/?#]+(/[^\s?#]*)?", public_url):
                raise SettingError(
                    "PAPERBOT_PUBLIC_URL",
                    f"must be an http(s) URL such as https://example.org/paperbot, not {public_url!r}",
                )

        secret_key = get("PAPERBOT_SECRET_KEY")
        if secret_key is not None and not all(_fernet_key(k.strip()) for k in secret_key.split(",") if k.strip()):
            raise SettingError(
                "PAPERBOT_SECRET_KEY",
                "must be Fernet keys, comma-separated: 32 bytes in URL-safe base64, 44 characters (docs/hosting.md)",
            )
        hosted = get("PAPERBOT_HOSTED")
        return {
            "hosted": parse_yes_no("PAPERBOT_HOSTED", hosted) if hosted is not None else cls._hosted_by_default(get),
            "secret_key": secret_key,
            "arxiv_api": apis["PAPERBOT_ARXIV_API"],
            "crossref_api": apis["PAPERBOT_CROSSREF_API"],
            "meeting_minutes": minutes,
            "meeting_place": get("PAPERBOT_MEETING_PLACE"),
            "public_url": public_url,
            "group_name": " ".join((get("PAPERBOT_GROUP_NAME") or "").split())[:GROUP_NAME_CHARS] or None,
            "db_path": _database(get("PAPERBOT_DB") or "data/paperbot.db"),
            "channel": get("PAPERBOT_CHANNEL"),
            "schedule": schedule,
            "timezone": tz,
            "meeting": meeting,
            "remind_days": remind_days,
            "admins": admins,
            "focus_tag": focus,
            "rotation": rotation,
        }

    @classmethod
    def _hosted_by_default(cls, get: Get) -> bool:
        """PAPERBOT_HOSTED when unset: a platform's subclass says (Slack's: with SLACK_CLIENT_ID)."""
        return False

    def _values(self) -> dict[str, object]:
        """The settings `require` can ask for, by name; a subclass adds its own."""
        return {"PAPERBOT_CHANNEL": self.channel, "PAPERBOT_SECRET_KEY": self.secret_key}

    def _unset(self, name: str) -> str:
        """What to say of `name` when it is not set."""
        return f"is not set ({self.NAMES[name][1]})"

    def require(self, *names: str) -> None:
        """Raise SettingError for those of `names` that have no value, one line each."""
        values = self._values()
        missing = [SettingError(name, self._unset(name)) for name in names if not values[name]]
        if missing:
            raise missing[0] if len(missing) == 1 else SettingErrors(missing)

    @property
    def group(self) -> MeetingCalendar:
        return MeetingCalendar(
            self.timezone,
            self.meeting,
            self.schedule,
            self.remind_days,
            minutes=self.meeting_minutes,
            name=self.group_name,
        )

    @property
    def lookups(self):
        """Look-ups at this install's arXiv and Crossref addresses (one per pair, so arXiv's pace is kept)."""
        return _lookups(self.arxiv_api, self.crossref_api)

    def now(self) -> datetime:
        return datetime.now(self.timezone)


@dataclass(frozen=True)
class PlatformSettings(Settings, ABC):
    """A platform's settings: the group's, the HTTP port `run` serves, and how the platform's ids look."""

    port: int = 3000

    @staticmethod
    @abstractmethod
    def is_channel(text: str) -> bool:
        """Is `text` in the form of this platform's channel ids (bot.platforms: which platform group 1 is on)?"""

    @staticmethod
    @abstractmethod
    def is_member(text: str) -> bool:
        """Is `text` in the form of this platform's member ids?"""

    @property
    @abstractmethod
    def socket_mode(self) -> bool:
        """Does `run` hold a connection open rather than serve HTTP alone (cli's signals)?"""


def parse_yes_no(name: str, raw: str) -> bool:
    word = raw.strip().lower()
    if word in ("1", "true", "yes", "on"):
        return True
    if word in ("0", "false", "no", "off"):
        return False
    raise SettingError(name, f"must be true or false, not {raw[:40]!r}")


def _fernet_key(raw: str) -> bool:
    """Is `raw` a Fernet key (32 bytes, URL-safe base64)? Checked without importing cryptography."""
    import base64  # noqa: PLC0415 - only when the setting is given
    import binascii  # noqa: PLC0415

    try:
        return len(base64.urlsafe_b64decode(raw.encode("ascii"))) == 32 and len(raw) == 44
    except (binascii.Error, UnicodeEncodeError, ValueError):
        return False


@functools.cache
def _lookups(arxiv_api: str, crossref_api: str):

    return Lookups(arxiv_api, crossref_api)


#: The longest zone name read; the database's longest is 32 characters (America/Argentina/ComodRivadavia).
MAX_ZONE_CHARS = 64


@functools.cache
def _zone_names() -> frozenset[str]:
    """The zones the database names: a folder of it (`Europe`), a file that is no zone (`zone.tab`)
    and a path too long to open are none of them, so no name outside it is ever opened. `localtime`
    (the host's own zone, which a move of the server would change) and `Factory` (tzdata's "zone not
    set") are files of the database but no place a group meets in."""
    return frozenset(available_timezones()) - {"localtime", "Factory"}


def parse_timezone(name: str, raw: str) -> ZoneInfo:
    """The IANA zone `raw` of setting `name` (the environment's, a group's)."""
    key = raw.strip()
    if len(key) <= MAX_ZONE_CHARS and key in _zone_names():
        try:
            return ZoneInfo(key)
        except (ZoneInfoNotFoundError, ValueError, OSError):  # the database changed under a running install
            pass
    shown = key[:60] + ("…" if len(key) > 60 else "")
    raise SettingError(name, f"unknown time zone {shown!r} (use an IANA name such as Europe/Berlin)")


def parse_schedule(name: str, raw: str, tz: ZoneInfo) -> PostSchedule:
    """The crontab `raw` of setting `name`, in zone `tz`."""
    try:
        return PostSchedule(raw, tz)
    except ScheduleError as e:
        raise SettingError(name, str(e)) from None


def parse_meeting(name: str, raw: str) -> Meeting:
    """The weekly meeting `raw` (`thu 16:00`) of setting `name`."""
    try:
        return Meeting.parse(raw)
    except ValueError as e:
        raise SettingError(name, str(e)) from None


def parse_focus_tag(name: str, raw: str) -> str:
    """The tag `raw` of setting `name`, folded as tags are."""

    focus = fold_tag(raw)
    if not focus:
        raise SettingError(name, "is not a tag")
    return focus


def parse_group_name(name: str, raw: str) -> str:
    """A group's name: one line of at most GROUP_NAME_CHARS characters, its spaces folded."""
    value = " ".join(raw.split())
    if not value:
        raise SettingError(name, "is empty: type the group's name, or none")
    if any(not ch.isprintable() for ch in value):
        raise SettingError(name, "has a control character: a name is one line of plain text")
    if len(value) > GROUP_NAME_CHARS:
        raise SettingError(name, f"is {len(value)} characters long; a group's name is at most {GROUP_NAME_CHARS}")
    return value


def parse_rotation(name: str, raw: str) -> str:
    """`catalog` or `votes`."""
    value = raw.strip().lower()
    if value not in ROTATIONS:
        raise SettingError(name, f"must be {' or '.join(ROTATIONS)}, not {raw.strip()[:40]!r}")
    return value


def integer(name: str, raw: str, low: int, high: int) -> int:
    """The whole number `raw` of setting `name`, between `low` and `high`."""
    try:
        value = int(raw)
    except ValueError:
        raise SettingError(name, f"must be a whole number, not {raw!r}") from None
    if not low <= value <= high:
        raise SettingError(name, f"must be between {low} and {high}, not {value}")
    return value


def check_focus_tag(settings: Settings, store) -> None:
    """PAPERBOT_FOCUS_TAG must name a tag that papers have, or no post could ever be made."""

    if settings.focus_tag and settings.focus_tag not in catalog.tag_names(store):
        close = catalog.closest_tags(store, settings.focus_tag)
        hint = f" (closest: {', '.join(close)})" if close else ""
        raise SettingError("PAPERBOT_FOCUS_TAG", f"no paper has the tag {settings.focus_tag!r}{hint}")
