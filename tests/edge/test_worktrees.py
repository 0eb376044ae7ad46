"""A directory's sessions include those of every git worktree of its repository.

`worktrees.worktree_paths` reads git's files; real ``git worktree list --porcelain`` is its
oracle, on real repositories made with ``git init`` and ``git worktree add``. The listing
(`store.session_folders`, `catalog`, ``tt ls``) has the Agent SDK's
``list_sessions(directory=...)`` as its oracle, on a config dir of real transcripts laid
out in each worktree's project folder, beside near misses that must stay out.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import unicodedata
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.cli import tt
from tests.support.paths import REAL
from transcript_tools.catalog.files import list_sessions
from transcript_tools.catalog.files_scope import project_dirs
from transcript_tools.edge import claude_dir as store
from transcript_tools.edge import worktrees
from transcript_tools.model.errors import NotFound

pytestmark = [
    pytest.mark.git,
    pytest.mark.skipif(shutil.which("git") is None, reason="git makes the repositories these tests read"),
]


SESSION = REAL / "v2.1.38-tool-heavy.jsonl"  # a session the SDK lists (it has a title)

GIT_ENV = {
    "GIT_AUTHOR_NAME": "tt",
    "GIT_AUTHOR_EMAIL": "tt@example.invalid",
    "GIT_COMMITTER_NAME": "tt",
    "GIT_COMMITTER_EMAIL": "tt@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}


def git(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | GIT_ENV
    return subprocess.run(
        ["git", "-c", "init.defaultBranch=main", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def git_worktrees(cwd: Path) -> list[str]:
    """What the SDK takes from git: the ``worktree`` lines, NFC; [] when git fails."""
    r = git("worktree", "list", "--porcelain", cwd=cwd)
    if r.returncode != 0:
        return []
    return [
        unicodedata.normalize("NFC", ln[len("worktree ") :])
        for ln in r.stdout.split("\n")
        if ln.startswith("worktree ")
    ]


def make_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    assert git("init", "-q", cwd=path).returncode == 0
    assert git("commit", "-q", "--allow-empty", "-m", "first", cwd=path).returncode == 0
    return path


def add_worktree(repo: Path, path: Path) -> Path:
    r = git("worktree", "add", "-q", str(path), cwd=repo)
    assert r.returncode == 0, r.stderr
    return path


@dataclass
class Layout:
    main: Path
    short: Path  # a linked worktree, ``<main>-wt``: a name the main one's is a prefix of
    long: Path  # a linked worktree whose project folder name is cut and hashed
    projects: Path
    ids: dict[str, str]  # folder key -> session id


@pytest.fixture
def layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Layout:
    base = Path(store.canonical_cwd(tmp_path))
    main = make_repo(base / "repo")
    short = add_worktree(main, base / "repo-wt")
    long = add_worktree(main, base / ("long-" + "d" * 100) / ("e" * 100) / "wt")
    assert len(store.project_dir_name(str(long))) > store.MAX_SANITIZED_LENGTH
    (main / "pkg").mkdir()
    projects = tmp_path / "claude" / "projects"
    folders = {
        "main": store.project_dir_name(str(main)),
        "short": store.project_dir_name(str(short)),
        "long": store.project_dir_name(str(long)),  # hashed as the SDK hashes
        "pkg": store.project_dir_name(str(main / "pkg")),  # a subdirectory's own folder
        "near-miss": store.project_dir_name(str(base / "repo-foo")),  # not a worktree
        "elsewhere": "-home-dev-other",
    }
    ids = {}
    for k, (key, name) in enumerate(folders.items()):
        ids[key] = str(uuid.uuid5(uuid.NAMESPACE_URL, key))
        put_session(projects / name, ids[key], 1_700_000_000 + 60 * k)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    return Layout(main, short, long, projects, ids)


def put_session(folder: Path, sid: str, mtime: int, data: bytes | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    dest = folder / f"{sid}.jsonl"
    dest.write_bytes(SESSION.read_bytes() if data is None else data)
    os.utime(dest, (mtime, mtime))
    return dest


def tt_ls(*args: str, cwd: Path, config: Path) -> list[str]:
    r = tt("ls", "--json", *args, config=config, cwd=cwd, width=None)
    assert r.returncode == 0, r.stderr
    return [row["session_id"] for row in json.loads(r.stdout)["sessions"]]


def sdk_ids(directory: Path) -> list[str]:
    sdk = pytest.importorskip("claude_agent_sdk", reason="claude-agent-sdk is a test dependency")
    return [s.session_id for s in sdk.list_sessions(directory=str(directory))]


# --- worktree_paths against git -------------------------------------------------------------------


def test_worktree_paths_are_what_git_lists(layout: Layout) -> None:
    expected = git_worktrees(layout.main)
    assert expected[0] == str(layout.main) and sorted(expected[1:]) == sorted(
        [str(layout.short), str(layout.long)]
    )
    for where in [layout.main, layout.short, layout.long, layout.main / "pkg", layout.main / ".git"]:
        assert git_worktrees(where) == expected, where
        assert worktrees.worktree_paths(where) == expected, where


def test_a_symlinked_way_in_gives_the_real_paths(layout: Layout, tmp_path: Path) -> None:
    link = tmp_path / "link"
    link.symlink_to(layout.short)
    assert worktrees.worktree_paths(link) == git_worktrees(link) == git_worktrees(layout.main)


def test_a_worktree_whose_directory_is_gone_is_still_listed(layout: Layout) -> None:
    shutil.rmtree(layout.short)
    listed = git("worktree", "list", "--porcelain", cwd=layout.main).stdout
    assert "prunable" in listed
    assert worktrees.worktree_paths(layout.main) == git_worktrees(layout.main)
    assert str(layout.short) in worktrees.worktree_paths(layout.main)


def test_an_unreadable_registration_means_one_worktree_fewer(layout: Layout) -> None:
    registry = layout.main / ".git" / "worktrees"
    (entry,) = [
        d for d in registry.iterdir() if (d / "gitdir").read_text().strip() == str(layout.short / ".git")
    ]
    (entry / "gitdir").unlink()
    (entry / "gitdir").mkdir()  # reading it fails, whoever runs the tests (root reads through chmod 000)
    (registry / "stray-file").write_text("not a worktree\n")
    assert (
        worktrees.worktree_paths(layout.main)
        == git_worktrees(layout.main)
        == [str(layout.main), str(layout.long)]
    )


def test_a_broken_git_file_is_no_repository_as_for_git(layout: Layout) -> None:
    (layout.short / ".git").write_text("not a gitdir line\n")
    assert git("worktree", "list", cwd=layout.short).returncode != 0
    assert worktrees.worktree_paths(layout.short) == [] == git_worktrees(layout.short)
    (layout.short / ".git").write_text(f"gitdir: {layout.short / 'nowhere'}\n")
    assert worktrees.worktree_paths(layout.short) == [] == git_worktrees(layout.short)


def test_outside_a_repository_and_without_worktrees(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    assert worktrees.worktree_paths(plain) == git_worktrees(plain)
    alone = make_repo(tmp_path / "alone")
    assert worktrees.worktree_paths(alone / ".") == git_worktrees(alone) == [store.canonical_cwd(alone)]
    assert worktrees.worktree_paths(tmp_path / "does-not-exist") == []


def test_bare_and_separate_git_dir_repositories_are_listed_as_git_lists_them(tmp_path: Path) -> None:
    bare = tmp_path / "bare.git"
    assert git("init", "-q", "--bare", str(bare), cwd=tmp_path).returncode == 0
    seed = make_repo(tmp_path / "seed")
    assert git("push", "-q", str(bare), "main", cwd=seed).returncode == 0
    add_worktree(bare, tmp_path / "from-bare")
    sep = tmp_path / "sep"
    assert (
        git("init", "-q", f"--separate-git-dir={tmp_path / 'sep.git'}", str(sep), cwd=tmp_path).returncode
        == 0
    )
    assert git("commit", "-q", "--allow-empty", "-m", "x", cwd=sep).returncode == 0
    add_worktree(sep, tmp_path / "from-sep")
    for where in [bare, tmp_path / "from-bare", sep, tmp_path / "from-sep", tmp_path / "sep.git"]:
        assert worktrees.worktree_paths(where) == git_worktrees(where), where
        assert len(worktrees.worktree_paths(where)) == 2


def test_paths_are_nfc_as_in_the_sdk(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    decomposed = add_worktree(repo, tmp_path / "cafe\u0301")
    got = worktrees.worktree_paths(repo)
    assert got == git_worktrees(repo)
    assert unicodedata.normalize("NFC", str(decomposed)) in got


def test_a_relative_registration_is_resolved_as_git_2_48_does(layout: Layout) -> None:
    registry = layout.main / ".git" / "worktrees"
    (entry,) = [
        d for d in registry.iterdir() if (d / "gitdir").read_text().strip() == str(layout.short / ".git")
    ]
    (entry / "gitdir").write_text(os.path.relpath(layout.short / ".git", entry) + "\n")
    assert str(layout.short) in worktrees.worktree_paths(layout.main)


# --- which folders ------------------------------------------------------------------------------------


def test_folder_names_exact_for_short_names_prefix_for_cut_ones() -> None:
    trees = ["/root/project", "/root/project-wt", "/" + "x" * 250]
    long_name = store.project_dir_name(trees[2])
    names = [
        "-root-project-foo",
        "-root-project",
        "-root-project-wt",
        long_name[:200] + "-bunhash",
        "-root-projectx",
        long_name[:199],
    ]
    assert store.worktree_folder_names(names, trees, None) == [
        "-root-project",
        "-root-project-wt",
        long_name[:200] + "-bunhash",
    ]
    # The directory's own folder comes first, once.
    assert store.worktree_folder_names(names, trees, "-root-project-wt") == [
        "-root-project-wt",
        "-root-project",
        long_name[:200] + "-bunhash",
    ]
    # A name of exactly 200 characters takes ``name-...`` folders, as in the SDK.
    exact = "/" + "y" * 199
    assert len(store.project_dir_name(exact)) == 200
    assert store.worktree_folder_names([store.project_dir_name(exact) + "-2"], [exact, "/a"], None) == [
        store.project_dir_name(exact) + "-2"
    ]


def test_project_dirs_of_a_worktree(layout: Layout) -> None:
    root = layout.projects
    names = {
        k: store.project_dir_name(str(p))
        for k, p in [("main", layout.main), ("short", layout.short), ("pkg", layout.main / "pkg")]
    }
    got = project_dirs(cwd=layout.main, root=root)
    assert got[0].name == names["main"] and len(got) == 3
    assert {d.name for d in got} == {names["main"], names["short"], store.project_dir_name(str(layout.long))}
    assert project_dirs(cwd=layout.main / "pkg", root=root)[0].name == names["pkg"]
    assert project_dirs(cwd=layout.main, root=root, worktrees=False) == [root / names["main"]]
    # -p with a working directory is the same scope; -p with a folder is that folder.
    assert project_dirs(str(layout.short), root=root) == project_dirs(cwd=layout.short, root=root)
    assert project_dirs(str(root / names["short"]), root=root) == [root / names["short"]]


# --- tt ls against the SDK ------------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["main", "short", "long", "main/pkg", "short/sub"])
def test_tt_ls_lists_what_the_sdk_lists(layout: Layout, where: str) -> None:
    base, _, sub = where.partition("/")
    cwd: Path = getattr(layout, base)
    if sub:
        cwd = cwd / sub
        cwd.mkdir(exist_ok=True)  # short/sub has no folder of its own: the worktrees' still count
    config = layout.projects.parent
    expected = sdk_ids(cwd)
    got = tt_ls(cwd=cwd, config=config)
    assert got == expected
    by_worktree = [layout.ids[k] for k in ("long", "short", "main")]  # newest first
    assert got == ([layout.ids["pkg"]] if sub == "pkg" else []) + by_worktree
    assert layout.ids["near-miss"] not in got and layout.ids["elsewhere"] not in got
    # -p with the working directory, run from elsewhere, is the same.
    assert tt_ls("-p", str(cwd), cwd=config, config=config) == expected


def test_tt_ls_all_and_a_project_folder_are_unchanged(layout: Layout) -> None:
    config = layout.projects.parent
    assert sorted(tt_ls("--all", cwd=layout.main, config=config)) == sorted(layout.ids.values())
    folder = layout.projects / store.project_dir_name(str(layout.main))
    assert tt_ls("-p", str(folder), cwd=layout.short, config=config) == [layout.ids["main"]]
    assert tt_ls("-p", folder.name, cwd=layout.short, config=config) == [layout.ids["main"]]


def test_one_row_per_session_the_newest_listed_copy(layout: Layout) -> None:
    config = layout.projects.parent
    short = layout.projects / store.project_dir_name(str(layout.short))
    main = layout.projects / store.project_dir_name(str(layout.main))
    # The main worktree's session, copied into the short one's folder later: one row, the copy.
    copy = put_session(short, layout.ids["main"], 1_800_000_000)
    assert tt_ls(cwd=layout.main, config=config) == sdk_ids(layout.main)
    (row,) = [r for r in list_sessions(project_dirs(cwd=layout.main)) if r.session_id == layout.ids["main"]]
    assert row.path == str(copy)
    # A newer copy the SDK hides (empty) does not hide the older one it lists.
    put_session(short, layout.ids["short"], 1_900_000_000, data=b"")
    put_session(main, layout.ids["short"], 1_750_000_000)
    got = tt_ls(cwd=layout.main, config=config)
    assert got == sdk_ids(layout.main) and layout.ids["short"] in got


def test_a_long_worktree_folder_hashed_by_claude_code_is_found(layout: Layout) -> None:
    """Claude Code hashes long names with Bun.hash, the SDK with simpleHash. The SDK
    matches other worktrees' long folders with its own hash, so from another worktree it
    misses one hashed by Claude Code; tt compares the first 200 characters, as the
    /resume picker and `find_project_dir` do."""
    config = layout.projects.parent
    name = store.project_dir_name(str(layout.long))
    (layout.projects / name).rename(layout.projects / (name[:200] + "-bunhash"))
    assert layout.ids["long"] in tt_ls(cwd=layout.main, config=config)
    assert layout.ids["long"] not in sdk_ids(layout.main)  # the SDK's own rule, for the record
    assert tt_ls(cwd=layout.long, config=config) == sdk_ids(layout.long)  # its own folder: both find it


def test_without_worktrees_only_the_directory_s_own_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = Path(store.canonical_cwd(tmp_path))
    alone = make_repo(base / "alone")
    plain = base / "plain"
    plain.mkdir()
    projects = tmp_path / "claude" / "projects"
    for k, d in enumerate([alone, base / "alone-foo", plain, base / "plain-foo"]):
        put_session(
            projects / store.project_dir_name(str(d)),
            str(uuid.uuid5(uuid.NAMESPACE_URL, str(d))),
            1_700_000_000 + k,
        )
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    for d in (alone, plain):
        got = tt_ls(cwd=d, config=tmp_path / "claude")
        assert got == sdk_ids(d) == [str(uuid.uuid5(uuid.NAMESPACE_URL, str(d)))]
    empty = base / "empty"
    empty.mkdir()
    with pytest.raises(NotFound):
        project_dirs(cwd=empty, root=projects)


def test_head_branch_is_what_git_names_the_checked_out_branch(tmp_path: Path) -> None:
    # The oracle is git itself (`git rev-parse --abbrev-ref HEAD`): in the main worktree,
    # in a subfolder, in a linked worktree (a `.git` file), and on a detached HEAD.
    repo = make_repo(tmp_path / "repo")
    (repo / "sub" / "deeper").mkdir(parents=True)
    linked = add_worktree(repo, tmp_path / "linked")
    detached = add_worktree(repo, tmp_path / "detached")
    assert git("checkout", "-q", "--detach", cwd=detached).returncode == 0
    for d in (repo, repo / "sub" / "deeper", linked, detached):
        r = git("rev-parse", "--abbrev-ref", "HEAD", cwd=d)
        assert r.returncode == 0, r.stderr
        assert worktrees.head_branch(d) == r.stdout.strip(), d
    assert {worktrees.head_branch(repo), worktrees.head_branch(linked)} == {"main", "linked"}
    outside = tmp_path / "plain"
    outside.mkdir()
    assert worktrees.head_branch(outside) is None
