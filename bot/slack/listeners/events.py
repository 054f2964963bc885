"""Events API: the App Home tab. Slack retries deliveries, so each event_id is handled once."""

from __future__ import annotations

import threading
from collections import OrderedDict


class _Seen:
    """The last few thousand event_ids."""

    def __init__(self, size: int = 5000):
        self._ids: OrderedDict[str, None] = OrderedDict()
        self._lock = threading.Lock()
        self._size = size

    def first_time(self, event_id: str | None) -> bool:
        if not event_id:
            return True
        with self._lock:
            if event_id in self._ids:
                return False
            self._ids[event_id] = None
            if len(self._ids) > self._size:
                self._ids.popitem(last=False)
            return True


def register(app, bot) -> None:
    seen = _Seen()

    @app.event("app_home_opened")
    def on_home_opened(ack, body, event):
        ack()
        if event.get("tab", "home") != "home" or not seen.first_time(body.get("event_id")):
            return
        bot.later(bot.publish_home, event.get("user", ""))
