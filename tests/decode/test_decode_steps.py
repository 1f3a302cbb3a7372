"""steps/decode.sh + local/score.sh end to end on the Kaldi yesno model and graph, with features
synthesised from the model's Gaussians along the fixture's alignments (13 static dims; the
script's apply-cmvn + add-deltas make the model's 39)."""
import kaldi_hmm_gmm  # noqa: F401,I001 -- before kaldifst
import gzip

from helpers import run_script, yesno_recipe


def test_decode_and_score_yesno(kaldi_fixtures, tmp_path):
    mono = yesno_recipe(tmp_path, kaldi_fixtures, num_utts=4, noise=0.5)
    proc = run_script(["steps/decode.sh", "--nj", "2", "--scoring-opts",
                       "--min-lmwt 9 --max-lmwt 11 --word-ins-penalty 0.0,1.0",
                       "mono/graph", "data", "mono/decode"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    dec = mono / "decode"
    assert (dec / "lat.1.gz").is_file() and (dec / "lat.2.gz").is_file()
    assert (dec / "num_jobs").read_text().strip() == "2"
    for lmwt in (9, 10, 11):
        for wip in ("0.0", "1.0"):
            wer = (dec / f"wer_{lmwt}_{wip}").read_text()
            assert wer.startswith("%WER 0.00 [ 0 / 32, 0 ins, 0 del, 0 sub ]"), wer
            tra = (dec / "scoring" / f"{lmwt}.{wip}.tra").read_text().splitlines()
            assert len(tra) == 4
    assert (dec / "scoring" / "10.0.0.tra").read_text().splitlines() == \
        (tmp_path / "data" / "text").read_text().splitlines()
    log = (dec / "log" / "decode.1.log").read_text()
    assert "Log-like per frame for utterance" in log and "Done 2 utterances, failed for 0" in log
    assert "best: %WER 0.00" in proc.stdout
    again = run_script(["steps/decode.sh", "--nj", "2", "--skip-scoring", "true",
                        "mono/graph", "data", "mono/decode"], cwd=tmp_path)
    assert again.returncode == 0 and "skipping decoding" in again.stdout
    # the compiled LatticeFasterDecoder through the same script
    fast = run_script(["steps/decode.sh", "--nj", "2", "--decoder", "faster", "--scoring-opts",
                       "--min-lmwt 10 --max-lmwt 10", "mono/graph", "data", "mono/decode_faster"],
                      cwd=tmp_path)
    assert fast.returncode == 0, fast.stdout + fast.stderr
    assert "--decoder=faster" in (mono / "decode_faster" / "log" / "decode.1.log").read_text()
    assert (mono / "decode_faster" / "wer_10_0.0").read_text().startswith(
        "%WER 0.00 [ 0 / 32, 0 ins, 0 del, 0 sub ]")
    # --num-threads 2: gmm-latgen-faster-parallel.py, the same lattices
    par = run_script(["steps/decode.sh", "--nj", "2", "--decoder", "faster", "--num-threads", "2",
                      "--skip-scoring", "true", "mono/graph", "data", "mono/decode_par"],
                     cwd=tmp_path)
    assert par.returncode == 0, par.stdout + par.stderr
    log = (mono / "decode_par" / "log" / "decode.1.log").read_text()
    assert "gmm-latgen-faster-parallel.py --num-threads=2" in log
    assert "Decoded with 2 threads." in log
    for n in (1, 2):
        assert gzip.decompress((mono / "decode_par" / f"lat.{n}.gz").read_bytes()) == \
            gzip.decompress((mono / "decode_faster" / f"lat.{n}.gz").read_bytes())
