"""A real PostgreSQL server for the tests: Debian's postgresql binaries (initdb + pg_ctl), a
cluster in a temporary folder, on a free loopback port; each test gets a database of its own.
As root (CI), the cluster runs as the `postgres` user the package creates."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path


def _bin(name: str) -> str | None:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), key=lambda p: int(p.split("/")[4]))
    return found[-1] if found else shutil.which(name)


def available() -> bool:
    return _bin("initdb") is not None and _bin("pg_ctl") is not None


# the servers running in this process: each test's databases are dropped after it
# (conftest.py _drop_test_databases)
LIVE: list[PostgresServer] = []


class PostgresServer:
    def __init__(self) -> None:
        self.created: list[str] = []
        self.folder = Path(tempfile.mkdtemp(prefix="studio-pg-"))
        self.data = self.folder / "data"
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.user: list[str] = []
        if os.geteuid() == 0:  # initdb refuses to run as root
            pw = pwd.getpwnam("postgres")
            os.chown(self.folder, pw.pw_uid, pw.pw_gid)
            self.user = ["runuser", "-u", "postgres", "--"]
        self._run(_bin("initdb"), "-D", str(self.data), "-U", "studio", "--auth=trust", "-E", "UTF8", "--no-sync")
        options = f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200"
        self._run(_bin("pg_ctl"), "-D", str(self.data), "-o", options, "-l", str(self.folder / "log"), "-w", "start")
        self.url = f"postgresql://studio@127.0.0.1:{self.port}/postgres"
        LIVE.append(self)

    def _run(self, *argv) -> None:
        subprocess.run([*self.user, *argv], check=True, capture_output=True)

    def database(self, name: str) -> str:
        """A new empty database; its URL."""
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as conn:
            # copied file by file: half the time of the default (WAL-logged) copy, fsync being off
            conn.execute(f'CREATE DATABASE "{name}" STRATEGY = FILE_COPY')
        self.created.append(name)
        return f"postgresql://studio@127.0.0.1:{self.port}/{name}"

    def drop_created(self) -> None:
        """Drop the databases made since the last call. Kept, a database per test (7.7 MB of
        catalogue) grew the cluster to 5 GB per worker by the end of the team pass — in RAM
        where the tests' temporary folder is /dev/shm, which ran CI out of memory (stop 53:
        every pytest worker killed). FORCE: what an app of the test left connected goes too."""
        import psycopg

        names, self.created = self.created, []
        if not names:
            return
        try:
            with psycopg.connect(self.url, autocommit=True) as conn:
                for name in names:
                    conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        except psycopg.OperationalError:
            pass  # the server was stopped (a test's own), and its folder goes with it

    def stop(self) -> None:
        if self in LIVE:
            LIVE.remove(self)
        subprocess.run(
            [*self.user, _bin("pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop"], capture_output=True
        )
        shutil.rmtree(self.folder, ignore_errors=True)
