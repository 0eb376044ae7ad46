"""Rendering what ``tt compact`` did (or would do): sizes before and after, what was kept,
pruned and summarised, and how to continue. ``--dry-run`` also shows the plan: the kept
messages and the summary text."""

from __future__ import annotations

from typing import Any

from rich.markup import escape

#: How many kept messages and summary lines a dry run shows.
SHOW_KEPT = 24
SHOW_SUMMARY_LINES = 40


def _n(v: int | None) -> str:
    return "?" if v is None else f"{v:,}"


def _mib(v: int) -> str:
    return f"{v / 2**20:,.1f} MiB" if v >= 2**20 else f"{v / 1024:,.1f} KiB"


def render_compact(
    con: Any, info: dict[str, Any], *, summary: str = "", records: list[dict[str, Any]] | None = None
) -> None:
    def out(text: str) -> None:
        con.print(text, soft_wrap=True)

    t, b, m = info["tokens"], info["bytes"], info["messages"]
    mode = info["mode"]
    if info["nothing_to_do"]:
        out(f"[green]Nothing to compact[/] in {escape(info['source'])}")
        for n in info["notes"]:
            out(f"  [dim]{escape(n)}[/]")
        return
    if info.get("grows"):
        out(f"[yellow]Not compacted[/] {escape(info['source'])}: the request would not get smaller")
        for n in info["notes"]:
            out(f"  [dim]{escape(n)}[/]")
        return
    if info.get("slim"):
        verb = {
            "new": "Copied without the records a resume never sends",
            "dry-run": "Would copy without the records a resume never sends",
        }[mode]
    else:
        verb = {"new": "Compacted", "in-place": "Compacted in place", "dry-run": "Would compact"}[mode]
    target = info["output"] or info["source"]
    out(
        f"[bold green]{verb}[/] {escape(info['source'])}"
        + (f" → [bold]{escape(target)}[/]" if mode == "new" else "")
    )
    if info["new_session_id"]:
        out(f"  session   {escape(info['new_session_id'])} [dim](new)[/]")
    if not info.get("slim"):
        ctx = (
            f" (and {_n(m['read_for_context'])} read for context: earlier history, key messages)"
            if m.get("read_for_context")
            else ""
        )
        out(
            f"  summary   {escape(info['summarizer'])}, ~{_n(t['summary'])} tokens, of {_n(m['summarised'])} messages{ctx}"
        )
    over = " [yellow](over budget)[/]" if t["over_budget"] else ""
    out(
        f"  kept      {_n(m['kept'])} messages verbatim, ~{_n(t['kept'])} tokens of --keep-tokens {_n(t['budget'])}{over}"
    )
    exact = f" [dim](API count: {_n(t['after_exact'])})[/]" if t["after_exact"] is not None else ""
    out(f"  tokens    ~{_n(t['before'])} → ~{_n(t['after'])}{exact}")
    if t["last_reported_by_api"]:
        out(
            f"            [dim]the API last reported {_n(t['last_reported_by_api'])} tokens of context (system prompt and tools included)[/]"
        )
    if info["damage"]["repaired_in_memory"]:
        # Read through tt's in-memory repair: the conversation measured is the repaired one
        # (an added interrupted result made it larger than the file: new-user pass).
        before = f"{_mib(b['before'])} file ({_mib(b['conversation_before'])} the conversation, as repaired in memory)"
    else:
        before = f"{_mib(b['before'])} file ({_mib(b['conversation_before'])} of it the conversation)"
    if mode == "in-place" and info.get("drop_history"):
        out(
            f"  bytes     {before} → {_mib(b['after'])}: the file now holds the compaction alone; its history is in the backup"
        )
    elif mode == "in-place":
        # Issue 18: "725 KiB written" read as the new size of a file that had grown to 60.2 MB.
        now = f"; the file is now {_mib(b['file_after'])}" if b.get("file_after") is not None else ""
        out(f"  bytes     {before}, {_mib(b['after'])} appended{now}")
        out(
            "            [dim]appended after the history, as Claude Code's /compact does (the file grows); "
            "--in-place --drop-history leaves only the compaction in the file, the history in the backup[/]"
        )
    else:
        after = "would be written" if mode == "dry-run" else "written"
        out(f"  bytes     {before} → {_mib(b['after'])} {after}")
    for kind, d in sorted(info["prune"].items()):
        out(f"  pruned    {kind}: {d['blocks']} block(s), ~{_n(d['tokens'])} tokens, {_mib(d['bytes'])}")
    dmg = info["damage"]
    if dmg["repaired_in_memory"]:
        # In place, the compaction is appended to the original: only its damaged lines are
        # left as they were.
        left = (
            "its damaged lines are left as they were (tt repair mends them)"
            if mode == "in-place"
            else "the original is unchanged"
        )
        out(f"  [yellow]read through {len(dmg['repair_actions'])} in-memory repair(s)[/]; {left}")
    elif dmg["skipped_pieces"]:
        out(f"  [yellow]skipped {dmg['skipped_pieces']} damaged piece(s)[/] ({_mib(dmg['skipped_bytes'])})")
    if info["backup"]:
        out(f"  backup    {escape(info['backup'])}")
    for n in info["notes"]:
        out(f"  [yellow]note:[/] {escape(n)}")
    out(f"  [dim]{escape(t['note'])}[/]")
    if mode == "dry-run":
        if not info.get("slim"):  # a slim copy has no plan: every message is kept
            _plan(out, summary, records or [])
        out("  [dim]dry run: nothing written[/]")
        return
    if info.get("continue"):
        out("Continue it with:")
        for c in info["continue"]:
            out(f"  {escape(c)}")


def _plan(out: Any, summary: str, records: list[dict[str, Any]]) -> None:
    kept = [r for r in records[2:] if isinstance(r.get("uuid"), str)]
    out(f"[bold]Kept verbatim[/] ({len(kept)} entries, after the boundary and the summary):")
    shown: list[dict[str, Any] | None] = list(kept)
    if len(kept) > SHOW_KEPT:
        shown = [*kept[: SHOW_KEPT // 2], None, *kept[-SHOW_KEPT // 2 :]]
    for r in shown:
        if r is None:
            out(f"  [dim]… {len(kept) - SHOW_KEPT} more …[/]")
            continue
        out(f"  {escape(str(r.get('type'))):9} {escape(_brief(r))}")
    out("[bold]Summary[/]:")
    lines = summary.splitlines()
    for ln in lines[:SHOW_SUMMARY_LINES]:
        out("  " + escape(ln))
    if len(lines) > SHOW_SUMMARY_LINES:
        out(f"  [dim]… {len(lines) - SHOW_SUMMARY_LINES} more lines[/]")


def _brief(r: dict[str, Any], n: int = 100) -> str:
    msg = r.get("message")
    c = msg.get("content") if isinstance(msg, dict) else None
    if isinstance(c, str):
        s = c
    elif isinstance(c, list) and c and isinstance(c[0], dict):
        b = c[0]
        bt = b.get("type")
        if bt == "text":
            s = str(b.get("text", ""))
        elif bt == "tool_use":
            s = f"→ {b.get('name')} {b.get('input')}"
        elif bt == "tool_result":
            inner = b.get("content")
            s = "← " + (inner if isinstance(inner, str) else str(inner))
        else:
            s = f"[{bt}]"
    elif r.get("type") == "attachment":
        a = r.get("attachment")
        s = f"[{a.get('type') if isinstance(a, dict) else '?'}]"
    else:
        s = str(r.get("subtype") or r.get("content") or "")
    s = " ".join(s.split())
    return s if len(s) <= n else s[: n - 1] + "…"
