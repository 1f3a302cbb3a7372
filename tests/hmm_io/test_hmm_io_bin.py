"""bin/ tools for models and alignments, on a Kaldi alignment directory made of the yesno files."""
import gzip
import shutil

import numpy as np
import pytest

from helpers import load_bin, run_script
from nnetmix.kaldi import SequentialReader
from nnetmix.kaldi.diag_gmm import read_gmm_model


@pytest.fixture
def alidir(kaldi_fixtures, tmp_path):
    """exp/mono_ali as steps/align_si.sh leaves it: final.mdl + ali.1.gz."""
    yesno = kaldi_fixtures / "yesno"
    shutil.copy(yesno / "40.mdl", tmp_path / "final.mdl")
    shutil.copy(yesno / "ali.1.gz", tmp_path / "ali.1.gz")
    shutil.copy(yesno / "40.occs", tmp_path / "40.occs")
    return tmp_path


def alignments(d):
    with SequentialReader(f"ark:gunzip -c {d}/ali.1.gz |", "ivec") as r:
        return list(r)


def test_ali_to_pdf_command_line(alidir):
    proc = run_script(["ali-to-pdf.py", "final.mdl", "ark:gunzip -c ali.1.gz |", "ark,t:-"],
                      cwd=alidir, check=True)
    assert "LOG (ali-to-pdf.py[" in proc.stderr
    assert "Converted 31 alignments to pdf sequences." in proc.stderr
    tm, _ = read_gmm_model(str(alidir / "final.mdl"))
    lines = proc.stdout.splitlines()
    ali = alignments(alidir)
    assert len(lines) == len(ali) == 31
    for line, (key, a) in zip(lines, ali):
        k, *vals = line.split()
        assert k == key and [int(v) for v in vals] == tm.tid2pdf[a].tolist()


def test_analyze_counts(alidir, capsys):
    ali_to_pdf, analyze = load_bin("ali-to-pdf.py"), load_bin("analyze-counts.py")
    assert ali_to_pdf.main([str(alidir / "final.mdl"),
                            f"ark:gunzip -c {alidir}/ali.1.gz |", f"ark:{alidir}/pdf.ark"]) == 0
    counts_file = alidir / "ali_train_pdf.counts"
    assert analyze.main(["--binary=false", "--counts-dim=20", f"ark:{alidir}/pdf.ark",
                         str(counts_file)]) == 0
    text = counts_file.read_text()
    # Kaldi's Vector<double>::Write in text mode; analyze-counts adds a half-frame to each count
    assert text.startswith(" [ 779.5 350.5 4063.5 ") and text.endswith(" ]\n")
    counts = np.array(text.split()[1:-1], dtype=float) - 0.5
    frames = sum(a.size for _, a in alignments(alidir))
    assert counts.size == 20 and counts.sum() == frames
    occs = np.array((alidir / "40.occs").read_text().split()[1:-1], dtype=float)
    np.testing.assert_array_equal(counts, occs)  # gmm-est's occupancies from the same alignment
    err = capsys.readouterr().err
    assert "Summed 31 int32 vectors to counts, skipped 0 vectors." in err
    assert f"Counts written to {counts_file}" in err


def test_info_tools(alidir, capsys):
    assert load_bin("hmm-info.py").main([str(alidir / "final.mdl")]) == 0
    assert capsys.readouterr().out == ("number of phones 6\nnumber of pdfs 20\n"
                                       "number of transition-ids 48\n"
                                       "number of transition-states 20\n")
    assert load_bin("gmm-info.py").main([str(alidir / "final.mdl")]) == 0
    out = capsys.readouterr().out
    assert out.endswith("feature dimension 39\nnumber of gaussians 940\n")
    assert load_bin("hmm-info.py").main([]) == 1
    assert "Usage:  hmm-info.py [options] <model-in>" in capsys.readouterr().err


