"""The HTTP door, the calendar feeds and the group's page."""
