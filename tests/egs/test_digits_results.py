"""egs/digits/s5/local/gmm_results.py: RESULTS.md's GMM rows from the decode directories of a
run, tri1's (stage 8) beside the monophone's when it is there."""
import shutil

from helpers import ROOT, run_script, write_decode

from nnetmix.kaldi import read_gmm_model

SCRIPT = ROOT / "egs" / "digits" / "s5" / "local" / "gmm_results.py"


def test_gmm_rows_add_tri1_when_decoded(tmp_path, kaldi_fixtures):
    exp = tmp_path / "exp"
    p = run_script([SCRIPT, "--exp", exp])
    assert p.returncode == 1 and "no decoded GMM under" in p.stderr
    for name in ("mono", "tri1"):
        (exp / name).mkdir(parents=True)
        shutil.copy(kaldi_fixtures / "yesno" / "40.mdl", exp / name / "final.mdl")
    _, am = read_gmm_model(str(exp / "tri1" / "final.mdl"))
    write_decode(exp / "mono" / "decode_test", 10.0, error_seed=3, best=(17, "1.0"))
    p = run_script([SCRIPT, "--exp", exp])
    assert p.returncode == 0, p.stderr
    (mono,) = p.stdout.splitlines()
    assert mono.startswith(f"| monophone GMM (`exp/mono`, {am.num_gauss} Gaussians) | 4 | "
                           "10.00 [ 40 / 400, 0 ins, 0 del, 40 sub ], 95% interval [")
    assert mono.endswith("| 17 / 1.0 | acwt 0.083333 |")
    # tri1's 20 errors are among the monophone's 40 (the same seed): 20 utterances better
    write_decode(exp / "tri1" / "decode_test", 5.0, error_seed=3, best=(15, "0.5"))
    p = run_script([SCRIPT, "--exp", exp])
    assert p.returncode == 0, p.stderr
    rows = p.stdout.splitlines()
    assert rows[0] == mono and len(rows) == 2
    assert rows[1].startswith(f"| triphone GMM on deltas (`exp/tri1`, {am.num_pdfs} leaves, "
                              f"{am.num_gauss} Gaussians) | 8 | 5.00 [ 20 / 400,")
    assert "| 15 / 0.5 | acwt 0.083333; against mono: -5.00 [" in rows[1]
    assert rows[1].endswith("significant, tri1 better |")
