"""fingerprint-recipe.py's checksums: tables by content (not by how jobs cut the archives),
models as bytes, a decoding directory's WER files as one row."""
import numpy as np
import pytest

from helpers import load_bin

from nnetmix.errors import FormatError
from nnetmix.kaldi import TableWriter
from nnetmix.utils.fingerprint import compare_fingerprints, read_fingerprint, \
    recipe_fingerprint


def _recipe(root, cut: int, wer: str = "%WER 1.00 [ 1 / 100 ]\n"):
    rng = np.random.default_rng(0)
    alis = {f"u{i}": rng.integers(1, 9, 20).astype(np.int32) for i in range(6)}
    exp = root / "exp" / "mono"
    (exp / "decode_test").mkdir(parents=True)
    for j, keys in enumerate((sorted(alis)[:cut], sorted(alis)[cut:]), 1):
        with TableWriter(f"ark:| gzip -c > {exp}/ali.{j}.gz", "ivec") as w:
            for k in keys[::-1]:
                w[k] = alis[k]
    (exp / "final.mdl").write_bytes(b"model")
    (exp / "decode_test" / "wer_10_0.0").write_text(wer)
    (exp / "decode_test" / "wer_11_0.0").write_text(wer)
    return dict(recipe_fingerprint(str(root)))


def test_tables_by_content_models_by_bytes_wers_as_one_row(tmp_path, capsys):
    a = _recipe(tmp_path / "a", cut=2)
    b = _recipe(tmp_path / "b", cut=4)              # the same alignments cut as other jobs
    c = _recipe(tmp_path / "c", cut=2, wer="%WER 2.00 [ 2 / 100 ]\n")
    assert a == b and set(a) == {"exp/mono/final.mdl", "exp/mono/ali.*.gz (alignments)",
                                 "exp/mono/decode_test/wer_* (scores)"}
    assert c["exp/mono/decode_test/wer_* (scores)"] != a["exp/mono/decode_test/wer_* (scores)"]
    assert load_bin("fingerprint-recipe.py").main([str(tmp_path / "a")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("| what | md5 |\n") and "| kernels | pin=" in out


RESULTS = """# results

| system | %WER |
| --- | --- |
| mono | 3.84 |

## Fingerprint

| what | md5 |
| --- | --- |
| `data/train/text` | aaa |
| `exp/mono/final.mdl` | bbb |
| `exp/mono/ali.*.gz (alignments)` | ccc |
| numpy | 2.4.6 |

More text.
"""


def test_read_fingerprint_takes_the_table_of_a_results_file():
    files, env = read_fingerprint(RESULTS, "RESULTS.md")
    assert list(files.items()) == [("data/train/text", "aaa"), ("exp/mono/final.mdl", "bbb"),
                                   ("exp/mono/ali.*.gz (alignments)", "ccc")]
    assert env == {"numpy": "2.4.6"}


@pytest.mark.parametrize("text, what", [
    ("# results\n\n| system | %WER |\n| --- | --- |\n", "no fingerprint table"),
    ("| what | md5 |\n| --- | --- |\n| `a` | b | c |\n", "has 3 cells, expected 2"),
    ("| what | md5 |\n| --- | --- |\n| numpy | 2.4.6 |\n", "has no file rows"),
])
def test_read_fingerprint_bad_tables_name_the_file(text, what):
    with pytest.raises(FormatError, match=rf"^R\.md: .*{what}"):
        read_fingerprint(text, "R.md")


def test_compare_in_the_published_order_first_difference_and_extras():
    published = read_fingerprint(RESULTS)
    here = ({"data/train/text": "aaa", "exp/mono/final.mdl": "BBB", "exp/tri1/final.mdl": "ddd"},
            {"numpy": "2.4.6"})
    cmp = compare_fingerprints(published, here)
    assert cmp.rows == [("data/train/text", "same"), ("exp/mono/final.mdl", "differs"),
                        ("exp/mono/ali.*.gz (alignments)", "missing"),
                        ("exp/tri1/final.mdl", "extra")]
    assert not cmp.identical and cmp.first_difference == "exp/mono/final.mdl"
    assert cmp.env_differ == {}
    files, _ = published
    same = compare_fingerprints(published, (dict(files, more="x"), {"numpy": "1.0"}))
    assert same.identical and same.first_difference is None and same.having("extra") == ["more"]
    assert same.env_differ == {"numpy": ("2.4.6", "1.0")}


def test_compare_on_the_command_line(tmp_path, capsys):
    fp = load_bin("fingerprint-recipe.py")
    results = tmp_path / "RESULTS.md"
    results.write_text(RESULTS)
    mine = tmp_path / "fingerprint.md"
    mine.write_text(RESULTS.replace("| bbb |", "| BBB |").replace("2.4.6", "9.9"))
    assert fp.main([f"--compare={results}", str(results)]) == 0
    out, err = capsys.readouterr()
    assert out.split("\n")[0] == "same     data/train/text" and "All 3 rows" in err
    assert fp.main([f"--compare={results}", str(mine)]) == 1
    out, err = capsys.readouterr()
    assert "differs  exp/mono/final.mdl\n" in out
    assert "numpy here is '9.9', the published run's '2.4.6'" in err
    assert "1 of 3 rows" in err and "the first, 'exp/mono/final.mdl', is the stage" in err
    # a recipe directory is checksummed and compared (it has no data/ and other models)
    _recipe(tmp_path / "r", cut=2)
    assert fp.main([f"--compare={results}", str(tmp_path / "r")]) == 1
    assert capsys.readouterr().out.split("\n") == [
        "missing  data/train/text", "differs  exp/mono/final.mdl",
        "differs  exp/mono/ali.*.gz (alignments)", "extra    exp/mono/decode_test/wer_* (scores)",
        ""]
    partial = tmp_path / "partial.md"
    partial.write_text(RESULTS.replace("| `exp/mono/final.mdl` | bbb |\n", ""))
    assert fp.main([f"--compare={results}", str(partial)]) == 1
    err = capsys.readouterr().err
    assert "No row of " in err and "1 of its 3 rows are missing here, the first " \
        "'exp/mono/final.mdl'" in err
    assert fp.main([f"--compare={tmp_path}/none.md", str(mine)]) == 1
    assert f"{tmp_path}/none.md: cannot read the fingerprint" in capsys.readouterr().err


def test_experiments_are_listed_by_name_whatever_order_they_were_made(tmp_path):
    """Stages run side by side (the RBMs beside tri1) finish in either order; the rows of two
    runs of the same bits must come in the same order."""
    import os
    lists = []
    for order in (("tri1", "dnn_pretrain", "mono"), ("mono", "dnn_pretrain", "tri1")):
        root = tmp_path / "-".join(order)
        for i, name in enumerate(order):
            d = root / "exp" / name
            d.mkdir(parents=True)
            (d / "final.mdl").write_bytes(name.encode())
            os.utime(d, (1000 + i, 1000 + i))
        lists.append([what for what, _ in recipe_fingerprint(str(root))])
    assert lists[0] == lists[1] == ["exp/dnn_pretrain/final.mdl", "exp/mono/final.mdl",
                                    "exp/tri1/final.mdl"]