def test_gmm_copy(alidir, capsys):
    gmm_copy = load_bin("gmm-copy.py")
    src = alidir / "final.mdl"
    assert gmm_copy.main(["--binary=false", str(src), str(alidir / "t.mdl")]) == 0
    assert (alidir / "t.mdl").read_text().startswith("<TransitionModel> \n<Topology> \n")
    assert gmm_copy.main([str(src), str(alidir / "b.mdl")]) == 0
    assert (alidir / "b.mdl").read_bytes() == src.read_bytes()
    assert gmm_copy.main(["--copy-am=false", str(src), str(alidir / "tm")]) == 0
    assert src.read_bytes().startswith((alidir / "tm").read_bytes())
    assert f"Written model to {alidir / 'b.mdl'}" in capsys.readouterr().err
    copy_tm = load_bin("copy-transition-model.py")
    assert copy_tm.main([str(src), str(alidir / "tm2")]) == 0
    assert (alidir / "tm2").read_bytes() == (alidir / "tm").read_bytes()


def test_ali_to_phones_and_post(alidir):
    tm, _ = read_gmm_model(str(alidir / "final.mdl"))
    phones, post = load_bin("ali-to-phones.py"), load_bin("ali-to-post.py")
    rx = f"ark:gunzip -c {alidir}/ali.1.gz |"
    assert phones.main([str(alidir / "final.mdl"), rx, f"ark,t:{alidir}/ph.txt"]) == 0
    assert phones.main(["--per-frame=true", str(alidir / "final.mdl"), rx,
                        f"ark:{alidir}/pf.ark"]) == 0
    assert post.main([rx, f"ark:{alidir}/post.ark"]) == 0
    ali = dict(alignments(alidir))
    first = (alidir / "ph.txt").read_text().splitlines()[0]
    assert first == "0_0_0_0_1_1_1_1 1 4 5 4 5 4 5 4 5 2 3 6 2 3 6 2 3 6 2 3 6 1 "
    with SequentialReader(f"ark:{alidir}/pf.ark", "ivec") as r:
        for key, pf in r:
            np.testing.assert_array_equal(pf, tm.tid2phone[ali[key]])
    with SequentialReader(f"ark:{alidir}/post.ark", "post") as r:
        for key, p in r:
            assert [i for ((i, w),) in p] == ali[key].tolist() and {w for ((_, w),) in p} == {1.0}


def test_errors_are_one_line(alidir, tmp_path, capsys):
    bad = tmp_path / "bad.mdl"
    bad.write_bytes((alidir / "final.mdl").read_bytes()[:700])
    rc = load_bin("ali-to-pdf.py").main([str(bad), f"ark:gunzip -c {alidir}/ali.1.gz |",
                                         f"ark:{tmp_path}/x.ark"])
    err = capsys.readouterr().err
    assert rc == 1 and "ERROR (" in err and f"{bad}: byte " in err and "Traceback" not in err
    assert not (tmp_path / "x.ark").exists()
    # an alignment from another model: transition-id out of range, named with its key
    with gzip.open(alidir / "ali.1.gz", "rt") as fh:
        (tmp_path / "big.txt").write_text(fh.readline().replace(" 3 ", " 4000 ", 1))
    rc = load_bin("ali-to-pdf.py").main([str(alidir / "final.mdl"), f"ark:{tmp_path}/big.txt",
                                         f"ark:{tmp_path}/x.ark"])
    assert rc == 1 and "key 0_0_0_0_1_1_1_1: transition-id 4000 out of range 1..48" \
        in capsys.readouterr().err


def test_am_info_reads_the_transition_model(alidir, capsys):
    assert load_bin("am-info.py").main([str(alidir / "final.mdl")]) == 0
    assert capsys.readouterr().out == ("number of phones 6\nnumber of pdfs 20\n"
                                       "number of transition-ids 48\n"
                                       "number of transition-states 20\n")
    (alidir / "bad.mdl").write_bytes(b"\0B<TransitionModel> <Topology> garbage")
    assert load_bin("am-info.py").main([str(alidir / "bad.mdl")]) == 1
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("ERROR")]
    assert len(errors) == 1 and "bad.mdl" in errors[0] and "Traceback" not in err


