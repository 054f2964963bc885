"""paperbot's schema, one migration per release that changed it: applied in order at open, each once,
and never edited after a release (a database the release made has it applied already).

    migrations.apply(db)             # what Store does to every file it opens
"""

from __future__ import annotations

import re
import secrets

import sqlite_utils
from sqlite_utils.migrations import Migrations

migrations = Migrations("paperbot")


@migrations()
def m001_catalog(db: sqlite_utils.Database) -> None:
    db.executescript(
        """
        CREATE TABLE meta (key TEXT NOT NULL PRIMARY KEY, value TEXT NOT NULL);

        -- number: the stable number shown beside a paper (#7); never reused.
        -- id: the short slug (streaming-diloco) that imports match on.
        CREATE TABLE papers (
            number INTEGER PRIMARY KEY AUTOINCREMENT,
            id TEXT NOT NULL UNIQUE,
            title TEXT NOT NULL,
            summary TEXT NOT NULL DEFAULT '',
            url TEXT NOT NULL DEFAULT '',
            added_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        );
        CREATE TABLE tags (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
        CREATE TABLE paper_tags (
            tag INTEGER NOT NULL REFERENCES tags(id),
            paper INTEGER NOT NULL REFERENCES papers(number) ON DELETE CASCADE,
            PRIMARY KEY (tag, paper)
        ) WITHOUT ROWID;
        CREATE INDEX paper_tags_by_paper ON paper_tags (paper, tag);

        -- Search text, one row per paper (rowid = papers.number), written by
        -- catalog.py in the same transaction as the paper. Han and kana runs
        -- are stored as overlapping bigrams, see search_terms.py.
        CREATE VIRTUAL TABLE paper_search USING fts5(title, summary, tags, prefix='2 3');
        """
    )


@migrations()
def m002_schedule(db: sqlite_utils.Database) -> None:
    db.executescript(
        """
        -- One row per week that has a presenter or is skipped; the primary key
        -- is what makes "one presenter a week" true under any race.
        CREATE TABLE slots (
            week TEXT NOT NULL PRIMARY KEY,
            kind TEXT NOT NULL CHECK (kind IN ('presenter', 'skipped')),
            presenter TEXT,
            paper INTEGER REFERENCES papers(number),
            booked_by TEXT NOT NULL,
            booked_at TEXT NOT NULL,
            CHECK ((kind = 'presenter') = (presenter IS NOT NULL AND paper IS NOT NULL))
        );
        CREATE INDEX slots_by_presenter ON slots (presenter, week);
        CREATE INDEX slots_by_paper ON slots (paper, week);

        -- Messages that must reach the chat exactly once: the weekly post
        -- (kind 'post', dest = channel, key = week) and presenter reminders
        -- (kind 'reminder', dest = user, key = week). See delivery.py.
        CREATE TABLE deliveries (
            kind TEXT NOT NULL,
            dest TEXT NOT NULL,
            key TEXT NOT NULL,
            state TEXT NOT NULL CHECK (state IN ('claimed', 'sending', 'sent')),
            paper INTEGER REFERENCES papers(number),
            owner TEXT,
            lease_until REAL NOT NULL DEFAULT 0,   -- unix time; the owner's claim lapses after it
            retry_at REAL NOT NULL DEFAULT 0,      -- unix time; after a refusal, wait before trying again
            claimed_at REAL NOT NULL,              -- unix time of the first claim: no attempt is older
            attempts INTEGER NOT NULL DEFAULT 0,
            channel TEXT,
            ts TEXT,
            last_error TEXT,
            updated_at TEXT NOT NULL,
            PRIMARY KEY (kind, dest, key)
        );
        CREATE INDEX deliveries_by_paper ON deliveries (kind, paper) WHERE state = 'sent';
        """
    )


@migrations()
def m003_tag_counts(db: sqlite_utils.Database) -> None:
    # `tag` answers "N papers tagged X" on every call, and counting 40,000
    # index entries each time costs milliseconds: each tag keeps its count,
    # recounted by catalog.py in the transaction that changes its papers.
    db.executescript(
        """
        ALTER TABLE tags ADD COLUMN papers INTEGER NOT NULL DEFAULT 0;
        UPDATE tags SET papers = (SELECT count(*) FROM paper_tags WHERE tag = tags.id);
        """
    )


