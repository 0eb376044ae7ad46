"""The session store: sessions in SQLite (the default, one file) or PostgreSQL (a team's).

It is three things over one schema: the target of ``tt store push/pull/log`` (files in a
config dir ⇄ the store, `files`), the Agent SDK's ``SessionStore`` (`sdk.TTSessionStore`),
and a searchable index (FTS5 / ``tsvector``).

The package file only documents; import from the modules. Modules: `layers` (pure: a line
as skeleton + content-addressed blobs, the codecs), `records` (pure: a line's queryable
columns and search text), `prepare` (pure: lines made ready to insert), `model` (the values
and the engine seam), `schema` (the SQL), `engine` (the logic over a DB-API connection),
`files` (push/pull against a config dir), `find` (`tt search` and `tt ls` answered from a
store), `sdk`; and in `edge/`, the engine adapters `store_sqlite` and `store_postgres` and
`store_url` (which store, opened how).

The schema (the same tables and columns on both engines, `schema`):

    tt_meta     (key, value)                      schema version
    tt_stream   (id, project_key, session_id, subpath, current_version, mtime_ms, summary)
                one per transcript file: subpath '' is the main transcript,
                'subagents/agent-<id>' a subagent (the Agent SDK's SessionKey);
                mtime_ms is the storage write time; summary the SDK's folded sidecar (JSON)
    tt_version  (stream_id, version, created_ms, updated_ms, reason, source, nbytes,
                sha256, file_mtime_ns, nlines, diagnostics)
                a stream's versions: appends extend the current one, a rewritten file
                starts a new one; sha256/nbytes of the bytes pushed (what an incremental
                push compares), diagnostics = tt validate's, as JSON
    tt_line     (id, stream_id, version, seq, byte_offset, pushed_ms, complete,
                type, uuid, parent_uuid, ts, codec, skeleton, refs)
                every physical line, terminator included, in order: the exact bytes are
                join(decode(codec, skeleton), refs → blobs); type/uuid/parent_uuid/ts are
                the parsed form (NULL when the line is not a JSON object); complete = 0
                for a torn last line without its newline; pushed_ms serves --as-of TIME
    tt_blob     (hash, codec, size, data)         content-addressed: SHA-256 of the exact
                bytes, stored once, compressed (zstd, or base64 decoded)
    tt_file     (project_key, session_id, relpath, hash, size, mtime_ns, pushed_ms)
                a session's other files: 'session/<path>' under <id>/ (.meta.json, tool
                results), 'file-history/<path>' (backups), 'project/agent-<id>.jsonl'
                (a 2.0.x subagent transcript beside the session); bytes in tt_blob
    tt_fts      the search index of the lines' text: FTS5 (content='', detail=none: which
                lines hold a term, neither the text nor the positions)
                in SQLite; (line_id, tsv tsvector) with a GIN index in PostgreSQL

Raw bytes are BLOB/BYTEA, never JSON columns: PostgreSQL's jsonb refuses ``\\u0000``,
which real tool output contains, and any JSON column would lose invalid UTF-8 and torn lines.

Invariants: a version pulled back is byte-identical to what was pushed; nothing is
repaired on the way in; every write is one transaction (a killed writer leaves the last
commit); credentials in a URL never appear in messages (`store.model.redacted`).
"""
