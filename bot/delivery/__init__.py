"""Sending exactly once, the outbox, and the background lanes that drain it."""