@migrations()
def m004_search_groups(db: sqlite_utils.Database) -> None:
    # "Best first" reads titles, then tags, then everything. A column filter on
    # the one index would walk every match of a common word to find the few in
    # titles, so titles and tags get indexes of their own. search_vocab lists
    # the indexed words, so that a prefix can be spelled as the words it stands for:
    # here every term of the index as it stands (SQL only, so this step never changes).
    db.executescript(
        """
        CREATE VIRTUAL TABLE paper_titles USING fts5(text, prefix='2 3');
        CREATE VIRTUAL TABLE paper_tag_words USING fts5(text, prefix='2 3');
        CREATE TABLE search_vocab (term TEXT NOT NULL PRIMARY KEY) WITHOUT ROWID;
        INSERT INTO paper_titles (rowid, text) SELECT rowid, title FROM paper_search;
        INSERT INTO paper_tag_words (rowid, text) SELECT rowid, tags FROM paper_search;
        CREATE VIRTUAL TABLE temp.m004_terms USING fts5vocab(main, paper_search, 'row');
        INSERT INTO search_vocab (term) SELECT term FROM temp.m004_terms;
        DROP TABLE temp.m004_terms;
        """
    )


@migrations()
def m005_valid_ids(db: sqlite_utils.Database) -> None:
    # Ids that earlier versions made or accepted but that no longer read back: only digits
    # (`1999` now reads as paper number 1999) and double dashes from cutting a long slug
    # (`…-distributed--2`). Renamed, so that every paper can be named by its id and an
    # export imports again whole; everything else refers to papers by number.

    valid = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
    taken = {pid for (pid,) in db.execute("SELECT id FROM papers")}
    for number, pid in db.execute("SELECT number, id FROM papers ORDER BY number").fetchall():
        if valid.match(pid) and not pid.isdigit():
            continue
        new = re.sub(r"-+", "-", re.sub(r"[^a-z0-9-]", "", pid.lower())).strip("-")
        if not new or new.isdigit():
            new = f"paper-{new}".rstrip("-")
        candidate, n = new[:40].strip("-"), 1
        while candidate in taken:
            n += 1
            candidate = f"{new[:36].strip('-')}-{n}"
        taken.discard(pid)
        taken.add(candidate)
        db.execute("UPDATE papers SET id = ? WHERE number = ?", [candidate, number])


@migrations()
def m006_outbox(db: sqlite_utils.Database) -> None:
    # Announcements and post updates, kept until the chat platform has them (see outbox.py).
    db.executescript(
        """
        CREATE TABLE outbox (
            id INTEGER PRIMARY KEY,
            kind TEXT NOT NULL CHECK (kind IN ('announce', 'refresh')),
            payload TEXT NOT NULL,                  -- JSON
            created_at REAL NOT NULL,               -- unix time
            next_try REAL NOT NULL DEFAULT 0,       -- unix time: not before
            attempts INTEGER NOT NULL DEFAULT 0,
            owner TEXT,
            lease_until REAL NOT NULL DEFAULT 0,    -- unix time; a taken item is its owner's until then
            last_error TEXT
        );
        CREATE INDEX outbox_due ON outbox (next_try);
        """
    )


@migrations()
def m007_message_ref(db: sqlite_utils.Database) -> None:
    # A delivered message is known by its platform's own reference (a message's timestamp or id):
    # the column says what it holds for any platform. RENAME COLUMN keeps every row.
    db.execute("ALTER TABLE deliveries RENAME COLUMN ts TO message_ref")


