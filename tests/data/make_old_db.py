"""Build tests/data/paperbot-16cc2ce.db with paperbot at 16cc2ce (run with PYTHONPATH=/tmp/oldmain)."""
import sys, time
from datetime import datetime
from zoneinfo import ZoneInfo
import bot
assert bot.__file__.startswith("/tmp/oldmain"), bot.__file__
from bot import announce, catalog, reminders, signups, weekly
from bot.calendar import Meeting, MeetingCalendar, PostSchedule
from bot.delivery import Sent

tz = ZoneInfo("Europe/Berlin")
group = MeetingCalendar(tz, Meeting.parse("thu 16:00"), PostSchedule("0 9 * * mon", tz), 2)

class T:
    n = 0
    def send(self, d, message):
        T.n += 1
        return Sent(d.dest if d.kind == "post" else "D" + d.dest, f"1700000000.{T.n:06d}")
    def reaches(self, user): return True
    def find(self, d, since): return None

store = catalog.open_store(sys.argv[1], seed=None)
for i, title in enumerate(["Streaming DiLoCo", "ZeRO", "GPipe", "Megatron-LM", "FlashAttention"], 1):
    catalog.add(store, catalog.validate({"title": title, "summary": f"summary {i}", "tags": ["parallelism-dp"], "url": ""}, new=True))
now = datetime(2026, 11, 30, 10, 0, tzinfo=tz)          # Monday of 2026-W49, after the 09:00 post
on = lambda c: announce.queue(store, "C0OLD", c)
ada, bob, admin = signups.Member("UADA"), signups.Member("UBOB"), signups.Member("UADMIN", lambda: True)
signups.signup(store, group, now, ada, "streaming-diloco", "2026-12-03", then=on)   # this week
signups.signup(store, group, now, bob, "zero", "2026-12-10", then=on)
signups.skip(store, group, now, admin, "2026-12-17", then=on)
signups.assign(store, group, now, admin, "UCAROL", "gpipe", "2026-12-24", then=on)
print(weekly.post_week(store, group, T(), "C0OLD", now).status)
print([s.result.status for s in reminders.send_due(store, group, T(), datetime(2026, 12, 1, 16, 30, tzinfo=tz))])
store.db.execute("DELETE FROM meta WHERE key = 'opened_at'")
store.close()
