"""Where a /paper command spends its time: cProfile of Bolt's dispatch, in process.

    python bench/profile_command.py DB "search training model 训练" [-n 200] [--sort tottime] [--limit 30]
    python bench/profile_command.py DB "signup {n} {date}" --user "UP{i}"   # a new paper and week each time

In TEXT and --user, {i} is the request's index, {n} = 50000 + i (a paper
number) and {date} a Monday 30 + i weeks ahead, so that sign-ups succeed (the bot books at most
520 weeks ahead: `-n` up to about 480).

Builds the same SlackBot and Bolt app as `python -m bot run` (against a Slack
stand-in on 127.0.0.1), signs the request as Slack does, and profiles
`app.dispatch` (verification, middleware, the listener, the reply's JSON) over
`-n` requests, after a few unprofiled ones. Only HTTP and waitress are left out.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # bot, and the stand-ins: tests.support


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("db", help="a SQLite file or a postgresql:// URL")
    p.add_argument("text")
    p.add_argument("-n", type=int, default=200)
    p.add_argument("--sort", default="cumulative")
    p.add_argument("--limit", type=int, default=35)
    p.add_argument("--user", default="U1")
    args = p.parse_args()

    from slack_bolt.request import BoltRequest
    from slack_sdk.signature import SignatureVerifier

    from bot.catalog.queries import open_store
    from bot.slack.app import SlackBot, build_app
    from bot.slack.settings import SlackSettings
    from tests.support.slack_standin import SlackStandin

    secret = "profile-secret"
    with SlackStandin(channels={"C0BENCH"}) as slack:
        settings = SlackSettings.load(
            {
                "SLACK_BOT_TOKEN": "xoxb-profile",
                "SLACK_SIGNING_SECRET": secret,
                "SLACK_API_URL": slack.api_url,
                "PAPERBOT_DB": str(args.db),
                "PAPERBOT_CHANNEL": "C0BENCH",
                "PAPERBOT_TIMEZONE": "UTC",
            },
            dotenv=None,
        )
        store = open_store(settings.db_path)
        bot = SlackBot(settings, store)
        app = build_app(bot)
        verifier = SignatureVerifier(secret)

        from datetime import date, timedelta

        monday = date.today() + timedelta(days=7 - date.today().weekday())

        def fill(template: str, i: int) -> str:
            return template.format(i=i, n=50_000 + i, date=(monday + timedelta(weeks=30 + i)).isoformat())

        def request(i: int) -> BoltRequest:
            body = urlencode(
                {
                    "team_id": "T0TEST",
                    "channel_id": "C0BENCH",
                    "user_id": fill(args.user, i),
                    "command": "/paper",
                    "text": fill(args.text, i),
                    "response_url": "https://hooks.slack.invalid/x",
                    "trigger_id": "1.2.3",
                    "api_app_id": "A0TEST",
                }
            )
            ts = str(int(time.time()))
            return BoltRequest(
                body=body,
                headers={
                    "content-type": "application/x-www-form-urlencoded",
                    "x-slack-request-timestamp": ts,
                    "x-slack-signature": verifier.generate_signature(timestamp=ts, body=body),
                },
            )

        for i in range(5):
            assert app.dispatch(request(i)).status == 200
        requests = [request(i) for i in range(5, 5 + args.n)]
        profiler = cProfile.Profile()
        start = time.perf_counter()
        profiler.enable()
        for r in requests:
            app.dispatch(r)
        profiler.disable()
        elapsed = time.perf_counter() - start
        print(f"{args.text!r}: {elapsed / args.n * 1000:.2f} ms a dispatch under cProfile ({args.n} requests)")
        pstats.Stats(profiler).strip_dirs().sort_stats(args.sort).print_stats(args.limit)
        bot.close()
        store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