@migrations()
def m008_groups(db: sqlite_utils.Database) -> None:
    # Several reading groups in one install (see groups.py). Group 1 is the environment's
    # (PAPERBOT_CHANNEL and the rest): its row holds no settings, only its existence, so that
    # every earlier sign-up, skip and post is its history. A group of the chat is one channel.
    # slots gets group_id in its primary key: SQLite changes a primary key only by a new
    # table, so slots is rebuilt, every row kept as group 1's, with its CHECKs and indexes.
    db.executescript(
        """
        CREATE TABLE groups (
            id INTEGER PRIMARY KEY,
            platform TEXT,                      -- the adapter's name; NULL for group 1 (the environment's)
            channel TEXT,                       -- the platform's channel id; NULL for group 1 (PAPERBOT_CHANNEL)
            timezone TEXT NOT NULL DEFAULT 'UTC',
            schedule TEXT NOT NULL DEFAULT '0 9 * * mon',
            meeting TEXT,                       -- 'thu 16:00'; NULL: the post's day and time
            remind_days INTEGER NOT NULL DEFAULT 2,
            focus_tag TEXT,
            admins TEXT NOT NULL DEFAULT '',    -- member ids, comma-separated
            rotation TEXT NOT NULL DEFAULT 'catalog' CHECK (rotation IN ('catalog', 'votes')),
            meeting_minutes INTEGER NOT NULL DEFAULT 60,
            stopped INTEGER NOT NULL DEFAULT 0 CHECK (stopped IN (0, 1)),
            started_by TEXT,
            updated_at TEXT NOT NULL,
            CHECK ((id = 1) = (channel IS NULL))
        );
        CREATE UNIQUE INDEX groups_by_channel ON groups (channel) WHERE channel IS NOT NULL;
        INSERT INTO groups (id, updated_at) VALUES (1, strftime('%Y-%m-%dT%H:%M:%S+00:00', 'now'));

        CREATE TABLE slots_by_group (
            group_id INTEGER NOT NULL DEFAULT 1 REFERENCES groups(id),
            week TEXT NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('presenter', 'skipped')),
            presenter TEXT,
            paper INTEGER REFERENCES papers(number),
            booked_by TEXT NOT NULL,
            booked_at TEXT NOT NULL,
            CHECK ((kind = 'presenter') = (presenter IS NOT NULL AND paper IS NOT NULL)),
            PRIMARY KEY (group_id, week)
        );
        INSERT INTO slots_by_group (group_id, week, kind, presenter, paper, booked_by, booked_at)
            SELECT 1, week, kind, presenter, paper, booked_by, booked_at FROM slots;
        DROP TABLE slots;
        ALTER TABLE slots_by_group RENAME TO slots;
        CREATE INDEX slots_by_presenter ON slots (presenter, week);
        CREATE INDEX slots_by_paper ON slots (paper, week);
        """
    )