def test_show_alignments(alidir, kaldi_fixtures, capsys):
    tool = load_bin("show-alignments.py")
    phones = str(kaldi_fixtures / "yesno" / "phones.txt")
    assert tool.main([phones, str(alidir / "final.mdl"), f"ark:gunzip -c {alidir}/ali.1.gz |"]) == 0
    out = capsys.readouterr().out.split("\n")
    assert len(out) == 3 * 31 + 1 and out[2] == "" and out[-1] == ""
    tm, _ = read_gmm_model(str(alidir / "final.mdl"))
    key, ali = alignments(alidir)[0]
    ids, names = out[0], out[1]
    assert ids.startswith(key + "  [ ") and names.startswith(key + "  ")
    groups = tm.split_to_phones(ali)
    assert ids[len(key) + 2:].split("] ")[:-1] == ["[ " + " ".join(map(str, g)) + " "
                                                   for g in groups]
    assert len(ids) == len(names)  # each group padded to its phone's width, and back
    symbols = dict(line.split()[::-1] for line in open(phones))
    assert names.split()[1:] == [symbols[str(tm.tid2phone[g[0]])] for g in groups]
    assert tool.main([phones, str(alidir / "final.mdl"), f"ark:{alidir}/none.ark"]) == 1
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("ERROR")]
    assert len(errors) == 1 and "none.ark" in errors[0]


def test_show_transitions(alidir, kaldi_fixtures, capsys):
    """Kaldi's show-transitions on the yesno model Kaldi trained: TransitionModel::Print's
    lines, the probabilities float32 exp of the model's log-probs (each state's sum to one),
    each pdf's count from 40.occs, and [from -> to] as the topology says."""
    tool = load_bin("show-transitions.py")
    phones = str(kaldi_fixtures / "yesno" / "phones.txt")
    assert tool.main([phones, str(alidir / "final.mdl"), str(alidir / "40.occs")]) == 0
    out = capsys.readouterr().out.splitlines()
    tm, _ = read_gmm_model(str(alidir / "final.mdl"))
    assert len(out) == len(tm.tuples) + tm.num_transition_ids
    assert out[0] == "Transition-state 1: phone = SIL hmm-state = 0 pdf = 0"
    p1 = "{:.6g}".format(float(np.exp(np.float32(tm.log_probs[1]))))
    assert out[1] == f" Transition-id = 1 p = {p1} count of pdf = 779 [self-loop]"
    assert out[2].startswith(" Transition-id = 2 p = ") and out[2].endswith(" [0 -> 1]")
    heads = [i for i, line in enumerate(out) if line.startswith("Transition-state")]
    for n, (i, j) in enumerate(zip(heads, heads[1:] + [len(out)]), start=1):
        phone, hmm_state, pdf, _ = tm.tuples[n - 1]
        assert out[i].endswith(f"hmm-state = {hmm_state} pdf = {pdf}")
        probs = [float(line.split(" p = ")[1].split()[0]) for line in out[i + 1:j]]
        assert abs(sum(probs) - 1.0) < 1e-4
        assert sum(line.endswith("[self-loop]") for line in out[i + 1:j]) == 1
    assert tool.main([phones, str(alidir / "final.mdl")]) == 0
    assert "count of pdf" not in capsys.readouterr().out
    (alidir / "short.occs").write_text(" [ 1 2 3 ]\n")
    assert tool.main([phones, str(alidir / "final.mdl"), str(alidir / "short.occs")]) == 1
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("ERROR")]
    assert len(errors) == 1 and "short.occs: 3 occupation counts" in errors[0]


def test_post_to_tacc(alidir, tmp_path, capsys):
    """Kaldi's post-to-tacc on the alignments Kaldi wrote: per transition-id, the count of
    frames with that id (index 0 unused); with --per-pdf, per pdf; a transition-id beyond the
    model is one error naming the key."""
    from nnetmix.kaldi import TableWriter, read_object

    tm, _ = read_gmm_model(str(alidir / "final.mdl"))
    alis = alignments(alidir)
    with TableWriter(f"ark:{tmp_path}/post.ark", "post") as w:
        for k, a in alis:
            w[k] = [[(int(t), 1.0)] for t in a]
    tool = load_bin("post-to-tacc.py")
    assert tool.main([str(alidir / "final.mdl"), f"ark:{tmp_path}/post.ark",
                      str(tmp_path / "tacc")]) == 0
    assert f"Done computing transition stats over {len(alis)} utterances" in \
        capsys.readouterr().err
    tids = np.concatenate([a for _, a in alis])
    want = np.bincount(tids, minlength=tm.num_transition_ids + 1).astype(np.float32)
    np.testing.assert_array_equal(read_object(str(tmp_path / "tacc"), "vec"), want)
    assert tool.main(["--per-pdf=true", "--binary=false", str(alidir / "final.mdl"),
                      f"ark:{tmp_path}/post.ark", str(tmp_path / "pacc")]) == 0
    per_pdf = np.bincount(tm.tid2pdf[tids], minlength=tm.num_pdfs).astype(np.float32)
    np.testing.assert_array_equal(read_object(str(tmp_path / "pacc"), "vec"), per_pdf)
    assert (tmp_path / "pacc").read_text().startswith(" [ ")
    with TableWriter(f"ark:{tmp_path}/bad.ark", "post") as w:
        w["u1"] = [[(tm.num_transition_ids + 1, 1.0)]]
    assert tool.main([str(alidir / "final.mdl"), f"ark:{tmp_path}/bad.ark",
                      str(tmp_path / "x")]) == 1
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("ERROR")]
    assert len(errors) == 1 and f"Invalid transition-id {tm.num_transition_ids + 1} " \
        "encountered for utterance u1" in errors[0]
    assert not (tmp_path / "x").exists()


