"""The meeting's discussion on Slack: questions and their digest as replies in the weekly post's
thread (marked in message metadata, to find them again after a crash), the reminder's list of
questions, and the post's Ask a question button.

    payload = discussion.in_thread(InThread(question))   # chat.postMessage arguments, thread_ts aside
"""

from __future__ import annotations

from bot.rich_text import Button
from bot.schedule.questions import Digest, InThread
from bot.schedule.rows import Question, Reminder, WeeklyPost
from bot.slack import blocks
from bot.slack.blocks import SECTION, _message, clip, escape, section, who

QUESTION_EVENT = "paperbot_question"
#: The Ask a question button's action_id: it opens the form (a modal), not a command.
ASK = "ask_form"
#: The form's callback_id; its private_metadata is the channel.
ASK_FORM = "ask_question"
#: A question's place in a list reply: its text cut to this many characters.
LISTED = 300


def _line(q: Question) -> str:
    return f"*{q.number}.* {clip(q.text, LISTED)} ({who(q.asked_by)})"


def in_thread(m: InThread) -> dict:
    q = m.question
    body = f"❓ *Question {q.number}* from {who(q.asked_by)}\n{clip(q.text, SECTION - 200)}"
    fallback = f"Question {q.number} from {who(q.asked_by)}: {escape(q.text)}"
    return {
        **_message(fallback, [section(body)]),
        "metadata": {"event_type": QUESTION_EVENT, "event_payload": {"key": str(q.id), "week": q.week.key}},
        "unfurl_links": False,
    }


def digest(d: Digest) -> dict:
    head = f"🗒 *The meeting starts: {len(d.questions)} question{'s' if len(d.questions) != 1 else ''} for it*"
    lines = [_line(q) for q in d.questions]
    fallback = f"The meeting starts: {len(d.questions)} questions. " + " ".join(
        f"{q.number}. {escape(q.text)}" for q in d.questions
    )
    return {
        **_message(fallback, [section(head), *blocks._sections(lines)]),
        "metadata": {"event_type": QUESTION_EVENT, "event_payload": {"key": d.week.key, "week": d.week.key}},
        "unfurl_links": False,
    }


def reminder(r: Reminder) -> dict:
    """The reminder, with the questions members brought so far."""
    payload = blocks.reminder(r)
    if r.questions:
        count = f"{len(r.questions)} question{'s' if len(r.questions) != 1 else ''}"
        payload["blocks"] += [section(f"❓ *{count} so far:*"), *blocks._sections([_line(q) for q in r.questions])]
        payload["blocks"] = payload["blocks"][: blocks.MAX_BLOCKS]
        payload["text"] += f" {count} so far."
    return payload


def weekly_post(post: WeeklyPost) -> dict:
    """The weekly post, with the Ask a question button in its actions while its meeting is ahead."""
    payload = blocks.weekly_post(post)
    if post.skipped:
        return payload
    ask = blocks.button(Button("Ask a question", f"ask {post.meeting.date().isoformat()}"), ASK)
    found = [b for b in payload["blocks"] if b.get("type") == "actions"]
    if found:
        found[-1]["elements"].append(ask)
    else:
        payload["blocks"].append({"type": "actions", "elements": [ask]})
    return payload