@migrations()
def m009_paper_details(db: sqlite_utils.Database) -> None:
    # Papers gain authors and a year (both optional), and the arXiv id and DOI their link names,
    # normalised (paper_refs.py), so that a paper added again by id, DOI or link is found, not
    # added twice. Suggestions wait apart from the catalog and get a paper number only when accepted.
    db.executescript(
        """
        ALTER TABLE papers ADD COLUMN authors TEXT NOT NULL DEFAULT '';
        ALTER TABLE papers ADD COLUMN year INTEGER;
        ALTER TABLE papers ADD COLUMN arxiv_id TEXT;   -- 2501.18512, hep-th/9901001: no version
        ALTER TABLE papers ADD COLUMN doi TEXT;        -- lower case
        CREATE INDEX papers_by_arxiv_id ON papers (arxiv_id) WHERE arxiv_id IS NOT NULL;
        CREATE INDEX papers_by_doi ON papers (doi) WHERE doi IS NOT NULL;

        CREATE TABLE suggestions (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            group_id INTEGER NOT NULL DEFAULT 1,
            suggested_by TEXT NOT NULL,            -- the member's user id on the platform it came from
            platform TEXT NOT NULL DEFAULT '',     -- slack, discord, console: where to tell them the outcome
            title TEXT NOT NULL,
            authors TEXT NOT NULL DEFAULT '',
            year INTEGER,
            summary TEXT NOT NULL DEFAULT '',
            url TEXT NOT NULL DEFAULT '',
            arxiv_id TEXT,
            doi TEXT,
            state TEXT NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'accepted', 'declined')),
            paper INTEGER,                         -- the catalog's number, once accepted (no foreign key:
                                                   -- a suggestion never stops a paper's deletion)
            decided_by TEXT,
            created_at TEXT NOT NULL,
            decided_at TEXT
        );
        CREATE INDEX suggestions_by_state ON suggestions (state, id);
        CREATE INDEX suggestions_by_arxiv_id ON suggestions (arxiv_id) WHERE arxiv_id IS NOT NULL;
        CREATE INDEX suggestions_by_doi ON suggestions (doi) WHERE doi IS NOT NULL;
        """
    )
    # The links papers have today (paper_refs.py reads the same and more from then on), in SQL only,
    # so that this step never changes: arxiv.org/abs/ID and /pdf/ID (a version, .pdf dropped), doi.org/DOI.
    db.executescript(
        """
        CREATE TEMP TABLE m009_ids AS
            SELECT number, rtrim(replace(substr(url, instr(url, 'arxiv.org/') + 14), '.pdf', ''), '/') AS id
            FROM papers
            WHERE url LIKE 'http%://arxiv.org/abs/_%' OR url LIKE 'http%://arxiv.org/pdf/_%'
               OR url LIKE 'http%://www.arxiv.org/abs/_%' OR url LIKE 'http%://www.arxiv.org/pdf/_%';
        UPDATE m009_ids SET id = rtrim(rtrim(id, '0123456789'), 'v')
            WHERE rtrim(id, '0123456789') LIKE '%_v';
        UPDATE papers SET arxiv_id = (SELECT id FROM m009_ids WHERE m009_ids.number = papers.number)
            WHERE number IN (SELECT number FROM m009_ids);
        DROP TABLE m009_ids;
        UPDATE papers SET doi = lower(substr(url, instr(url, 'doi.org/') + 8))
            WHERE url LIKE 'http%://doi.org/10._%/_%' OR url LIKE 'http%://dx.doi.org/10._%/_%';
        """
    )


@migrations()
def m010_votes_archive_talk_links(db: sqlite_utils.Database) -> None:
    # Votes are on papers, for the whole install: one a member, the primary key makes it so.
    # An archived paper (archived_at set) leaves lists, search and the rotation but keeps its rows.
    # Talk links (slides, a recording, notes) belong to one group's week; a week may have several.
    db.executescript(
        """
        CREATE TABLE votes (
            paper INTEGER NOT NULL REFERENCES papers(number),
            member TEXT NOT NULL,
            voted_at TEXT NOT NULL,
            PRIMARY KEY (paper, member)
        ) WITHOUT ROWID;
        CREATE INDEX votes_by_member ON votes (member);

        ALTER TABLE papers ADD COLUMN archived_at TEXT;
        -- The few archived papers, found without reading every paper (lists and search leave them out).
        CREATE INDEX papers_archived ON papers (number) WHERE archived_at IS NOT NULL;

        CREATE TABLE talk_links (
            id INTEGER PRIMARY KEY,
            group_id INTEGER NOT NULL DEFAULT 1,
            week TEXT NOT NULL,
            url TEXT NOT NULL,
            added_by TEXT NOT NULL,
            added_at TEXT NOT NULL,
            UNIQUE (group_id, week, url)
        );
        """
    )


