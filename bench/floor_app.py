"""A floor for the benchmark: a Bolt app whose /paper listener only acks a fixed 12-block reply.

    python bench/floor_app.py paperbot PORT     # (a) paperbot's server stack and Bolt settings
    python bench/floor_app.py default PORT      # (b) a default App() on Bolt's built-in server
    python bench/floor_app.py paperbot PORT reply.json  # (diagnosis) ack that reply, e.g. the bot's own 40-paper page

Environment: SLACK_SIGNING_SECRET, SLACK_API_URL (the Slack stand-in: App() calls
auth.test), SLACK_BOT_TOKEN. Runs until killed.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path

from slack_bolt import App
from slack_sdk import WebClient


def reply_blocks(n: int = 12) -> list[dict]:
    """`n` blocks (12 for the floors), shaped like a paper list: a heading, papers with a button, a footer."""
    blocks: list[dict] = [
        {"type": "section", "text": {"type": "mrkdwn", "text": "*10 papers* tagged *parallelism-dp*"}}
    ]
    for i in range(1, n - 1):
        blocks.append(
            {
                "type": "section",
                "text": {
                    "type": "mrkdwn",
                    "text": (
                        f"*#{i}* <https://arxiv.org/abs/2401.0000{i}|Efficient Distributed Training of Large Models, part {i}>"
                        f"  `paper-{i}`\n通过数据并行与流水线并行实现高效的大模型训练，显著降低通信开销。"
                    ),
                },
                "accessory": {
                    "type": "button",
                    "text": {"type": "plain_text", "text": "Sign up", "emoji": True},
                    "action_id": f"run:{i}",
                    "value": f"signup {i}",
                },
            }
        )
    blocks.append(
        {"type": "context", "elements": [{"type": "mrkdwn", "text": "Sign up: `/paper signup <paper> [<date>]`"}]}
    )
    return blocks


def build(kind: str, reply: dict | None = None) -> App:
    secret = os.environ["SLACK_SIGNING_SECRET"]
    token = os.environ.get("SLACK_BOT_TOKEN", "xoxb-bench")
    client = WebClient(base_url=os.environ["SLACK_API_URL"], token=token)
    if kind == "paperbot":
        # The settings bot/slack/app.py's build_app uses.
        app = App(
            client=client,
            signing_secret=secret,
            process_before_response=True,
            request_verification_enabled=True,
            logger=logging.getLogger("floor.bolt"),
        )
    elif kind == "default":
        app = App(client=client, signing_secret=secret)
    else:
        raise SystemExit(f"unknown floor {kind!r}: use paperbot or default")
    reply = reply or {"response_type": "ephemeral", "text": "10 papers tagged parallelism-dp", "blocks": reply_blocks()}

    @app.command("/paper")
    def on_paper(ack):
        ack(**reply)

    return app


def main() -> None:
    kind, port = sys.argv[1], int(sys.argv[2])
    reply = json.loads(Path(sys.argv[3]).read_text(encoding="utf-8")) if len(sys.argv) > 3 else None  # diagnosis
    logging.basicConfig(level=logging.WARNING)
    app = build(kind, reply)
    if kind == "paperbot":
        from bot.slack.serve import http_server

        server = http_server(app, port, os.environ["SLACK_SIGNING_SECRET"], host="127.0.0.1")
        print("ready", flush=True)
        server.run()
    else:
        print("ready", flush=True)
        app.start(port=port)  # Bolt's built-in development server (http.server), as a default app runs


if __name__ == "__main__":
    main()
