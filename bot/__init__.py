"""paperbot: a chat bot for research reading groups.

Its platforms are adapters beside the core: bot/slack, bot/discord and bot/console.
"""
