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


class PostgresServer:
    def __init__(self) -> None:
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

    def _run(self, *argv) -> None:
        subprocess.run([*self.user, *argv], check=True, capture_output=True)

    def database(self, name: str) -> str:
        """A new empty database; its URL."""
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as conn:
            # copied file by file: half the time of the default (WAL-logged) copy, fsync being off
            conn.execute(f'CREATE DATABASE "{name}" STRATEGY = FILE_COPY')
        return f"postgresql://studio@127.0.0.1:{self.port}/{name}"

    def stop(self) -> None:
        subprocess.run(
            [*self.user, _bin("pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop"], capture_output=True
        )
        # a database per test leaves ~10 GB of files by the end of a run: removed by a process
        # of its own (~45 s) that the run does not wait for
        subprocess.Popen(
            ["rm", "-rf", str(self.folder)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
