"""fingerprint-recipe.py's checksums: tables by content (not by how jobs cut the archives),
models as bytes, a decoding directory's WER files as one row."""
import numpy as np

from helpers import load_bin

from nnetmix.kaldi import TableWriter
from nnetmix.utils.fingerprint import recipe_fingerprint


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
