"""How tests/data/paperbot-16cc2ce.db was made: with paperbot as it was at 16cc2ce, before groups.

    git archive 16cc2ce bot data | tar -x -C /tmp/oldmain
    PYTHONPATH=/tmp/oldmain python tests/data/make_old_db.py tests/data/paperbot-16cc2ce.db
    sqlite3 tests/data/paperbot-16cc2ce.db VACUUM

Five papers; sign-ups for W49 (UADA) and W50 (UBOB), a skip in W51, an assignment in W52 (UCAROL),
their four announcements in the outbox, W49's post to C0OLD and UADA's reminder sent.
"""

import sys
from datetime import datetime
from zoneinfo import ZoneInfo

from bot.announcing import changes as announce
from bot.calendar import Meeting, MeetingCalendar, PostSchedule
from bot.catalog import queries as catalog
from bot.delivery.sending import Sent
from bot.schedule import reminders, signups, weekly


class Recorded:
    """A transport that takes every message (the old code's tests had the Slack stand-in)."""

    n = 0

    def send(self, d, message):
        Recorded.n += 1
        return Sent(d.dest if d.kind == "post" else "D" + d.dest, f"1700000000.{Recorded.n:06d}")

    def reaches(self, user):
        return True

    def find(self, d, since):
        return None


def main(path: str) -> None:
    tz = ZoneInfo("Europe/Berlin")
    group = MeetingCalendar(tz, Meeting.parse("thu 16:00"), PostSchedule("0 9 * * mon", tz), 2)
    store = catalog.open_store(path, seed=None)
    for i, title in enumerate(["Streaming DiLoCo", "ZeRO", "GPipe", "Megatron-LM", "FlashAttention"], 1):
        fields = {"title": title, "summary": f"summary {i}", "tags": ["parallelism-dp"], "url": ""}
        catalog.add(store, catalog.validate(fields, new=True))
    now = datetime(2026, 11, 30, 10, 0, tzinfo=tz)  # Monday of 2026-W49, after the 09:00 post

    def on(change):
        announce.queue(store, "C0OLD", change)

    ada, bob, admin = signups.Member("UADA"), signups.Member("UBOB"), signups.Member("UADMIN", lambda: True)
    signups.signup(store, group, now, ada, "streaming-diloco", "2026-12-03", then=on)
    signups.signup(store, group, now, bob, "zero", "2026-12-10", then=on)
    signups.skip(store, group, now, admin, "2026-12-17", then=on)
    signups.assign(store, group, now, admin, "UCAROL", "gpipe", "2026-12-24", then=on)
    print(weekly.post_week(store, group, Recorded(), "C0OLD", now).status)
    sent = reminders.send_due(store, group, Recorded(), datetime(2026, 12, 1, 16, 30, tzinfo=tz))
    print([s.result.status for s in sent])
    store.db.execute("DELETE FROM meta WHERE key = 'opened_at'")
    store.close()


if __name__ == "__main__":
    main(sys.argv[1])
