"""egs/digits/s5/local/make_results.py: the closing table and RESULTS.md from the decode
directories, the DNN's epoch files and the stage times of a run (run.sh's stage 10)."""
import json
import shutil

from helpers import ROOT, run_script, write_decode

from nnetmix.kaldi import read_gmm_model

SCRIPT = ROOT / "egs" / "digits" / "s5" / "local" / "make_results.py"


def fake_run(tmp_path, kaldi_fixtures, dnn_wer=2.5):
    """exp/ with mono (10%), tri1 (5%) and a DNN decoded (errors nested: the same seed), two
    DNN epochs (the second rejected), stage times; a corpus with params.json and utt2cond."""
    exp = tmp_path / "exp"
    for name in ("mono", "tri1"):
        (exp / name).mkdir(parents=True)
        shutil.copy(kaldi_fixtures / "yesno" / "40.mdl", exp / name / "final.mdl")
    write_decode(exp / "mono" / "decode_test", 10.0, error_seed=3, best=(17, "1.0"))
    write_decode(exp / "tri1" / "decode_test", 5.0, error_seed=3, best=(15, "0.5"))
    dnn = exp / "dnn_rbm_w2"
    write_decode(dnn / "decode_test", dnn_wer, error_seed=3, best=(12, "0.0"))
    (dnn / "log").mkdir()
    (dnn / "nnet").mkdir()
    for it, (tr, cv, rejected) in enumerate(((1.2, 1.0, False), (0.8, 1.1, True)), 1):
        for kind, loss in (("tr", tr), ("cv", cv)):
            (dnn / "log" / f"iter{it:02d}.{kind}.json").write_text(json.dumps(
                {"avg_loss": loss, "frame_accuracy": 70.0 + it, "num_ranks": 2}))
        (dnn / "nnet" / f"nnet_dbn_dnn_iter{it:02d}_learnrate0.008_tr{tr:.4f}_cv{cv:.4f}"
                        f"{'_rejected' if rejected else ''}").write_text("")
    (exp / "stage_seconds").mkdir()
    (dnn / "stage_seconds").mkdir()
    for n in range(10):
        d = dnn if n >= 8 else exp
        (d / "stage_seconds" / str(n)).write_text(f"{10 * (n + 1)} 3.5 2.0 1.0 {15 * (n + 1)}\n")
    (exp / "run_seconds").write_text("400 2.5 2.0 1.0 790\n")
    (exp / "commands").write_text("2026-01-01 00:00:00 [abc] ./run.sh\n")
    (exp / "fingerprint.md").write_text("| what | md5 |\n| --- | --- |\n| `data/test/text` | 0a |\n")
    corpus = tmp_path / "corpus"
    (corpus / "test").mkdir(parents=True)
    (corpus / "params.json").write_text(json.dumps(
        {"seed": 777, "num_train_spk": 200, "num_test_spk": 20, "max_words": 7,
         "snr": [5.0, 20.0], "clean_share": 0.2}))
    (corpus / ".done").write_text("num_train=2000 num_test=40\n")
    (corpus / "test" / "utt2cond").write_text(
        "".join(f"utt{u:04d} {'clean -' if u % 2 else 'white 7.5'}\n" for u in range(40)))
    return exp, dnn, corpus


