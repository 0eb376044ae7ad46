"""A throwaway PostgreSQL cluster for the tests: ``initdb`` + ``pg_ctl`` in a temporary folder.

The server listens on a unix socket only (``listen_addresses=''``), with password
(scram-sha-256) authentication for the one superuser, so the tests use a URL with
credentials as a team would. It is stopped (``pg_ctl stop -m immediate``) and its folder
removed when the context ends. The binaries come from the Debian ``postgresql`` package
(``/usr/lib/postgresql/<major>/bin``) or ``PATH``; `find_bin` returns None when neither has
them and the tests marked ``postgres`` skip with that reason (in CI a failure,
`real_tools`). PostgreSQL refuses to run as root: under root the cluster is made and run
as the ``postgres`` system user the package creates.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

USER = "tt"
PASSWORD = "s3cret-for-tests"


def find_bin() -> Path | None:
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0,
    )
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(os.path.realpath(initdb)).parent if initdb else None


def _as_user() -> tuple[list[str], int | None, int | None]:
    if os.geteuid() != 0:
        return [], None, None
    try:
        pw = pwd.getpwnam("postgres")
    except KeyError:
        return [], None, None  # initdb will say why it cannot run as root
    return ["runuser", "-u", "postgres", "--"], pw.pw_uid, pw.pw_gid


@contextmanager
def cluster() -> Iterator[str]:
    """Start a cluster; yield its URL (``postgresql://tt:…@/postgres?host=<socket dir>``)."""
    bindir = find_bin()
    if bindir is None:
        raise RuntimeError("PostgreSQL is not installed (apt-get install postgresql)")
    prefix, uid, gid = _as_user()
    tmp = Path(tempfile.mkdtemp(prefix="tt-pg-"))
    data, sock = tmp / "data", tmp / "sock"
    sock.mkdir()
    pwfile = tmp / "pw"
    pwfile.write_text(PASSWORD + "\n")
    if uid is not None:
        for p in (tmp, sock, pwfile):
            os.chown(p, uid, gid if gid is not None else -1)
    run = lambda *a: subprocess.run([*prefix, *a], check=True, capture_output=True, timeout=120)  # noqa: E731
    try:
        run(
            str(bindir / "initdb"),
            "-D",
            str(data),
            "-U",
            USER,
            f"--pwfile={pwfile}",
            "--auth=scram-sha-256",
            "--no-sync",
            "-E",
            "UTF8",
            "--locale=C",
        )
        run(
            str(bindir / "pg_ctl"),
            "-D",
            str(data),
            "-l",
            str(tmp / "log"),
            "-w",
            "-t",
            "60",
            "-o",
            f"-k {sock} -c listen_addresses='' -F -c fsync=off -c full_page_writes=off",
            "start",
        )
        yield f"postgresql://{USER}:{PASSWORD}@/postgres?host={sock}"
    finally:
        if (data / "postmaster.pid").exists():
            subprocess.run(
                [*prefix, str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"],
                capture_output=True,
                timeout=60,
            )
        shutil.rmtree(tmp, ignore_errors=True)


def fresh_database(url: str, name: str) -> str:
    """A new empty database on the cluster; its URL."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as c:
        c.execute(f'DROP DATABASE IF EXISTS "{name}"')
        c.execute(f'CREATE DATABASE "{name}"')
    return url.replace("@/postgres?", f"@/{name}?")
