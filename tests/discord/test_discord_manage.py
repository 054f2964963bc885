"""`/paper manage …`: the admins' verbs on one paper as a subcommand group, so that `/paper` stays
within Discord's 25 subcommands; every verb of the core stays reachable."""

from __future__ import annotations

import pytest

from bot.catalog import queries as catalog
from bot.chat import commands, registry
from bot.discord import definition
from tests.support.discord_group import ADMIN, MEMBER, respond
from tests.support.discord_standin import check_commands, slash


def manage(verb: str, who: str, **options) -> dict:
    """`/paper manage <verb> option:value …` as Discord sends it (with `focused`, an autocomplete)."""
    interaction = slash(verb, who, **options)
    interaction["data"]["options"] = [{"name": "manage", "type": 2, "options": interaction["data"]["options"]}]
    return interaction


def reachable(body: list[dict]) -> dict[str, str]:
    """Each core verb that `/paper` reaches, with the path Discord shows for it."""
    paths = {}
    for sub in body[0]["options"]:
        if sub["type"] == definition.SUBCOMMAND:
            paths[sub["name"]] = sub["name"]
            continue
        for inner in sub["options"]:
            data = {
                "name": "paper",
                "options": [{"name": sub["name"], "type": 2, "options": [{**inner, "options": []}]}],
            }
            paths[definition.line_of(data).split()[0]] = f"{sub['name']} {inner['name']}"
    return paths


def options(body: list[dict], *path: str) -> list[tuple[str, bool]]:
    level = body[0]["options"]
    for name in path:
        [sub] = [s for s in level if s["name"] == name]
        level = sub.get("options") or []
    return [(o["name"], o["required"]) for o in level]


def test_the_definition_is_valid_for_discord_and_reaches_every_verb_of_the_core():
    body = definition.definition()
    check_commands(body)
    assert len(body[0]["options"]) <= 25
    paths = reachable(body)
    assert set(paths) == set(commands.VERBS)
    assert [paths[v] for v in ("edit", "archive", "restore", "delete")] == [
        "manage edit",
        "manage archive",
        "manage restore",
        "manage delete",
    ]
    assert paths["groups"] == "group list"
    for verb in ("edit", "archive", "restore", "delete"):
        assert options(body, "manage", verb) == [("paper", True)] + ([("confirm", False)] if verb == "delete" else [])
        [paper] = [o for s in body[0]["options"] if s["name"] == "manage" for o in s["options"] if o["name"] == verb]
        assert paper["options"][0]["autocomplete"] is True
    # The option names the contract gives.
    assert options(body, "slides") == [("talk", True), ("url", True)]
    assert options(body, "withdraw") == [("slot", True)]
    assert options(body, "suggest") == [("link", True)]
    assert options(body, "vote") == [("paper", True)]
    assert options(body, "add") == [("link", False), ("tags", False)]
    assert options(body, "group", "set") == [("setting", True), ("value", True)]
    for verb in ("suggestions", "past", "calendar"):
        assert paths[verb] == verb


def test_a_verb_past_discords_limit_fails_the_definition_loudly(monkeypatch):
    monkeypatch.setattr(commands, "VERBS", dict(commands.VERBS))
    for i in range(4):
        registry.verb(commands.VERBS, f"extra{i}", "an extra verb", f"extra{i}")(lambda ctx: None)
    with pytest.raises(definition.TooManySubcommands, match="extra3"):
        definition.definition()


def test_manage_archive_is_answered_as_the_cores_archive(make_bot, discord, tmp_path):  # noqa: F811
    interaction = manage("archive", ADMIN, paper="7")
    assert definition.line_of(interaction["data"]) == "archive 7"
    bot = make_bot()
    archived = respond(bot, discord, interaction)["data"]["content"]
    assert catalog.archived_at(bot.store, catalog.find(bot.store, "7")) is not None
    # The same words as the core's `archive 7` typed as a verb of its own, on a database of its own.
    other = make_bot(PAPERBOT_DB=str(tmp_path / "other.db"))
    assert respond(other, discord, slash("archive", ADMIN, paper="7"))["data"]["content"] == archived
    restored = respond(bot, discord, manage("restore", ADMIN, paper="7"))["data"]["content"]
    assert "#7" in restored and catalog.archived_at(bot.store, catalog.find(bot.store, "7")) is None


