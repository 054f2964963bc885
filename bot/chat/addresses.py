"""The `/paper calendar` answer: the addresses of a member's calendar, the group's calendar and
its page, and what `group set calendar-secret new` says."""

from __future__ import annotations

from bot.chat.replies import Notice
from bot.rich_text import Code, command_code, text
from bot.store.connection import Store
from bot.web import feeds


def _address_lines(found: dict[str, str], *, calendar: str = "", talks: str = "") -> tuple:
    """The group's page, the group's calendar and the member's own talks (`urls`), one line each, the
    last without its line break; `calendar` and `talks` add a note to their line's label."""

    return (
        "The group's page: ",
        Code(found["page"]),
        f"\nThe group's calendar{calendar}: ",
        Code(found["group"]),
        f"\nYour own talks{talks}: ",
        Code(found["member"]),
    )


def renewed_reply(store: Store, public_url: str | None, group_id: int, member: str):
    """The answer to `group set calendar-secret new`: the group's new addresses, and the member's own."""

    if not public_url:
        return Notice(
            text(
                "The group's calendar and page have a new secret. This bot does not serve them: whoever runs it "
                "can set PAPERBOT_PUBLIC_URL to serve them."
            )
        )
    return Notice(
        text(
            "The group's calendar and page have new addresses; the old ones no longer answer.\n",
            *_address_lines(feeds.urls(store, public_url, group_id, member), talks=" (unchanged)"),
            "\nMembers get the new ones with ",
            command_code("calendar"),
            ".",
        )
    )


def calendar_reply(
    store: Store, public_url: str | None, group_id: int, member: str, renew: bool, *, operator: bool = False
) -> Notice:
    """The answer to `calendar` (the member's addresses) or `calendar renew` (a new member secret).
    `operator`: asked by whoever runs paperbot (the console), who can write the calendar and page as files."""
    if not public_url and operator:
        return Notice(
            text(
                "This bot does not serve calendars (PAPERBOT_PUBLIC_URL is not set). Write them as files instead: ",
                Code("paperbot calendar > group.ics"),
                " for the group's calendar, ",
                Code("paperbot site DIR"),
                " for its page.",
            )
        )
    if not public_url:  # not the member's mistake: said as news, not as a refusal
        return Notice(
            text(
                "This bot does not serve calendars: whoever runs it can set PAPERBOT_PUBLIC_URL to serve them. "
                "Meanwhile ",
                command_code("schedule"),
                " lists the coming weeks.",
            )
        )
    if renew:
        feeds.renew_member_secret(store, member)
    found = feeds.urls(store, public_url, group_id, member)
    renewed = "Your calendar has a new address; the old one no longer answers.\n" if renew else ""
    return Notice(
        text(
            renewed,
            *_address_lines(found, calendar=" (subscribe to it in your calendar program)"),
            "\nKeep them to yourself; ",
            command_code("calendar renew"),
            " gives your own calendar a new address.",
        )
    )
