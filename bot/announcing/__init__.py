"""Changes to the schedule, and sending their announcements and post updates in order."""
