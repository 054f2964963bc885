"""The history's charts on the group's page: SVG that parses on its own, says every number, and escapes
members' text; the same charts as a PNG for chat."""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET
from datetime import UTC, datetime

from PIL import Image

from bot.schedule import history
from bot.web import chart_png, charts, feeds, site
from tests.support.history import NAMES, seed_history
from tests.support.repo import ROOT
from tests.support.slack_group import settings_for

NOW = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)
SVG = "{http://www.w3.org/2000/svg}"


def _drawn(tmp_path, store) -> list[charts.Chart]:
    settings = settings_for(tmp_path)
    seed_history(store, settings.group, NOW)
    return charts.of_history(history.of_group(store, settings.group, NOW), NAMES.__getitem__)


def test_each_chart_is_svg_that_parses_titled_described_and_carrying_its_numbers(tmp_path, store):
    drawn = _drawn(tmp_path, store)
    assert [c.title for c in drawn] == ["Talks per month", "Talks per presenter", "Talks per tag", "Going, per meeting"]
    for chart in drawn:
        root = ET.fromstring(charts.svg(chart))  # well-formed XML on its own: names and tags escaped
        assert root.tag == f"{SVG}svg" and re.fullmatch(r"0 0 [\d.]+ [\d.]+", root.get("viewBox"))
        assert (
            root.get("role") == "img"
            and root.get("aria-labelledby") == f"chart-{chart.key}-title chart-{chart.key}-desc"
        )
        assert root.find(f"{SVG}title").text == chart.title
        desc = root.find(f"{SVG}desc").text
        bars = root.findall(f"{SVG}rect")
        assert len(bars) == len(chart.bars)
        texts = [t.text for t in root.iter(f"{SVG}text")]
        for (label, n), bar in zip(chart.bars, bars, strict=True):
            assert f"{label}, {chart.counted(n)}" in desc, "the description says every bar"
            assert bar.find(f"{SVG}title").text == f"{label}: {chart.counted(n)}"
            assert str(n) in texts, "each number written beside its bar"
    presenters = ET.fromstring(charts.svg(drawn[1]))
    shown = [t.text for t in presenters.iter(f"{SVG}text")]
    assert "Grace <Hopper>" in shown and "李华" in shown and "3" in shown
    assert "Grace &lt;Hopper&gt;" in charts.svg(drawn[1]), "markup in a name is text"
    widths = [float(r.get("width")) for r in presenters.findall(f"{SVG}rect")]
    assert widths[0] > widths[1] == widths[2] > 0, "bars as long as their numbers: 3, 2, 2"


def test_a_long_name_is_cut_to_fit_and_wide_characters_count_double():
    assert charts.fit("a" * 40).endswith("…") and charts.ems(charts.fit("a" * 40)) <= charts.LABEL_EMS
    assert charts.ems("李华") == 2 and charts.fit("李" * 20) == "李" * 13 + "…"


def test_the_page_has_the_history_section_served_and_static(tmp_path, store):
    settings = settings_for(tmp_path)
    seed_history(store, settings.group, NOW)
    group = feeds.environment_group(settings)
    for html in (
        site.page(store, group, NOW, ask=NAMES.get),
        site.page(store, group, NOW, ask=NAMES.get, static=True),
    ):
        section = html.split('<section id="stats">', 1)[1].split("</section>", 1)[0]
        assert section.count("<svg ") == 4 and "Talks per presenter" in section and "李华" in section
        assert "<script" not in section and '<a href="#stats">Stats</a>' in html


def test_a_group_without_talks_says_its_history_starts_with_the_first(tmp_path, store):
    html = site.page(store, feeds.environment_group(settings_for(tmp_path)), NOW)
    section = html.split('<section id="stats">', 1)[1].split("</section>", 1)[0]
    assert "<svg" not in section and "the history starts with the first" in section


def test_the_png_draws_the_same_charts(tmp_path, store):
    data = chart_png.png(_drawn(tmp_path, store))
    image = Image.open(io.BytesIO(data))
    assert image.format == "PNG" and image.width >= 1400 and image.height > 600
    blue = tuple(int(charts.BAR[i : i + 2], 16) for i in (1, 3, 5))
    assert sum(n for n, colour in image.getcolors(1 << 20) if colour == blue) > 10_000, "its bars are drawn"


def test_the_docker_image_has_a_font_the_picture_finds_for_chinese_names():
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "fonts-wqy-microhei" in dockerfile
    assert "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc" in chart_png.FONTS  # where Debian's package puts it
