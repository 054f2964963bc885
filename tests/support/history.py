"""A group's history, written as its rows would be after months of meetings: for `stats` and the page.

seed_history(store, calendar, now)   # six talks given over about three months, one coming, who went
"""

from __future__ import annotations

from datetime import datetime

from bot.calendar import MeetingCalendar

#: The talks given, by weeks before `now`'s (0: its own, over by then), with presenters and papers.
GIVEN = [(0, "U3", 8), (-2, "U1", 1), (-4, "U2", 2), (-6, "U1", 3), (-8, "U3", 4), (-10, "U1", 5), (-12, "U2", 6)]
#: Tags beside the seed's parallelism-dp: llm on papers 1, 2, 3 and 6, moe on 4, 5 and 6.
TAGS = {"llm": (1, 2, 3, 6), "moe": (4, 5, 6)}
#: Members going to the talks given, by week before `now`'s (one more said they would not, two weeks ago).
GOING = {-2: 3, -4: 2, -6: 4}
#: Names as the platform shows them: one Chinese, one that looks like markup.
NAMES = {"U1": "Grace <Hopper>", "U2": "Ada Lovelace", "U3": "李华"}


def seed_history(store, calendar: MeetingCalendar, now: datetime) -> None:
    this = calendar.week_of(now)
    group = calendar.group_id
    with store.write() as db:
        for ahead, presenter, paper in [*GIVEN, (2, "U2", 7)]:  # and one coming talk, which counts for nothing yet
            db.execute(
                "INSERT INTO slots (group_id, week, kind, presenter, paper, booked_by, booked_at) "
                "VALUES (?, ?, 'presenter', ?, ?, ?, 'then')",
                [group, this.plus(ahead).key, presenter, paper, presenter],
            )
        for tag, papers in TAGS.items():
            tag_id = db.execute(
                "INSERT INTO tags (name) VALUES (?) ON CONFLICT (name) DO UPDATE SET name = excluded.name RETURNING id",
                [tag],
            ).fetchone()[0]
            for paper in papers:
                db.execute("INSERT INTO paper_tags (tag, paper) VALUES (?, ?)", [tag_id, paper])
        for ahead, going in GOING.items():
            for m in range(going):
                db.execute(
                    "INSERT INTO attendance (group_id, week, member, going, said_at) VALUES (?, ?, ?, 1, 'then')",
                    [group, this.plus(ahead).key, f"M{m}"],
                )
        db.execute(
            "INSERT INTO attendance (group_id, week, member, going, said_at) VALUES (?, ?, 'M9', 0, 'then')",
            [group, this.plus(-2).key],
        )
        for member, name in NAMES.items():
            db.execute(
                "INSERT INTO member_names (member, name, asked_at) VALUES (?, ?, 4e9) ON CONFLICT (member) DO NOTHING",
                [member, name],
            )