@migrations()
def m011_calendar(db: sqlite_utils.Database) -> None:
    # The calendar's memory of each week it has shown (so that a changed week gets a higher
    # SEQUENCE and a week that lost its talk stays as CANCELLED), the secret parts of the feeds'
    # and the group's page's URLs, members' names as their platform gave them, and the Discord
    # scheduled event made for each week (Discord has no idempotency key: the id is kept).

    db.executescript(
        """
        CREATE TABLE calendar_weeks (
            group_id INTEGER NOT NULL DEFAULT 1,
            week TEXT NOT NULL,
            fingerprint TEXT NOT NULL,             -- what the event said, hashed; '' once cancelled
            sequence INTEGER NOT NULL DEFAULT 0,   -- RFC 5545 SEQUENCE: grows with each change
            changed_at TEXT NOT NULL,              -- UTC, ISO 8601: the event's DTSTAMP and Last-Modified
            presenter TEXT,                        -- the last presenter shown: their feed shows the cancel
            PRIMARY KEY (group_id, week)
        );
        CREATE TABLE group_secrets (
            group_id INTEGER NOT NULL DEFAULT 1 PRIMARY KEY,
            secret TEXT NOT NULL UNIQUE,
            made_at TEXT NOT NULL
        );
        CREATE TABLE member_secrets (
            member TEXT NOT NULL PRIMARY KEY,
            secret TEXT NOT NULL UNIQUE,
            made_at TEXT NOT NULL
        );
        CREATE TABLE member_names (
            member TEXT NOT NULL PRIMARY KEY,
            name TEXT NOT NULL,
            asked_at REAL NOT NULL                 -- unix time: asked again after a day
        );
        CREATE TABLE discord_events (
            group_id INTEGER NOT NULL DEFAULT 1,
            week TEXT NOT NULL,
            event_id TEXT,                         -- NULL while being made: a crash leaves it to be matched
            fingerprint TEXT NOT NULL DEFAULT '',
            PRIMARY KEY (group_id, week)
        );
        """
    )
    # The domain of the events' UIDs: this install's own, so that two installs never share a UID.
    db.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('calendar_uid_domain', ?)", [secrets.token_hex(6)])


@migrations()
def m012_group_started_at(db: sqlite_utils.Database) -> None:
    # When a chat group was started (or last resumed): its first post is for the first slot at or
    # after it, never for a week whose slot passed before the group existed. NULL (group 1, and the
    # groups started before this column) is "long ago": their posts go on as before, since a group's
    # `updated_at` is its latest change, and a setting changed after this week's slot must not take
    # that week's post away.
    db.execute("ALTER TABLE groups ADD COLUMN started_at TEXT")


@migrations()
def m013_talk_links_go_with_their_talk(db: sqlite_utils.Database) -> None:
    # Talk materials belong to the talk, not to its week: a withdrawn, cleared or replaced talk takes
    # its links with it (before, they showed on the next presenter's talk of that week). Triggers, so
    # that every way a slot goes or changes hands does it. The links already kept for a week with no
    # talk now, or added before its talk was booked, were an earlier talk's (a time that cannot be
    # read keeps its link).
    db.executescript(
        """
        DELETE FROM talk_links WHERE NOT EXISTS (
            SELECT 1 FROM slots s WHERE s.group_id = talk_links.group_id AND s.week = talk_links.week
            AND s.kind = 'presenter' AND coalesce(julianday(s.booked_at) <= julianday(talk_links.added_at), 1)
        );
        CREATE TRIGGER talk_links_go_with_their_talk AFTER DELETE ON slots BEGIN
            DELETE FROM talk_links WHERE group_id = OLD.group_id AND week = OLD.week;
        END;
        CREATE TRIGGER talk_links_go_with_a_changed_talk AFTER UPDATE OF kind, presenter, paper ON slots
        WHEN OLD.kind IS NOT NEW.kind OR OLD.presenter IS NOT NEW.presenter OR OLD.paper IS NOT NEW.paper BEGIN
            DELETE FROM talk_links WHERE group_id = OLD.group_id AND week = OLD.week;
        END;
        """
    )


#: The tables whose rows the group's page shows: a write to any of them bumps `meta.page_version`.
#: Not member_names: drawing a page writes it (a name asked of the platform), and a page drawn anew
#: each minute shows a renamed member soon enough.
PAGE_TABLES = ("papers", "paper_tags", "slots", "talk_links", "groups")


@migrations()
def m014_page_version(db: sqlite_utils.Database) -> None:
    # A counter bumped by every write that changes what a group's page shows, whichever connection or
    # process writes it, so that a rendered page can be kept until it is stale (PRAGMA data_version
    # is per connection and blind to the connection's own writes).
    db.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('page_version', '0')")
    for table in PAGE_TABLES:
        for event in ("INSERT", "UPDATE", "DELETE"):
            db.execute(
                f"CREATE TRIGGER page_version_{table}_{event.lower()} AFTER {event} ON {table} BEGIN "
                "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'page_version'; END"
            )


