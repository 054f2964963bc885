"""The console adapter: the /paper commands in a terminal (`paperbot console`)."""

from bot.console.render import inline, render, when
from bot.console.session import PLATFORM, read_member, serve

__all__ = ["PLATFORM", "inline", "read_member", "render", "serve", "when"]