@pytest.mark.parametrize("verb", ["edit", "archive", "restore", "delete"])
def test_a_member_who_is_no_admin_is_refused_in_one_line_and_nothing_changes(make_bot, discord, verb):  # noqa: F811
    bot = make_bot()
    before = catalog.find(bot.store, "7", with_tags=True)
    refused = respond(bot, discord, manage(verb, MEMBER, paper="7"))
    assert refused["type"] == 4
    said = refused["data"]["content"]
    assert "Only admins" in said and "\n" not in said
    after = catalog.find(bot.store, "7", with_tags=True)
    assert after == before and catalog.archived_at(bot.store, after) is None


def test_manage_edit_opens_the_filled_in_form_and_takes_a_field_typed_after_the_paper(make_bot, discord):  # noqa: F811
    bot = make_bot()
    opened = respond(bot, discord, manage("edit", ADMIN, paper="7"))
    assert opened["type"] == 9
    filled = {c["components"][0]["custom_id"]: c["components"][0].get("value") for c in opened["data"]["components"]}
    assert filled["title"] == catalog.find(bot.store, "7").title
    saved = respond(bot, discord, manage("edit", ADMIN, paper="7 tags moe, parallelism-dp"))["data"]["content"]
    assert saved.startswith("Saved **#7**")
    assert set(catalog.find(bot.store, "7", with_tags=True).tags) == {"moe", "parallelism-dp"}


def test_a_paper_option_in_manage_autocompletes_from_the_catalog(make_bot, discord):  # noqa: F811
    bot = make_bot()
    response = respond(bot, discord, manage("delete", ADMIN, focused="paper", paper="diloco"))
    choices = response["data"]["choices"]
    assert response["type"] == 8 and any("DiLoCo" in c["name"] for c in choices)


def test_the_setup_guide_lists_the_subcommands_as_discord_shows_them():
    from pathlib import Path

    guide = (Path(__file__).parents[2] / "docs" / "discord-setup.md").read_text(encoding="utf-8")
    listed = [
        line.split("|")[1].strip().strip("`") for line in guide.split("## 5.")[1].splitlines() if line[:3] == "| `"
    ]
    shown = []
    for sub in definition.definition()[0]["options"]:
        inner = [f"{sub['name']} {o['name']}" for o in sub["options"]] if sub["type"] == 2 else []
        shown += inner or [sub["name"]]
    assert listed == shown


def test_help_and_hints_on_discord_name_the_subcommands_discord_has(make_bot, discord):  # noqa: F811
    bot = make_bot()
    helped = respond(bot, discord, slash("help", MEMBER))["data"]
    shown = helped["content"] + "".join(e.get("description", "") for e in helped.get("embeds", []))
    assert "`/paper manage archive <paper>`" in shown and "`/paper group list`" in shown
    assert "`/paper archive" not in shown and "`/paper groups`" not in shown
    respond(bot, discord, manage("archive", ADMIN, paper="7"))
    refused = respond(bot, discord, slash("vote", MEMBER, paper="7"))["data"]["content"]
    assert "`/paper manage restore 7`" in refused


@pytest.mark.parametrize(("group", "known"), [("group", "`show`, `start`"), ("manage", "`edit`, `archive`")])
def test_an_unknown_subcommand_of_a_group_is_refused_in_one_line_naming_the_ones_it_has(
    make_bot,  # noqa: F811
    discord,  # noqa: F811
    group,
    known,
):
    interaction = slash("help", ADMIN)
    interaction["data"]["options"] = [{"name": group, "type": 2, "options": [{"name": "nuke", "type": 1}]}]
    bot = make_bot()
    before = catalog.count(bot.store)
    refused = respond(bot, discord, interaction)
    said = refused["data"]["content"]
    assert refused["type"] == 4 and "\n" not in said, said
    assert f"/paper {group}" in said and "nuke" in said and known in said, said
    assert catalog.count(bot.store) == before
