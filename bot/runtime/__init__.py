"""What `run` starts: the scheduler, and serving one or both platforms."""