def test_closing_table_and_results_file(tmp_path, kaldi_fixtures):
    exp, dnn, corpus = fake_run(tmp_path, kaldi_fixtures)
    out = tmp_path / "RESULTS.md"
    p = run_script([SCRIPT, "--exp", exp, "--dnn-dir", dnn, "--corpus", corpus, "--out", out])
    assert p.returncode == 0, p.stderr
    _, am = read_gmm_model(str(exp / "tri1" / "final.mdl"))
    closing = p.stdout.splitlines()
    rows = [x for x in closing if x.startswith("| ")]
    assert len(rows) == 4 and rows[0].startswith("| system | %WER")
    assert rows[1].startswith(f"| mono (monophone GMM, {am.num_gauss} Gaussians) | 10.00 [40 / 400]")
    assert rows[1].endswith("| - | - | - | 17 / 1.0 |")
    # each system against the one before: tri1's 20 errors are among mono's 40, the DNN's 10
    # among tri1's
    assert rows[2].startswith(f"| tri1 (triphone GMM on deltas, {am.num_pdfs} leaves, ")
    assert "-5.00 [" in rows[2] and "vs mono |" in rows[2]
    assert rows[2].endswith("| significant, tri1 better | 15 / 0.5 |")
    assert rows[3].startswith("| dnn_rbm_w2 (DNN on tri1's alignments, 2 MPI worker(s)) | 2.50 [10 / 400]")
    assert "vs tri1 |" in rows[3] and "significant, dnn_rbm_w2 better" in rows[3]
    assert any(x.startswith("Best: dnn_rbm_w2 at 2.50%; against the next best, tri1 (5.00%): "
                            "-2.50 [") and x.endswith("significant, dnn_rbm_w2 better.")
               for x in closing)
    assert closing[-1] == f"Results: {out}"

    text = out.read_text()
    assert text.startswith("# egs/digits/s5 results\n") and "```\n2026-01-01 00:00:00 [abc] ./run.sh\n```" in text
    assert "Corpus: num_train=2000 num_test=40, 200 training and 20 test speakers (disjoint), " \
           "seed 777, SNR 5:20 dB, clean share 0.2." in text
    assert all(r in text for r in rows)
    # the errors by condition: utterances 0-3 hold mono's errors among the even ones (noisy)
    assert "| system | errors | of them involving OH | clean | SNR 5-10 dB |" in text
    assert "| mono | 40 | 0 |" in text
    # the DNN's epochs, the second rejected; the stage table sums wall and CPU seconds
    assert "| 1 | 0.008 | 1.2000 | 71.00% | 1.0000 | 71.00% | accepted |" in text
    assert "| 2 | 0.008 | 0.8000 | 72.00% | 1.1000 | 72.00% | rejected |" in text
    assert "| 8 | DNN training (MPI) | 90 | 135 | 3.5 2.0 1.0 |" in text
    assert "| | all | 550 | 825 | |" in text
    # the whole run's clock (its decodes overlap the training stages: less than the sum)
    assert "The whole run (stages 0-9 in one go, `exp/run_seconds`): 400 s wall (6.7 min) and " \
           "790 CPU seconds, 1-minute load average 2.5 at its end" in text
    assert "at least its CPU time over 2, 395 s (6.6 min)." in text
    assert "| `data/test/text` | 0a |" in text


def test_best_gmm_named_when_the_dnn_is_not_better(tmp_path, kaldi_fixtures):
    exp, dnn, corpus = fake_run(tmp_path, kaldi_fixtures, dnn_wer=5.0)
    p = run_script([SCRIPT, "--exp", exp, "--dnn-dir", dnn, "--corpus", corpus,
                    "--out", tmp_path / "R.md"])
    assert p.returncode == 0, p.stderr
    best = next(x for x in p.stdout.splitlines() if x.startswith("Best: "))
    # a tie at 5.00%: the system trained first is named, the other is no better
    assert best.startswith("Best: tri1 at 5.00%; against the next best, dnn_rbm_w2 (5.00%): ")
    assert best.endswith("+0.00 [+0.00, +0.00], MAPSSWE p 1, not significant.")


def test_no_decoded_system_is_one_error_line(tmp_path):
    (tmp_path / "exp").mkdir()
    p = run_script([SCRIPT, "--exp", tmp_path / "exp", "--out", tmp_path / "R.md"])
    assert p.returncode == 1
    assert p.stderr.strip().splitlines()[-1].endswith(
        f"no decoded system under {tmp_path / 'exp'} (run stages 0-4)")
    assert not (tmp_path / "R.md").exists()
