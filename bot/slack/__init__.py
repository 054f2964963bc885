"""The Slack side of paperbot: Bolt app, Block Kit, Web API clients, serving."""
