"""Bolt listeners, one module per kind of thing Slack sends; each has register(app, bot)."""
