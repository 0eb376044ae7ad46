"""`tt validate`'s output, this checkout against another one: byte for byte, exit code too.

A change to validate's hot path must not change what it reports. This writes damaged
copies of every fixture transcript (16 kinds of damage, one by one and all together,
seeded: the same copies every run), runs ``tt validate --json``, ``-q`` and the plain
output on each (and ``--json --max-bytes`` at half the file's size, the past-the-cap
path) in both checkouts, in-process, and lists every run whose stdout, stderr or exit
code differs.

    git worktree add --detach ../before <commit>
    python benchmarks/same_output.py ../before [MORE FILES...]
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def dumps(o):
    return json.dumps(o, ensure_ascii=False, separators=(",", ":")).encode()


def jl(lines):
    out = []
    for ln in lines:
        try:
            r = json.loads(ln)
        except Exception:
            r = None
        out.append(r if isinstance(r, dict) else None)
    return out


def walk_strings(o, f):
    if isinstance(o, dict):
        return {k: walk_strings(v, f) for k, v in o.items()}
    if isinstance(o, list):
        return [walk_strings(v, f) for v in o]
    if isinstance(o, str):
        return f(o)
    return o


def mutators(rng: random.Random) -> list[Any]:
    # each takes and returns the list of a file's lines (bytes, no terminator)
    def torn(lines):
        b = b"\n".join(lines) + b"\n"
        cut = rng.randrange(1, len(b))
        return b[:cut].split(b"\n")

    def nul_run(lines):
        i = rng.randrange(len(lines))
        ln = lines[i]
        k = rng.randrange(len(ln) + 1)
        lines[i] = ln[:k] + b"\x00" * rng.choice([1, 5, 200]) + ln[k:]
        return lines

    def crlf(lines):
        for _ in range(3):
            i = rng.randrange(len(lines))
            lines[i] = lines[i] + b"\r"
        return lines

    def dup_line(lines):
        i = rng.randrange(len(lines))
        lines.insert(rng.randrange(i, len(lines)) + 1, lines[i])
        return lines

    def dup_uuid(lines):
        recs = jl(lines)
        idx = [i for i, r in enumerate(recs) if r and "uuid" in r]
        if not idx:
            return lines
        i = rng.choice(idx)
        r = dict(recs[i])
        r["timestamp"] = "2020-01-01T00:00:00.000Z"
        lines.insert(len(lines), dumps(r))
        return lines

    def delete(lines):
        del lines[rng.randrange(len(lines))]
        return lines

    def fuse(lines):
        if len(lines) < 2:
            return lines
        i = rng.randrange(len(lines) - 1)
        lines[i : i + 2] = [lines[i] + lines[i + 1]]
        return lines

    def sep(lines):
        recs = jl(lines)
        idx = [i for i, r in enumerate(recs) if r]
        for _ in range(2):
            if not idx:
                break
            i = rng.choice(idx)
            ch = rng.choice(["\u2028", "\u2029", "\u0085", "é"])
            lines[i] = dumps(walk_strings(recs[i], lambda s: s + ch if rng.random() < 0.3 else s))
        return lines

    def swap(lines):
        if len(lines) < 2:
            return lines
        i = rng.randrange(len(lines) - 1)
        lines[i], lines[i + 1] = lines[i + 1], lines[i]
        return lines

    def session(lines):
        recs = jl(lines)
        idx = [i for i, r in enumerate(recs) if r and "sessionId" in r]
        if idx:
            i = rng.choice(idx)
            r = recs[i]
            r["sessionId"] = "00000000-0000-4000-8000-000000000000"
            lines[i] = dumps(r)
        return lines

    def garbage(lines):
        lines.insert(
            rng.randrange(len(lines) + 1),
            rng.choice([b"", b"   ", b"xyz", b"[1,2]", b"42", b'{"a":', b"\xef\xbb\xbf{}"]),
        )
        return lines

    def nul_escape(lines):
        recs = jl(lines)
        idx = [i for i, r in enumerate(recs) if r and r.get("type") in ("user", "assistant")]
        for _ in range(3):
            if not idx:
                break
            i = rng.choice(idx)
            lines[i] = dumps(
                walk_strings(recs[i], lambda s: s[:3] + "\x00" + s[3:] if rng.random() < 0.2 else s)
            )
        return lines

    def literal_u0000(lines):
        recs = jl(lines)
        idx = [i for i, r in enumerate(recs) if r and r.get("type") in ("user", "assistant")]
        if idx:
            i = rng.choice(idx)
            lines[i] = dumps(walk_strings(recs[i], lambda s: s + "\\u0000" if rng.random() < 0.3 else s))
        return lines

    def nul_key(lines):
        recs = jl(lines)
        for i, r in enumerate(recs):
            if (
                r
                and r.get("type") == "assistant"
                and isinstance(r.get("message"), dict)
                and isinstance(r["message"].get("content"), list)
            ):
                for b in r["message"]["content"]:
                    if (
                        isinstance(b, dict)
                        and b.get("type") == "tool_use"
                        and isinstance(b.get("input"), dict)
                    ):
                        b["input"]["k\x00"] = [1, {"x": "y"}]
                        lines[i] = dumps(r)
                        return lines
        return lines

    def shapes(lines):
        recs = jl(lines)
        idx = [i for i, r in enumerate(recs) if r]
        for _ in range(4):
            if not idx:
                break
            i = rng.choice(idx)
            r = recs[i]
            what = rng.randrange(9)
            if what == 0:
                r["type"] = "brand-new-type"
            elif what == 1 and isinstance(r.get("message"), dict):
                r["message"]["content"] = rng.choice(
                    [
                        "",
                        [],
                        None,
                        [{"type": "text", "text": ""}],
                        [{"type": "text", "text": "  "}],
                        "x",
                        [{"type": "thinking", "thinking": "t", "signature": ""}],
                        [{"type": "tool_result", "tool_use_id": "t", "is_error": True, "content": ""}],
                    ]
                )
            elif what == 2:
                r.pop("uuid", None)
            elif what == 3:
                r["parentUuid"] = "no-such-parent"
            elif what == 4:
                r["isSidechain"] = True
            elif what == 5:
                r["type"] = ["list"]
            elif what == 6:
                r["uuid"] = 12
            elif what == 7 and isinstance(r.get("message"), dict):
                r["message"]["id"] = "msg_shared"
            elif what == 8:
                r["toolUseResult"] = {"big": "x" * 5000}
            lines[i] = dumps(r)
        return lines

    def flips(lines):
        b = bytearray(b"\n".join(lines) + b"\n")
        for _ in range(3):
            k = rng.randrange(len(b))
            b[k] = rng.randrange(256)
        return bytes(b).split(b"\n")

    return [
        torn,
        nul_run,
        crlf,
        dup_line,
        dup_uuid,
        delete,
        fuse,
        sep,
        swap,
        session,
        garbage,
        nul_escape,
        literal_u0000,
        nul_key,
        shapes,
        flips,
    ]


def write_damaged(src: Path, out: Path) -> list[Path]:
    rng = random.Random(14)
    made: list[Path] = []
    for f in sorted(src.rglob("*.jsonl")):
        base = f.read_bytes().split(b"\n")
        if base and base[-1] == b"":
            base = base[:-1]
        if not any(base):
            continue
        ms = mutators(rng)
        for m in [*ms, "all"]:
            lines = list(base)
            for g in ms if m == "all" else [m]:
                try:
                    lines = g(lines)
                except (ValueError, IndexError):
                    pass
            name = f"{f.stem}.{m if m == 'all' else m.__name__}"
            d = out / name
            d.mkdir()
            # The session id file name kept, so session-mismatch and subagent rules apply.
            p = d / f.name
            p.write_bytes(b"\n".join(lines or [b""]) + b"\n")
            made.append(p)
    return made


RUNNER = """
import io, json, os, sys
tree, out_path, files = sys.argv[1], sys.argv[2], sys.argv[3:]
sys.path.insert(0, tree)
os.environ["NO_COLOR"] = "1"; os.environ.pop("COLUMNS", None); os.environ["TT_WIDTH"] = "200"
import transcript_tools
assert transcript_tools.__file__.startswith(tree), transcript_tools.__file__
from transcript_tools.cli import main