@migrations()
def m015_group_name(db: sqlite_utils.Database) -> None:
    # A chat group's name (`group set name`), in its posts, reminders, page and calendar. NULL: no
    # name, and its posts read as before. Group 1's name is PAPERBOT_GROUP_NAME: its row keeps NULL.
    db.execute("ALTER TABLE groups ADD COLUMN name TEXT")


@migrations()
def m016_group_channel_name(db: sqlite_utils.Database) -> None:
    # The latest name the platform gave the group's channel (group 1's too, in its row): an unnamed
    # group is called after it. NULL: none seen yet, and the group shows as before.
    db.execute("ALTER TABLE groups ADD COLUMN channel_name TEXT")


@migrations()
def m017_questions(db: sqlite_utils.Database) -> None:
    # Questions members bring to a meeting (`ask`), oldest first; a removed one is deleted. Keyed by
    # the meeting's ISO week, as slots are, so that a question follows its meeting, not its talk.
    db.executescript(
        """
        CREATE TABLE questions (
            id INTEGER PRIMARY KEY,
            group_id INTEGER NOT NULL DEFAULT 1,
            week TEXT NOT NULL,
            asked_by TEXT NOT NULL,               -- the member's user id
            platform TEXT NOT NULL DEFAULT '',    -- where it was asked: slack, discord, console
            text TEXT NOT NULL,
            asked_at TEXT NOT NULL                -- UTC, ISO 8601
        );
        CREATE INDEX questions_by_week ON questions (group_id, week, id);
        """
    )


@migrations()
def m018_attendance(db: sqlite_utils.Database) -> None:
    # Who said they will (going = 1) or will not (0) come to a meeting; one row a member and meeting,
    # so that saying it again changes the row, and a member taking it back deletes it.
    db.executescript(
        """
        CREATE TABLE attendance (
            group_id INTEGER NOT NULL DEFAULT 1,
            week TEXT NOT NULL,
            member TEXT NOT NULL,
            going INTEGER NOT NULL CHECK (going IN (0, 1)),
            said_at TEXT NOT NULL,                -- UTC, ISO 8601
            PRIMARY KEY (group_id, week, member)
        );
        CREATE INDEX attendance_by_member ON attendance (member);
        """
    )
    # Both show on the group's page: writes to them make a drawn page stale (as m014's tables do).
    for table in ("questions", "attendance"):
        for event in ("INSERT", "UPDATE", "DELETE"):
            db.execute(
                f"CREATE TRIGGER page_version_{table}_{event.lower()} AFTER {event} ON {table} BEGIN "
                "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'page_version'; END"
            )


@migrations()
def m020_event_interest(db: sqlite_utils.Database) -> None:
    # The members Discord shows as "Interested" in a meeting's scheduled event, as last read: they count
    # as going (unless they said they can't), each once with those who said going in chat.
    db.executescript(
        """
        CREATE TABLE event_interest (
            group_id INTEGER NOT NULL,
            week TEXT NOT NULL,
            member TEXT NOT NULL,
            PRIMARY KEY (group_id, week, member)
        );
        """
    )
    for event in ("INSERT", "UPDATE", "DELETE"):  # it shows on the group's page, as attendance does
        db.execute(
            f"CREATE TRIGGER page_version_event_interest_{event.lower()} AFTER {event} ON event_interest BEGIN "
            "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'page_version'; END"
        )


