"""Places: the Slack workspaces and Discord servers one install serves, each with everything of its own."""
