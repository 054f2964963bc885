"""Where the repository is, for tests that read its files (README, docs/, bot/, manifest.json)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
