"""`tt show` on wide text against the same session in ASCII.

The input is the tool-heavy fixture grown to 5 MB (`grow.py`) and its CJK twin: every
ASCII letter of its prompts, replies, thinking, tool inputs and results made an ideograph
(two terminal cells) and every space one too, as CJK prose has none; the session's shape
is unchanged and each character stays one character (the twin of 5.0 MB is 8.2 MB of UTF-8).
Both are shown to a pipe, with the default fold and with ``--fold 0`` (everything),
in turn, round after round; the figure is each one's median CPU time (user + system),
and the target is the CJK twin within 2x of the ASCII session.

    python benchmarks/bench_show.py [--runs N] [--mb M]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
from pathlib import Path
from typing import Any

import orjson
from common import OUT, grown, tt

_LEAVE = {
    "type",
    "id",
    "tool_use_id",
    "name",
    "signature",
    "media_type",
    "data",
    "role",
    "model",
    "stop_reason",
}
_WIDE = {c: chr(0x4E00 + i * 37) for i, c in enumerate(range(ord("a"), ord("z") + 1))}
_WIDE.update({c: chr(0x4E00 + 1000 + i * 37) for i, c in enumerate(range(ord("A"), ord("Z") + 1))})
_WIDE[ord(" ")] = "の"


def _wide(v: Any, key: str | None = None) -> Any:
    if isinstance(v, str):
        return v if key in _LEAVE else v.translate(_WIDE)
    if isinstance(v, list):
        return [_wide(x, key) for x in v]
    if isinstance(v, dict):
        return {k: (x if k in _LEAVE else _wide(x, k)) for k, x in v.items()}
    return v


def wide_twin(src: Path) -> Path:
    dst = src.with_name(src.stem + "-cjk.jsonl")
    if not dst.exists():
        with open(src, "rb") as f, open(dst, "wb") as o:
            for line in f:
                r = orjson.loads(line)
                if isinstance(r.get("message"), dict):
                    r["message"]["content"] = _wide(r["message"].get("content"), "content")
                if "toolUseResult" in r:
                    r["toolUseResult"] = _wide(r["toolUseResult"], "toolUseResult")
                o.write(orjson.dumps(r) + b"\n")
    return dst


def cpu(cmd: list[str]) -> float:
    """CPU seconds (user + system) of one run, its output to a pipe that is read and dropped."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert p.stdout is not None
    while p.stdout.read(1 << 16):
        pass
    _, status, ru = os.wait4(p.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{cmd} failed")
    return ru.ru_utime + ru.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--mb", type=int, default=5)
    a = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    ascii_ = grown("tool-heavy", a.mb)
    cjk = wide_twin(ascii_)
    cases = {
        (fold, name): tt("show", *(["--fold", "0"] if fold else []), str(p))
        for fold in (False, True)
        for name, p in (("ascii", ascii_), ("cjk", cjk))
    }
    for cmd in cases.values():
        cpu(cmd)  # warm-up
    times: dict[tuple[bool, str], list[float]] = {k: [] for k in cases}
    for _ in range(a.runs):
        for k, cmd in cases.items():
            times[k].append(cpu(cmd))
    print("| input | ASCII CPU s | CJK CPU s | CJK / ASCII |")
    print("|---|---|---|---|")
    for fold in (False, True):
        x, y = statistics.median(times[(fold, "ascii")]), statistics.median(times[(fold, "cjk")])
        label = f"tool-heavy {a.mb} MB, " + ("--fold 0" if fold else "default fold")
        print(f"| {label} | {x:.2f} | {y:.2f} | {y / x:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