@migrations()
def m021_swaps_and_openings(db: sqlite_utils.Database) -> None:
    # A presenter's offer to trade weeks with another (`swap`): both talks as they were when offered,
    # so that an answer to an offer whose weeks changed since changes nothing. `told`: the offer's
    # direct message is out (or can no longer go), so the sender of notes stops looking at it.
    # An opening is a late withdrawal (inside the reminder window): the members due first, chosen
    # then, are each told once (a delivery each, keyed by the opening); `told` as for offers.
    db.executescript(
        """
        CREATE TABLE swap_offers (
            id INTEGER PRIMARY KEY,
            group_id INTEGER NOT NULL DEFAULT 1,
            offered_by TEXT NOT NULL,
            by_week TEXT NOT NULL,
            by_paper INTEGER NOT NULL,
            offered_to TEXT NOT NULL,
            to_week TEXT NOT NULL,
            to_paper INTEGER NOT NULL,
            state TEXT NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'accepted', 'declined')),
            offered_at TEXT NOT NULL,             -- UTC, ISO 8601
            answered_at TEXT,
            told INTEGER NOT NULL DEFAULT 0 CHECK (told IN (0, 1))
        );
        CREATE INDEX swap_offers_to ON swap_offers (group_id, offered_to, to_week, id);
        CREATE INDEX swap_offers_untold ON swap_offers (told, id);
        CREATE TABLE openings (
            id INTEGER PRIMARY KEY,
            group_id INTEGER NOT NULL DEFAULT 1,
            week TEXT NOT NULL,
            paper INTEGER,
            left_by TEXT NOT NULL,
            members TEXT NOT NULL,                -- the members told, comma-separated, due first
            opened_at TEXT NOT NULL,              -- UTC, ISO 8601
            told INTEGER NOT NULL DEFAULT 0 CHECK (told IN (0, 1))
        );
        CREATE INDEX openings_untold ON openings (told, id);
        """
    )


@migrations()
def m024_seen_signatures(db: sqlite_utils.Database) -> None:
    # The platforms' request signatures already taken, until they are too old for any request to carry
    # (forget_at, unix time): replicas on one PostgreSQL database share them, so that a request replayed
    # to another replica is refused too. One process on SQLite keeps them in memory, and this table empty.
    db.executescript(
        """
        CREATE TABLE seen_signatures (
            signature TEXT NOT NULL PRIMARY KEY,
            forget_at REAL NOT NULL
        );
        CREATE INDEX seen_signatures_by_age ON seen_signatures (forget_at);
        """
    )


@migrations()
def m025_places(db: sqlite_utils.Database) -> None:
    # The places a hosted install serves (a Slack workspace, a Discord server), each with its own
    # tables elsewhere (a file beside this one, a PostgreSQL schema: bot/places/registry.py), and the
    # Slack installs that made them. The install's own database keeps these; a place's leaves them empty.
    db.executescript(
        """
        CREATE TABLE places (
            id TEXT NOT NULL PRIMARY KEY,         -- slack-T…, slack-E… (a Grid organisation), discord-…
            platform TEXT NOT NULL,
            name TEXT NOT NULL DEFAULT '',
            state TEXT NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'gone')),
            joined_at TEXT NOT NULL,              -- UTC, ISO 8601
            left_at TEXT,
            seen_at TEXT                          -- the last request from it (at most once a minute)
        );
        CREATE TABLE slack_installs (
            place TEXT NOT NULL PRIMARY KEY REFERENCES places (id) ON DELETE CASCADE,
            team_id TEXT,
            enterprise_id TEXT,
            is_enterprise_install INTEGER NOT NULL DEFAULT 0,
            app_id TEXT,
            bot_id TEXT,
            bot_user_id TEXT,
            bot_scopes TEXT NOT NULL DEFAULT '',
            bot_token TEXT NOT NULL,              -- sealed with PAPERBOT_SECRET_KEY (Fernet)
            bot_refresh_token TEXT,               -- sealed too; token rotation, when the app has it
            bot_token_expires_at INTEGER,         -- unix time
            installer TEXT,
            installed_at TEXT NOT NULL
        );
        CREATE TABLE oauth_states (
            state TEXT NOT NULL PRIMARY KEY,
            expires_at REAL NOT NULL              -- unix time; used once, then deleted
        );
        """
    )


@migrations()
def m026_attempt_began(db: sqlite_utils.Database) -> None:
    # When the delivery's latest attempt began (unix time; 0: none since this column, then its first
    # claim stands for it): the look in the channel before a re-send reads only the messages since
    # then, as Slack lets apps outside its Marketplace read history once a minute, 15 messages at a time.
    db.execute("ALTER TABLE deliveries ADD COLUMN attempt_at REAL NOT NULL DEFAULT 0")
