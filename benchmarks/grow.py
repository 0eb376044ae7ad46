"""Grow a real transcript to a target size, keeping it a valid, real-shaped session.

Each copy of the source gets fresh uuids (remapped consistently, parents included) and
its first root is chained onto the previous copy's last entry, so the result is one
long conversation, not N disconnected ones. Message ids and tool ids are suffixed per
copy so split-message grouping and tool pairing stay correct.

    python benchmarks/grow.py SOURCE.jsonl OUT.jsonl --mb 50
"""

from __future__ import annotations

import argparse
import re
import uuid
from pathlib import Path

import orjson

UUID_RE = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
ID_RE = re.compile(rb'"((?:msg|toolu|req)_[A-Za-z0-9]+)"')


def grow(src: Path, out: Path, target_bytes: int) -> int:
    lines = [ln for ln in src.read_bytes().splitlines() if ln.strip()]
    records = []
    for ln in lines:
        try:
            r = orjson.loads(ln)
        except orjson.JSONDecodeError:
            continue
        if isinstance(r, dict):
            records.append(ln)
    session = str(uuid.uuid4()).encode()
    written = 0
    copy = 0
    last_uuid: bytes | None = None
    with open(out, "wb") as f:
        # Stop before a copy would pass the target, so a "50 MB" file stays under it.
        one = sum(len(r) + 1 for r in records)
        while written + one <= target_bytes or copy == 0:
            mapping: dict[bytes, bytes] = {}

            def remap(m: re.Match[bytes]) -> bytes:
                old = m.group(0)
                if old not in mapping:
                    mapping[old] = str(uuid.uuid4()).encode()
                return mapping[old]

            for i, ln in enumerate(records):
                new = UUID_RE.sub(remap, ln)
                new = ID_RE.sub(lambda m: b'"' + m.group(1) + b"c" + str(copy).encode() + b'"', new)
                r = orjson.loads(new)
                if "sessionId" in r:
                    r["sessionId"] = session.decode()
                if r.get("parentUuid") is None and "uuid" in r and last_uuid is not None and i < 5:
                    r["parentUuid"] = last_uuid.decode()
                data = orjson.dumps(r) + b"\n"
                if "uuid" in r and not r.get("isSidechain"):
                    last_uuid = r["uuid"].encode()
                f.write(data)
                written += len(data)
            copy += 1
    return written


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("source", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--mb", type=float, default=50.0)
    a = ap.parse_args()
    n = grow(a.source, a.out, int(a.mb * 1024 * 1024))
    print(f"{a.out}: {n / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
