"""paperbot: a chat bot for research reading groups; its platforms are adapters (bot/slack, bot/console)."""
