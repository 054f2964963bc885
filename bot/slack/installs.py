"""A hosted install's Slack workspaces: Bolt's installation and OAuth state stores on paperbot's own
database (either engine), the tokens sealed with PAPERBOT_SECRET_KEY (bot/places/sealing.py).

    installs = SlackInstalls(places, Seal(key), rotator)
    OAuthSettings(installation_store=installs, state_store=installs, ...)   # Bolt's OAuth flow saves here
    token = installs.token("slack-T012AB")                                  # rotated first when due

Each workspace that installs is a place (bot/places/registry.py); an Enterprise Grid organisation
that installs once for all its workspaces is one place. An uninstall (`app_uninstalled`,
`tokens_revoked`) deletes the tokens and marks the place gone: its groups stop; its papers stay until
`paperbot forget`.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from datetime import UTC, datetime
from logging import Logger

from slack_sdk.oauth.installation_store import Bot, Installation, InstallationStore
from slack_sdk.oauth.state_store import OAuthStateStore
from slack_sdk.oauth.token_rotation import TokenRotator

from bot.places.registry import Places
from bot.places.sealing import Seal, Unreadable

log = logging.getLogger(__name__)

#: How long an install's state is good for: the admin's trip to Slack's consent page and back.
STATE_SECONDS = 600
#: A rotating token is renewed when it has less than this left (slack_sdk's own default).
ROTATE_MINUTES = 120


def slack_place(team: str | None, enterprise: str | None = None, *, grid: bool = False) -> str:
    """The place of a Slack workspace (an Enterprise Grid install's: its organisation)."""
    return f"slack-{enterprise if grid else team}"


def due(expires_at: int | None) -> bool:
    """Is a token that expires at `expires_at` (unix time; None: never) due for rotation?"""
    return expires_at is not None and expires_at < time.time() + ROTATE_MINUTES * 60


class SlackInstalls(InstallationStore, OAuthStateStore):
    def __init__(self, places: Places, seal: Seal, rotator: TokenRotator | None = None):
        self.places = places
        self.house = places.house
        self.seal = seal
        self.rotator = rotator
        self._rotating = threading.Lock()

    @property
    def logger(self) -> Logger:
        return log

    # -- installs ------------------------------------------------------------------

    def save(self, installation: Installation) -> None:
        bot = installation.to_bot()
        bot.set_custom_value("installer", installation.user_id)  # who added the app: `paperbot places` may say
        self.save_bot(bot)

    def save_bot(self, bot: Bot) -> None:
        place = slack_place(bot.team_id, bot.enterprise_id, grid=bool(bot.is_enterprise_install))
        name = (bot.enterprise_name if bot.is_enterprise_install else bot.team_name) or ""
        self.places.join(place, "slack", name)
        refresh = self.seal.close(bot.bot_refresh_token) if bot.bot_refresh_token else None
        with self.house.write() as db:
            db.execute(
                "INSERT INTO slack_installs (place, team_id, enterprise_id, is_enterprise_install, app_id, bot_id, "
                "bot_user_id, bot_scopes, bot_token, bot_refresh_token, bot_token_expires_at, installer, installed_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (place) DO UPDATE SET "
                "team_id = excluded.team_id, enterprise_id = excluded.enterprise_id, "
                "is_enterprise_install = excluded.is_enterprise_install, app_id = excluded.app_id, "
                "bot_id = excluded.bot_id, bot_user_id = excluded.bot_user_id, bot_scopes = excluded.bot_scopes, "
                "bot_token = excluded.bot_token, bot_refresh_token = excluded.bot_refresh_token, "
                "bot_token_expires_at = excluded.bot_token_expires_at, "
                "installer = COALESCE(excluded.installer, slack_installs.installer), "
                "installed_at = excluded.installed_at",
                [
                    place,
                    bot.team_id,
                    bot.enterprise_id,
                    int(bool(bot.is_enterprise_install)),
                    bot.app_id,
                    bot.bot_id,
                    bot.bot_user_id,
                    ",".join(bot.bot_scopes or []),
                    self.seal.close(bot.bot_token),
                    refresh,
                    bot.bot_token_expires_at,
                    bot.custom_values.get("installer"),
                    # With its offset: slack_sdk's Bot reads "+00:00", not "Z".
                    datetime.fromtimestamp(bot.installed_at, UTC).isoformat(timespec="seconds"),
                ],
            )
        log.info("Slack place %s installed%s", place, f" ({name})" if name else "")

    def find_bot(
        self, *, enterprise_id: str | None, team_id: str | None, is_enterprise_install: bool | None = False
    ) -> Bot | None:
        row = self._row(enterprise_id, team_id, is_enterprise_install)
        return None if row is None else self._bot(row)

    def find_installation(
        self,
        *,
        enterprise_id: str | None,
        team_id: str | None,
        user_id: str | None = None,
        is_enterprise_install: bool | None = False,
    ) -> Installation | None:
        bot = self.find_bot(enterprise_id=enterprise_id, team_id=team_id, is_enterprise_install=is_enterprise_install)
        if bot is None:
            return None
        return Installation(
            app_id=bot.app_id,
            enterprise_id=bot.enterprise_id,
            team_id=bot.team_id,
            bot_token=bot.bot_token,
            bot_id=bot.bot_id,
            bot_user_id=bot.bot_user_id,
            bot_scopes=bot.bot_scopes,
            bot_refresh_token=bot.bot_refresh_token,
            bot_token_expires_at=bot.bot_token_expires_at,
            is_enterprise_install=bot.is_enterprise_install,
            installed_at=bot.installed_at,
            user_id=user_id or "",
        )

    def delete_bot(self, *, enterprise_id: str | None, team_id: str | None) -> None:
        self.uninstalled(enterprise_id, team_id)

    def delete_installation(
        self, *, enterprise_id: str | None, team_id: str | None, user_id: str | None = None
    ) -> None:
        if user_id is None:
            self.uninstalled(enterprise_id, team_id)

    def delete_all(self, *, enterprise_id: str | None, team_id: str | None) -> None:
        self.uninstalled(enterprise_id, team_id)

    def uninstalled(self, enterprise_id: str | None, team_id: str | None) -> str | None:
        """The app was uninstalled (or its tokens revoked): the tokens go, the place stops. Its place, if any."""
        row = self._row(enterprise_id, team_id, None)
        if row is None:
            return None
        with self.house.write() as db:
            db.execute("DELETE FROM slack_installs WHERE place = ?", [row["place"]])
        self.places.leave(row["place"])
        log.info("Slack place %s uninstalled: its tokens are deleted and its groups stopped", row["place"])
        return row["place"]

    def reseal(self) -> int:
        """Seal every kept token again with PAPERBOT_SECRET_KEY's first key (after a change of key); how many
        rows changed. A row no key opens is left as it is (its place must install again)."""
        changed = 0
        for row in list(self.house.db.query("SELECT place, bot_token, bot_refresh_token FROM slack_installs")):
            try:
                token = self.seal.again(row["bot_token"])
                refresh = self.seal.again(row["bot_refresh_token"]) if row["bot_refresh_token"] else None
            except Unreadable as e:
                log.warning("Slack place %s: %s; install the app again there", row["place"], e)
                continue
            if (token, refresh) == (row["bot_token"], row["bot_refresh_token"]):
                continue
            with self.house.write() as db:
                db.execute(
                    "UPDATE slack_installs SET bot_token = ?, bot_refresh_token = ? WHERE place = ? AND bot_token = ?",
                    [token, refresh, row["place"], row["bot_token"]],
                )
            changed += 1
        return changed

    # -- a place's token -------------------------------------------------------------

    def place_of(self, enterprise_id: str | None, team_id: str | None) -> str | None:
        """The installed place a request from workspace `team_id` (of organisation `enterprise_id`) belongs to."""
        row = self._row(enterprise_id, team_id, None)
        return None if row is None else row["place"]

    def token(self, place: str) -> str | None:
        """The place's bot token (None: not installed, or sealed with another key), rotated first when
        it has less than ROTATE_MINUTES left."""
        held = self.held(place)
        return held[0] if held is not None else None

    def held(self, place: str) -> tuple[str, int | None] | None:
        """The place's bot token and when it expires (unix time; None: it does not), as `token`."""
        rows = list(self.house.db.query("SELECT * FROM slack_installs WHERE place = ?", [place]))
        if not rows:
            return None
        try:
            bot = self._bot(rows[0])
        except Unreadable as e:
            log.warning("Slack place %s: %s; install the app again there", place, e)
            return None
        if bot.bot_refresh_token and due(bot.bot_token_expires_at) and self.rotator is not None:
            with self._rotating:  # one rotation at a time: a refresh token is good once
                renewed = self._rotate(place)
            if renewed is not None:
                return renewed.bot_token, renewed.bot_token_expires_at
        return bot.bot_token, bot.bot_token_expires_at

    def _rotate(self, place: str) -> Bot | None:
        rows = list(self.house.db.query("SELECT * FROM slack_installs WHERE place = ?", [place]))
        if not rows:
            return None
        bot = self._bot(rows[0])
        assert self.rotator is not None
        try:
            renewed = self.rotator.perform_bot_token_rotation(bot=bot, minutes_before_expiration=ROTATE_MINUTES)
        except Exception as e:  # noqa: BLE001 - Slack's refusal or silence: the old token until it expires
            log.warning("Slack place %s: could not rotate its token (%s)", place, " ".join(str(e).split())[:200])
            return None
        if renewed is None:  # another process rotated it meanwhile: what it saved
            return bot
        self.save_bot(renewed)
        return renewed

    def _row(self, enterprise_id: str | None, team_id: str | None, grid: bool | None) -> dict | None:
        candidates = []
        if grid is not False and enterprise_id:
            candidates.append(slack_place(team_id, enterprise_id, grid=True))
        if grid is not True and team_id:
            candidates.append(slack_place(team_id))
        for place in candidates:
            rows = list(self.house.db.query("SELECT * FROM slack_installs WHERE place = ?", [place]))
            if rows:
                return rows[0]
        return None

    def _bot(self, row: dict) -> Bot:
        return Bot(
            app_id=row["app_id"],
            enterprise_id=row["enterprise_id"],
            team_id=row["team_id"],
            bot_token=self.seal.open(row["bot_token"]),
            bot_id=row["bot_id"] or "",
            bot_user_id=row["bot_user_id"] or "",
            bot_scopes=row["bot_scopes"] or "",
            bot_refresh_token=self.seal.open(row["bot_refresh_token"]) if row["bot_refresh_token"] else None,
            bot_token_expires_at=row["bot_token_expires_at"],
            is_enterprise_install=bool(row["is_enterprise_install"]),
            installed_at=row["installed_at"],
        )

    # -- OAuth state ------------------------------------------------------------------

    def issue(self, *args, **kwargs) -> str:
        state = secrets.token_urlsafe(24)
        now = time.time()
        with self.house.write() as db:
            db.execute("DELETE FROM oauth_states WHERE expires_at < ?", [now])
            db.execute("INSERT INTO oauth_states (state, expires_at) VALUES (?, ?)", [state, now + STATE_SECONDS])
        return state

    def consume(self, state: str) -> bool:
        """True once for a state this install issued and that has not expired; never again."""
        if not state or len(state) > 100:
            return False
        with self.house.write() as db:
            row = db.execute("DELETE FROM oauth_states WHERE state = ? RETURNING expires_at", [state]).fetchone()
        return row is not None and float(row[0]) >= time.time()
