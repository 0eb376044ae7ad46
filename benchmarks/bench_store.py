"""How fast `tt store` pushes, searches and lists the set `bench_ls.py` builds, and how big the
store gets (the issue's targets: a first push within 3x `tt validate --all`, a second push
under 2 s, PostgreSQL within 2x SQLite, `tt store search WORD` and `tt search WORD --store`
under 100 ms median,
`tt store ls` and `tt ls --store` under 0.5 s, the store at most a third of the JSONL bytes).

Every time is a whole `tt` process, as a user runs it. `tt validate --all` is timed on the
same set first, as the yardstick; with ``--rounds N`` the
two are run in turn N times (a new store each time) and each round's ratio is printed, wall
and CPU, since other load on a shared machine slows a one-process `validate` and a
multi-process push differently. PostgreSQL is measured when its initdb/pg_ctl are
installed (a throwaway cluster from tests/support/postgres.py, unix socket, fsync off:
the SQLite store runs with synchronous=NORMAL in WAL mode, so neither syncs per commit).

    python benchmarks/bench_store.py [--sessions 2000] [--runs 5] [--rounds 1] [--pg-rounds 1] [--no-postgres]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.bench_ls import build  # noqa: E402
from benchmarks.common import compile_package  # noqa: E402

#: CPU seconds (user + sys, worker processes included) of the last `tt` call: on a shared
#: machine the steadier measure, since other load slows a one-process run and a
#: two-process one differently.
last_cpu = 0.0


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def tt(config: Path, *args: str) -> float:
    global last_cpu
    env = {**os.environ, "CLAUDE_CONFIG_DIR": str(config), "NO_COLOR": "1"}
    env.pop("TT_STORE", None)
    c0 = _children_cpu()
    t0 = time.perf_counter()
    r = subprocess.run(
        [sys.executable, "-m", "transcript_tools", *args], env=env, capture_output=True, cwd=ROOT
    )
    dt = time.perf_counter() - t0
    last_cpu = _children_cpu() - c0
    if r.returncode not in (0, 1):
        raise SystemExit(f"tt {' '.join(args)} exited {r.returncode}: {r.stderr.decode()[-500:]}")
    return dt


def median(config: Path, runs: int, *args: str) -> float:
    return statistics.median(tt(config, *args) for _ in range(runs))


def store_bytes(db: Path) -> int:
    return sum(p.stat().st_size for p in db.parent.glob(db.name + "*"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=1, help="validate + first push, in turn, this many times")
    ap.add_argument("--pg-rounds", type=int, default=1, help="SQLite and PostgreSQL first pushes, in turn")
    ap.add_argument("--no-postgres", action="store_true")
    a = ap.parse_args()
    compile_package()
    tmp = Path(tempfile.mkdtemp(prefix="tt-bench-store-"))
    try:
        cfg = tmp / "cfg"
        total = build(cfg, a.sessions)
        print(f"built {a.sessions} sessions, {total / 2**20:.0f} MiB")
        db = tmp / "store.sqlite3"
        url = f"sqlite:///{db}"
        walls: list[float] = []
        cpus: list[float] = []
        for r in range(a.rounds):
            for old in db.parent.glob(db.name + "*"):
                old.unlink()
            v = tt(cfg, "validate", "--all", "--json")
            vcpu = last_cpu
            first = tt(cfg, "store", "push", "--all", "--store", url)
            walls.append(first / v)
            cpus.append(last_cpu / vcpu)
            print(
                f"round {r + 1} (load {os.getloadavg()[0]:.1f}): tt validate --all {v:.1f} s ({vcpu:.1f} s CPU); "
                f"tt store push --all (SQLite, first) {first:.1f} s = {first / v:.2f}x validate "
                f"({last_cpu:.1f} s CPU = {last_cpu / vcpu:.2f}x)"
            )
        if a.rounds > 1:
            print(
                f"first push / validate, median of {a.rounds} rounds: wall {statistics.median(walls):.2f}x "
                f"({min(walls):.2f}-{max(walls):.2f}), CPU {statistics.median(cpus):.2f}x ({min(cpus):.2f}-{max(cpus):.2f})"
            )
        second = tt(cfg, "store", "push", "--all", "--store", url)
        print(f"tt store push --all (SQLite, nothing new): {second:.2f} s")
        size = store_bytes(db)
        print(f"store {size / 2**20:.0f} MiB for {total / 2**20:.0f} MiB of JSONL: {size / total:.3f}")
        s = median(cfg, a.runs, "store", "search", "README", "--store", url, "--json")
        print(f"tt store search README: median {s * 1000:.0f} ms")
        s2 = median(cfg, a.runs, "search", "README", "--store", url, "--json", "-n", "10")
        print(f"tt search README --store (10 sessions): median {s2 * 1000:.0f} ms")
        ls = median(cfg, a.runs, "store", "ls", "--store", url, "--json")
        print(f"tt store ls: median {ls * 1000:.0f} ms")
        tls = median(cfg, a.runs, "ls", "--store", url, "--json")
        print(f"tt ls --store: median {tls * 1000:.0f} ms")
        if not a.no_postgres:
            from tests.support import postgres as pg

            if pg.find_bin() is None:
                print("PostgreSQL not installed: not measured")
            else:
                with pg.cluster() as purl:
                    for r in range(a.pg_rounds):
                        # SQLite then PostgreSQL, in turn, each into a new store: the ratio of a round
                        # is the one other load slowed alike.
                        sdb = tmp / f"pg-round-{r}.sqlite3"
                        sfirst = (
                            first
                            if r == 0
                            else tt(cfg, "store", "push", "--all", "--store", f"sqlite:///{sdb}")
                        )
                        scpu = last_cpu
                        purl_r = pg.fresh_database(purl, f"bench{r}")
                        pfirst = tt(cfg, "store", "push", "--all", "--store", purl_r)
                        print(
                            f"round {r + 1} (load {os.getloadavg()[0]:.1f}): tt store push --all (PostgreSQL, first): "
                            f"{pfirst:.1f} s = {pfirst / sfirst:.2f}x SQLite's {sfirst:.1f} s "
                            f"({last_cpu:.1f} s CPU in tt's processes{'' if r == 0 else f', SQLite {scpu:.1f} s'}; "
                            "the server's is not counted)"
                        )
                        psecond = tt(cfg, "store", "push", "--all", "--store", purl_r)
                        print(f"tt store push --all (PostgreSQL, nothing new): {psecond:.2f} s")
                    ps = median(cfg, a.runs, "store", "search", "README", "--store", purl_r, "--json")
                    print(f"tt store search README (PostgreSQL): median {ps * 1000:.0f} ms")
        print(f"load average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPU(s)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
