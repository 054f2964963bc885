"""What the tests share: the stand-ins of Slack, Discord, arXiv and Crossref on 127.0.0.1, the clock,
the test groups' settings, and the harnesses that drive an adapter or a real process.

Tests import these as `tests.support.<module>`; fixtures live in the conftest.py files.
"""