def test_post_to_pdf_post(alidir, tmp_path, capsys):
    """Kaldi's post-to-pdf-post: Kaldi's yesno alignments as posteriors give ali-to-pdf's pdfs
    with weight 1; in a frame, transition-ids of one pdf are summed (float32), pdfs come in
    increasing order and a sum of exactly 0 is left out (ConvertPosteriorToPdfs)."""
    from nnetmix.kaldi import TableWriter

    tm, _ = read_gmm_model(str(alidir / "final.mdl"))
    alis = alignments(alidir)
    with TableWriter(f"ark:{tmp_path}/post.ark", "post") as w:
        for k, a in alis:
            w[k] = [[(int(t), 1.0)] for t in a]
        # tids 1 and 2 are pdf 0 (SIL's first state), 5 is pdf 1, 9 pdf 2
        assert [tm.tid2pdf[t] for t in (1, 2, 5, 9)] == [0, 0, 1, 2]
        w["zz"] = [[(9, 0.25), (1, 0.5), (2, 0.25), (5, 0.5), (5, -0.5)]]
    tool = load_bin("post-to-pdf-post.py")
    assert tool.main([str(alidir / "final.mdl"), f"ark:{tmp_path}/post.ark",
                      f"ark:{tmp_path}/pdf.ark"]) == 0
    assert "Done converting posteriors to pdf-level posteriors for " \
        f"{len(alis) + 1} utterances." in capsys.readouterr().err
    with SequentialReader(f"ark:{tmp_path}/pdf.ark", "post") as r:
        got = dict(r)
    for k, a in alis:
        assert got[k] == [[(int(tm.tid2pdf[t]), 1.0)] for t in a]
    assert got["zz"] == [[(0, 0.75), (2, 0.25)]]
    with TableWriter(f"ark:{tmp_path}/bad.ark", "post") as w:
        w["u1"] = [[(0, 1.0)]]
    assert tool.main([str(alidir / "final.mdl"), f"ark:{tmp_path}/bad.ark",
                      f"ark:{tmp_path}/x.ark"]) == 1
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("ERROR")]
    assert len(errors) == 1 and "utterance u1: transition-id 0 is not in the model" in errors[0]
    assert not (tmp_path / "x.ark").exists()


def test_copy_tree_text_and_binary(kaldi_fixtures, tmp_path, capsys):
    tool = load_bin("copy-tree.py")
    tree = kaldi_fixtures / "yesno" / "tree"
    assert tool.main(["--binary=false", str(tree), str(tmp_path / "tree.txt")]) == 0
    assert "Copied tree" in capsys.readouterr().err
    assert (tmp_path / "tree.txt").read_text().startswith("ContextDependency ")
    assert tool.main([str(tmp_path / "tree.txt"), str(tmp_path / "tree.bin")]) == 0
    assert (tmp_path / "tree.bin").read_bytes() == tree.read_bytes()
    (tmp_path / "cut").write_bytes(tree.read_bytes()[:40])
    assert tool.main([str(tmp_path / "cut"), str(tmp_path / "tree.out")]) == 1
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("ERROR")]
    assert len(errors) == 1 and "cut" in errors[0] and not (tmp_path / "tree.out").exists()
