"""A real PostgreSQL server for the tests: Debian's postgresql-15, started in a temporary folder.

    server = Server.start(tmp_dir)            # initdb + pg_ctl start, listening on a Unix socket only
    url = server.new_database()               # a fresh, empty database; its postgresql:// URL
    server.stop()

PostgreSQL refuses to run as root: as root (CI), its programs run as the `postgres` user. No TCP port
is opened (a socket in the folder), so parallel test workers never collide.
"""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

BIN_DIRS = [Path("/usr/lib/postgresql/15/bin"), *sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)]


def binaries() -> Path | None:
    """The folder of PostgreSQL's server programs, None when it is not installed."""
    for folder in BIN_DIRS:
        if (folder / "initdb").is_file() and (folder / "pg_ctl").is_file():
            return folder
    found = shutil.which("initdb")
    return Path(found).parent if found else None


def _as_server_user(args: list[str]) -> list[str]:
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--", *args]
    return args


@dataclass
class Server:
    folder: Path
    bin: Path
    _names: itertools.count = field(default_factory=lambda: itertools.count(1))

    @property
    def data(self) -> Path:
        return self.folder / "data"

    @property
    def socket_dir(self) -> Path:
        return self.folder

    @classmethod
    def start(cls, folder: Path) -> Server:
        bin_dir = binaries()
        if bin_dir is None:
            raise RuntimeError("PostgreSQL is not installed (Debian: apt-get install postgresql-15)")
        folder.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            shutil.chown(folder, "postgres", "postgres")
            os.chmod(folder, 0o777)
        server = cls(folder, bin_dir)
        subprocess.run(
            _as_server_user(
                [
                    str(bin_dir / "initdb"),
                    "-D",
                    str(server.data),
                    "-U",
                    "postgres",
                    "-A",
                    "trust",
                    "-E",
                    "UTF8",
                    "--locale=C.UTF-8",
                    "--no-sync",
                ]
            ),
            check=True,
            capture_output=True,
        )
        server.pg_ctl("start")
        return server

    def pg_ctl(self, action: str) -> None:
        """start, stop or restart the server, waiting until it has."""
        options = f"-k {self.socket_dir} -c listen_addresses='' -c fsync=off -c max_connections=300"
        subprocess.run(
            _as_server_user(
                [
                    str(self.bin / "pg_ctl"),
                    "-D",
                    str(self.data),
                    "-l",
                    str(self.folder / "log"),
                    "-w",
                    "-m",
                    "fast",
                    "-o",
                    options,
                    action,
                ]
            ),
            check=True,
            capture_output=True,
        )

    def stop(self) -> None:
        self.pg_ctl("stop")

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@/{database}?host={self.socket_dir}"

    def new_database(self) -> str:
        """A new empty database's URL."""
        import psycopg  # noqa: PLC0415 - only tests that use PostgreSQL need the driver

        name = f"t{os.getpid()}_{next(self._names)}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)
