"""Where the repository's test data is, for every test (one place instead of a
``Path(__file__).parents[N]`` per file, which breaks when a test moves a folder deeper).

Nothing here reaches outside the repository: a clone carries everything named below.
"""

from __future__ import annotations

from pathlib import Path

#: The repository's root (pyproject.toml, README.md, fixtures/, transcript_tools/).
ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
#: Transcripts and config dirs written by real Claude Code versions.
REAL = FIXTURES / "real"
#: Whole Claude config dirs (``projects/``, ``file-history/``, ...) from 2.1.332 and 2.1.197.
CONFIG_332 = REAL / "claude-config-2.1.332"
CONFIG_197 = REAL / "claude-config-2.1.197"
#: A config dir of other readers' public test transcripts (fixtures/README.md): odd shapes
#: Claude Code never wrote that way (no uuids, null fields, a Windows cwd), which users
#: feed tt all the same.
PUBLIC = FIXTURES / "public-testdata"
