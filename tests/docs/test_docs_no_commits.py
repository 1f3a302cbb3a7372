"""README.md and docs/ name no commit of this repository: a hash belongs in the files a script
writes (RESULTS.md), never in prose (STYLE.md section 8)."""
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEX = re.compile(r"(?<![0-9A-Za-z])[0-9a-f]{7,40}(?![0-9A-Za-z])")


def commit_tokens(text: str, git_dir: Path) -> list[str]:
    """The hex tokens of ``text`` that name a commit of the repository at ``git_dir``."""
    tokens = sorted(set(HEX.findall(text)))
    if not tokens:
        return []
    r = subprocess.run(["git", "-C", str(git_dir), "cat-file", "--batch-check"],
                       input="".join(f"{t}^{{commit}}\n" for t in tokens),
                       capture_output=True, text=True, check=True)
    return [t for t, line in zip(tokens, r.stdout.splitlines()) if not line.endswith("missing")]


def _repo() -> Path:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    r = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--git-dir"], capture_output=True)
    if r.returncode != 0:
        pytest.skip(f"{ROOT} is not a git checkout")
    return ROOT


def test_readme_and_docs_name_no_commit():
    repo = _repo()
    found = {}
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        hits = commit_tokens(path.read_text(encoding="utf-8"), repo)
        if hits:
            found[path.relative_to(ROOT).as_posix()] = hits
    assert found == {}, "commit hashes in prose (link the RESULTS.md that records them instead)"


def test_a_commit_hash_is_found():
    repo = _repo()
    head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()
    text = f"built at {head[:7]}, not at deadbeefcafe or {'0' * 40}; sha256 {'a' * 64}"
    assert commit_tokens(text, repo) == [head[:7]]
