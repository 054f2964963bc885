"""Reading a Slack reply as a member sees it: its text, its buttons, and what Slack checks of it."""

from __future__ import annotations

import html

from tests.support.slack_standin import check_message


def nodes(tree) -> list[dict]:
    """Every dict inside a reply's blocks, depth first."""
    found: list[dict] = []

    def walk(node):
        if isinstance(node, dict):
            found.append(node)
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(tree)
    return found


def blocks_text(reply: dict) -> str:
    """Everything a reader sees in a reply's blocks, joined (entities decoded, as Slack shows them)."""
    texts = [
        n["text"] for n in nodes(reply.get("blocks", [])) if n.get("type") in ("mrkdwn", "plain_text") and "text" in n
    ]
    return html.unescape("\n".join(texts))


def buttons(reply: dict) -> list[dict]:
    return [n for n in nodes(reply.get("blocks", [])) if n.get("type") == "button"]


def valid(reply: dict) -> dict:
    """The reply passes what Slack checks (blocks, limits, text fallback), and is ephemeral."""
    check_message(reply)
    assert reply.get("response_type") == "ephemeral"
    return reply
