"""The meeting's discussion on Discord: a thread on the weekly post (its id is the post's), the
questions and their digest posted in it (an embed whose footer names the delivery, to find it again),
the reminder's list of questions, and the post's Ask a question button and its form (a modal).

    body = discussion.in_thread(InThread(question))
"""

from __future__ import annotations

from bot.discord import render
from bot.discord.render import COLOUR, MAX_DESCRIPTION, _body, clip, cut, escape, who
from bot.schedule.questions import Digest, InThread
from bot.schedule.rows import Question, Reminder, WeeklyPost

QUESTION_FOOTER = "question · "
DIGEST_FOOTER = "questions · "
#: The Ask a question button's custom_id, and its form's: this prefix and the meeting's date.
ASK = "ask:"
#: The form's one input.
FIELD = "question"
#: A question's place in a list: its text cut to this many characters.
LISTED = 300


def thread_name(key: str) -> str:
    """The name of a post's thread (Discord allows 100 characters)."""
    return f"Questions · {key}"[:100]


def _line(q: Question) -> str:
    return f"**{q.number}.** {clip(q.text, LISTED)} ({who(q.asked_by)})"


def in_thread(m: InThread) -> dict:
    q = m.question
    embed = {
        "description": cut(f"❓ **Question {q.number}** from {who(q.asked_by)}\n{escape(q.text)}", MAX_DESCRIPTION),
        "color": COLOUR,
        "footer": {"text": f"{QUESTION_FOOTER}{q.id}"},
    }
    return _body("", [embed])


def digest(d: Digest) -> dict:
    n = len(d.questions)
    head = f"🗒 **The meeting starts: {n} question{'s' if n != 1 else ''} for it**"
    embed = {
        "description": cut("\n".join([head, *(_line(q) for q in d.questions)]), MAX_DESCRIPTION),
        "color": COLOUR,
        "footer": {"text": f"{DIGEST_FOOTER}{d.week.key}"},
    }
    return _body("", [embed])


def reminder(r: Reminder) -> dict:
    """The reminder, with the questions members brought so far."""
    body = render.reminder(r)
    if r.questions:
        n = len(r.questions)
        listed = "\n".join([f"❓ **{n} question{'s' if n != 1 else ''} so far:**", *(_line(q) for q in r.questions)])
        body["embeds"].append({"description": cut(listed, MAX_DESCRIPTION), "color": COLOUR})
    return body


def weekly_post(post: WeeklyPost) -> dict:
    """The weekly post, with the Ask a question button beside its other buttons."""
    body = render.weekly_post(post)
    if post.skipped:
        return body
    ask = {"type": 2, "style": 2, "label": "Ask a question", "custom_id": f"{ASK}{post.meeting.date().isoformat()}"}
    rows = body["components"]
    if rows and len(rows[-1]["components"]) < 5:
        rows[-1]["components"].append(ask)
    else:
        rows.append({"type": 1, "components": [ask]})
    return body


def ask_form(date: str) -> dict:
    """The form the button opens: one question for the meeting of `date`."""
    item = {
        "type": 4,
        "custom_id": FIELD,
        "label": f"Your question for {date}"[:45],
        "style": 2,
        "required": True,
        "max_length": 500,
    }
    return {"custom_id": f"{ASK}{date}", "title": "Ask a question", "components": [{"type": 1, "components": [item]}]}


def date_of(custom_id: object) -> str | None:
    """The meeting's date of an Ask a question button or form; None for any other custom_id."""
    if isinstance(custom_id, str) and custom_id.startswith(ASK):
        return custom_id.removeprefix(ASK)[:10]
    return None
