"""PAPERBOT_GROUP_NAME names the group on its page and in its calendar (X-WR-CALNAME)."""

from __future__ import annotations

import io
from contextlib import redirect_stdout

import icalendar
import pytest

from bot import cli


class _Out(io.StringIO):
    """stdout with the bytes buffer that `calendar` writes to."""

    def __init__(self):
        super().__init__()
        self.buffer = io.BytesIO()


@pytest.mark.parametrize(
    ("typed", "shown"), [("  Systems   Reading Club ", "Systems Reading Club"), ("", "Reading group")]
)
def test_the_group_name_titles_the_calendar_and_the_page(tmp_path, monkeypatch, typed, shown):
    monkeypatch.setenv("PAPERBOT_DB", str(tmp_path / "paperbot.db"))
    monkeypatch.setenv("PAPERBOT_GROUP_NAME", typed)
    out = _Out()
    with redirect_stdout(out):
        assert cli.main(["calendar"]) == 0
    assert str(icalendar.Calendar.from_ical(out.buffer.getvalue())["X-WR-CALNAME"]) == shown

    with redirect_stdout(io.StringIO()):
        assert cli.main(["site", str(tmp_path / "public")]) == 0
    assert f"<title>{shown} — talks and papers</title>" in (tmp_path / "public" / "index.html").read_text()
