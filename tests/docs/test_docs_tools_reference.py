"""docs/reference/ is what docs/gen_tools.py writes from the tools today (not a stale copy)."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_tools_reference_is_up_to_date(tmp_path):
    # one process for all 117 tools' --help (taken in process: a few seconds, not minutes)
    r = subprocess.run([sys.executable, str(ROOT / "docs" / "gen_tools.py"), str(tmp_path)],
                       cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    written = sorted(p.name for p in tmp_path.glob("*.md"))
    assert written == ["bin.md", "scripts.md"]
    for name in written:
        committed = ROOT / "docs" / "reference" / name
        assert committed.is_file(), f"{committed} missing (run docs/gen_tools.py)"
        assert committed.read_text() == (tmp_path / name).read_text(), (
            f"{committed} is stale: a tool's --help or a script's usage changed "
            "(run docs/gen_tools.py and commit the result)")


def test_every_bin_tool_and_script_has_an_entry():
    bin_page = (ROOT / "docs" / "reference" / "bin.md").read_text()
    scripts_page = (ROOT / "docs" / "reference" / "scripts.md").read_text()
    for tool in (ROOT / "bin").glob("*.py"):
        assert f"\n## {tool.name}\n" in bin_page, tool.name
    for d in ("steps", "utils", "local"):
        for script in (ROOT / d).rglob("*"):
            if script.is_file() and not script.is_symlink() and "__pycache__" not in script.parts:
                rel = script.relative_to(ROOT).as_posix()
                assert f"\n### {rel}\n" in scripts_page, rel


def test_every_kaldi_tool_not_provided_says_why():
    """docs/kaldi_tools.txt: a Kaldi tool without a bin/<tool>.py carries its reason after '|',
    and a tool nnetmix provides carries none (it would then be stale)."""
    sys.path.insert(0, str(ROOT / "docs"))
    from gen_tools import kaldi_tools
    ours = {p.stem for p in (ROOT / "bin").glob("*.py")}
    silent = [f"{d}/{t}" for d, t, why in kaldi_tools() if t not in ours and not why]
    stale = [f"{d}/{t}" for d, t, why in kaldi_tools() if t in ours and why]
    assert not silent, f"not provided, with no reason in docs/kaldi_tools.txt: {silent}"
    assert not stale, f"provided, yet a reason why not in docs/kaldi_tools.txt: {stale}"