def call(args):
    so, se = sys.stdout, sys.stderr
    buf, ebuf = io.BytesIO(), io.BytesIO()
    sys.stdout, sys.stderr = io.TextIOWrapper(buf, encoding="utf-8"), io.TextIOWrapper(ebuf, encoding="utf-8")
    try:
        try:
            main(args)
            code = 0
        except SystemExit as e:
            code = e.code
        except Exception as e:  # a crash is an outcome too: compared like the rest
            code = "crash " + type(e).__name__ + ": " + str(e)
        sys.stdout.flush(); sys.stderr.flush()
    finally:
        w1, w2 = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = so, se
        w1.detach(); w2.detach()
    return [code, buf.getvalue().decode("utf-8", "replace"), ebuf.getvalue().decode("utf-8", "replace")]

res = {}
for f in files:
    size = os.path.getsize(f) if os.path.isfile(f) else 0
    modes = [["--json"], ["-q"], []] + ([["--json", "--max-bytes", str(size // 2)]] if size > 2000 else [])
    for m in modes:
        res[f + " " + " ".join(m)] = call(["validate", *m, f])
json.dump(res, open(out_path, "w"))
"""


def main() -> None:
    before = Path(sys.argv[1]).resolve()
    with tempfile.TemporaryDirectory() as tmp:
        damaged = Path(tmp) / "damaged"
        damaged.mkdir()
        made = write_damaged(ROOT / "fixtures", damaged)
        files = [str(p) for p in sorted((ROOT / "fixtures").rglob("*.jsonl"))] + [str(p) for p in made]
        files += [str(damaged), str(ROOT / "fixtures" / "damaged"), *sys.argv[2:]]
        results = []
        for name, tree in (("before", before), ("after", ROOT)):
            out = Path(tmp) / f"{name}.json"
            subprocess.run([sys.executable, "-c", RUNNER, str(tree), str(out), *files], check=True, cwd=tmp)
            results.append(json.loads(out.read_text()))
    b, a = results
    differ = [k for k in b if b[k] != a.get(k)]
    print(
        f"{len(b)} runs on {len(files)} files and folders ({len(made)} damaged copies): {len(differ)} differ"
    )
    for k in differ[:20]:
        print("DIFFERS:", k, "\n  before:", repr(b[k])[:400], "\n  after: ", repr(a[k])[:400])
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
