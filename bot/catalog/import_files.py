"""`paperbot import FILE...`: each file's papers added to the catalog or updated, a line a file.

    unreadable = import_files.read_in(store, ["reading-list.csv", "more.yaml"])   # or Stopped(line)

What each file did goes to stdout, one line; what it skipped and why to stderr, a line a row (the
first SKIPPED_SHOWN of them).
"""

from __future__ import annotations

import sys
from pathlib import Path

from bot.catalog import files as papers_file
from bot.catalog import queries as catalog
from bot.store.connection import Store

#: Skipped rows `import` names one by one; the rest are counted.
SKIPPED_SHOWN = 100


class Stopped(Exception):
    """The import stopped part way (a full disk); str() is the one line to show."""


def read_in(store: Store, names: list[str]) -> int:
    """Import the files `names` into `store`, in order, as one list: how many could not be read."""
    unreadable = 0
    lists = []
    claimed: dict[Path, catalog.Claims] = {}
    # Files are read a row at a time. A YAML or JSON list is read once before anything is written,
    # so that broken syntax refuses it whole (in JSON Lines and CSV it is one line's problem). A file
    # that is not a regular file or is too large is refused before anything is read from it.
    for name in names:
        path = Path(name)
        try:
            papers = papers_file.PaperList(path)
            if not papers.by_line:
                claimed[path] = catalog.Claims(papers.quietly())
            lists.append((path, papers))
        except papers_file.UnreadableFile as e:
            print(f"paperbot: {e}", file=sys.stderr)
            unreadable += 1

    def every_claim() -> catalog.Claims:
        return catalog.Claims.union(claimed.get(path) or catalog.Claims(papers.quietly()) for path, papers in lists)

    # The files of one import are one list: an id named in any of them is claimed in all (catalog.Claims).
    claims = catalog.LaterClaims(every_claim)
    for path, report in lists:
        try:
            counts = catalog.upsert(store, report, claims=claims)
        except catalog.DiskFullDuringImport as stopped:  # each batch commits: what came before is in
            done = stopped.counts
            raise Stopped(
                f"{path}: the disk holding the database is full: the import stopped after {done.added} papers"
                f" added and {done.updated} updated, which are kept; free some space and import again"
                " (papers already in stay as they are)"
            ) from None
        except papers_file.UnreadableFile as e:  # the rows before the bad spot are in
            why = "the rows before it are imported" if report.by_line else "it changed while it was imported"
            print(f"paperbot: {e} ({why}; fix it and import it again)", file=sys.stderr)
            unreadable += 1
            continue
        problems = report.problems + counts.problems  # the file's, then the catalog's (an unknown id, no title)
        for note in report.notes:
            print(f"note: {note}", file=sys.stderr)
        for problem in problems[:SKIPPED_SHOWN]:
            print(f"skipped: {problem}", file=sys.stderr)
        if len(problems) > SKIPPED_SHOWN:  # a file of 200,000 bad rows is not 200,000 lines to read
            print(f"skipped: {len(problems) - SKIPPED_SHOWN} more rows, not named here", file=sys.stderr)
        print(
            f"{path}: {counts.added} added, {counts.updated} updated, {counts.unchanged} unchanged, "
            f"{len(problems)} skipped"
        )
    return unreadable
