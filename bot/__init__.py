"""paperbot: a Slack bot for research reading groups."""
