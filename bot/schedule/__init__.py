"""The reading groups and their weeks: slots, sign-ups, talks, the weekly post, reminders."""
