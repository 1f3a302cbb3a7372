"""Feature pipelines (nnetmix.feat.pipeline): the same matrices as the bash chain
``apply-cmvn.py ... | add-deltas.py ... |`` bit for bit, subsets in the list's order without
reading the others, JSON errors naming the file, and the tools that write and read them."""
import json
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import dummy_feats, load_bin

from nnetmix.feat import (FeaturePipeline, PipelineError, compute_cmvn_stats, open_features,
                          table_keys)
from nnetmix.kaldi import SequentialReader, TableWriter
from nnetmix.nnet import feature_transform_from_table, read_nnet

ROOT = Path(__file__).resolve().parents[2]
KEYS = [f"spk{s}-u{u}" for s in range(3) for u in range(3)]


def run(tool, argv, capsys):
    rc = load_bin(tool).main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return rc, out, err


@pytest.fixture
def data(tmp_path):
    """A data dir: 9 utterances of 3 speakers, per-speaker cmvn.scp; a shuffled utterance list."""
    d = tmp_path / "data"
    d.mkdir()
    with TableWriter(f"ark,scp:{d}/feats.ark,{d}/feats.scp", "mat") as w:
        for i, k in enumerate(KEYS):
            w[k] = dummy_feats(20 + 7 * i, dim=5, seed=i) * 3.0 + i
    (d / "utt2spk").write_text("".join(f"{k} {k.split('-')[0]}\n" for k in KEYS))
    (d / "spk2utt").write_text("".join(
        f"spk{s} {' '.join(k for k in KEYS if k.startswith(f'spk{s}-'))}\n" for s in range(3)))
    compute_cmvn_stats(f"scp:{d}/feats.scp", f"ark,scp:{d}/cmvn.ark,{d}/cmvn.scp",
                       spk2utt=f"ark:{d}/spk2utt")
    lines = (d / "feats.scp").read_text().splitlines()
    order = [4, 0, 7, 2, 8, 1, 5, 3, 6]
    (tmp_path / "train.scp").write_text("".join(lines[i] + "\n" for i in order))
    return d


def bash_chain(d, utt_list, cmvn_opts, delta_opts):
    """The rspecifier steps/nnet/train.sh used to build (the tools run as subprocesses)."""
    py = sys.executable
    feats = f"scp:{utt_list}"
    if cmvn_opts:
        feats = (f"ark:{py} {ROOT}/bin/apply-cmvn.py --print-args=false {cmvn_opts} "
                 f"--utt2spk=ark:{d}/utt2spk scp:{d}/cmvn.scp {feats} ark:- |")
    if delta_opts:
        deltas = f"{py} {ROOT}/bin/add-deltas.py --print-args=false {delta_opts}"
        feats = (f"{feats} {deltas} ark:- ark:- |" if cmvn_opts
                 else f"ark:{deltas} {feats} ark:- |")
    with SequentialReader(feats, "mat") as r:
        return [(k, np.array(m)) for k, m in r]


@pytest.mark.parametrize("cmvn_opts, delta_opts", [
    ("--norm-means=true --norm-vars=false", ""),
    ("--norm-vars=true", "--delta-order=2"),
    ("", "--delta-order=1 --delta-window=3"),
    ("--norm-means=false", "--truncate=3"),
])
def test_pipeline_is_the_bash_chain_bit_for_bit(data, tmp_path, cmvn_opts, delta_opts):
    utt_list = tmp_path / "train.scp"
    pipe = FeaturePipeline.for_data_dir(str(data), cmvn_opts, delta_opts, str(utt_list))
    pipe.write(str(tmp_path / "p.json"))
    with open_features(f"pipeline:{tmp_path}/p.json") as f:
        got = list(f)
    want = bash_chain(data, utt_list, cmvn_opts, delta_opts)
    assert [k for k, _ in got] == [k for k, _ in want] == table_keys(f"scp:{utt_list}")
    for (_, a), (_, b) in zip(got, want):
        assert a.dtype == b.dtype == np.float32 and a.tobytes() == b.tobytes()


def test_subset_in_list_order_without_reading_the_others(data, tmp_path):
    # the entry of spk0-u0 points to a file that does not exist: reading it would fail
    lines = (tmp_path / "train.scp").read_text().splitlines()
    broken = [ln if not ln.startswith("spk0-u0 ") else "spk0-u0 /nonexistent.ark:5" for ln in lines]
    (tmp_path / "broken.scp").write_text("\n".join(broken) + "\n")
    FeaturePipeline.for_data_dir(str(data), "--norm-vars=true", "--delta-order=2",
                                 str(tmp_path / "broken.scp")).write(str(tmp_path / "p.json"))
    spec = f"pipeline:{tmp_path}/p.json"
    order = table_keys(spec)
    assert order == [ln.split()[0] for ln in lines]
    subset = ["spk2-u2", "spk1-u1", "spk0-u2", "nosuchkey"]
    with open_features(spec, subset) as f:
        got = dict(f)
    assert list(got) == [k for k in order if k in subset]          # the list's order
    with pytest.raises(Exception, match="nonexistent"), open_features(spec) as f:
        list(f)
    FeaturePipeline.for_data_dir(str(data), "--norm-vars=true", "--delta-order=2",
                                 str(tmp_path / "train.scp")).write(str(tmp_path / "q.json"))
    with open_features(f"pipeline:{tmp_path}/q.json") as f:
        whole = dict(f)
    for k in got:
        assert got[k].tobytes() == whole[k].tobytes()
    # scp: files are looked up by key too; other rspecifiers are read whole, others skipped
    with open_features(f"scp:{tmp_path}/broken.scp", ["spk2-u2", "spk1-u2"]) as f:
        assert [k for k, _ in f] == ["spk2-u2", "spk1-u2"]
    with open_features(f"ark:{data}/feats.ark", ["spk2-u2", "spk0-u1"]) as f:
        assert [k for k, _ in f] == ["spk0-u1", "spk2-u2"]
    assert table_keys(f"ark:{data}/feats.ark") is None


def test_skipped_utterance_as_apply_cmvn_skips_it(data, tmp_path, caplog):
    (data / "utt2spk").write_text("".join(f"{k} {k.split('-')[0]}\n" for k in KEYS[1:]))
    FeaturePipeline.for_data_dir(str(data), "--norm-means=true").write(str(tmp_path / "p.json"))
    with open_features(f"pipeline:{tmp_path}/p.json") as f:
        assert [k for k, _ in f] == KEYS[1:]
    assert "No speaker for utterance spk0-u0" in caplog.text


@pytest.mark.parametrize("text, needle", [
    (None, "cannot read the feature pipeline"),
    ("{not json", "bad JSON at line 1"),
    ("[1, 2]", "expected a JSON object"),
    ('{"version": 1}', "missing field 'utt_list'"),
    ('{"version": 2, "utt_list": "a.scp"}', "field 'version' is 2"),
    ('{"version": 1, "utt_list": "a.scp", "lda": "x.mat"}', "unknown field 'lda'"),
    ('{"version": 1, "utt_list": "a.scp", "cmvn": "scp:c.scp", "cmvn_opts": "--norm-var=1"}',
     "unknown option '--norm-var=1'"),
    ('{"version": 1, "utt_list": "a.scp", "delta_opts": "--delta-order=x"}', "bad value"),
    ('{"version": 1, "utt_list": "a.scp", "cmvn_opts": "--norm-vars=true"}', "without 'cmvn'"),
    ('{"version": 1, "utt_list": 3}', "must be a string"),
])
def test_bad_pipeline_files(tmp_path, text, needle):
    p = tmp_path / "p.json"
    if text is not None:
        p.write_text(text)
    with pytest.raises(PipelineError, match=needle) as e:
        open_features(f"pipeline:{p}")
    assert str(e.value).startswith(str(p)) and "\n" not in str(e.value)


def test_write_is_atomic_and_round_trips(data, tmp_path):
    pipe = FeaturePipeline.for_data_dir(str(data), "--norm-vars=true", "--delta-order=2")
    pipe.write(str(tmp_path / "p.json"))
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("p.json")] == ["p.json"]
    assert FeaturePipeline.read(str(tmp_path / "p.json")) == pipe
    assert json.loads((tmp_path / "p.json").read_text())["cmvn"] == f"scp:{data}/cmvn.scp"


def test_make_feature_pipeline_tool(data, tmp_path, capsys):
    out = tmp_path / "p.json"
    rc, _, err = run("make-feature-pipeline.py",
                     ["--cmvn-opts=--norm-vars=true", "--delta-opts=--delta-order=1",
                      f"--utt-list={tmp_path}/train.scp", data, out], capsys)
    assert rc == 0, err
    pipe = FeaturePipeline.read(str(out))
    assert (pipe.utt_list, pipe.cmvn_opts, pipe.delta_opts, pipe.utt2spk) == (
        f"{tmp_path}/train.scp", "--norm-vars=true", "--delta-order=1", f"ark:{data}/utt2spk")
    # the same chain for another data set, from a model dir's cmvn_opts/delta_opts files
    model = tmp_path / "exp"
    model.mkdir()
    (model / "cmvn_opts").write_text("--norm-vars=true\n")
    rc, _, err = run("make-feature-pipeline.py", [f"--opts-from={model}", data, tmp_path / "q.json"],
                     capsys)
    assert rc == 0, err
    q = FeaturePipeline.read(str(tmp_path / "q.json"))
    assert (q.utt_list, q.cmvn_opts, q.delta_opts) == (f"{data}/feats.scp", "--norm-vars=true", "")
    (data / "cmvn.scp").unlink()
    rc, _, err = run("make-feature-pipeline.py", ["--cmvn-opts=--norm-vars=true", data, out],
                     capsys)
    assert rc == 1 and f"no such file {data}/cmvn.scp (needed by --cmvn-opts" in err
    assert FeaturePipeline.read(str(out)) == pipe   # the old file is left alone


def test_feature_tools_read_pipelines(data, tmp_path, capsys):
    FeaturePipeline.for_data_dir(str(data), "--norm-vars=true", "--delta-order=2",
                                 str(tmp_path / "train.scp")).write(str(tmp_path / "p.json"))
    spec = f"pipeline:{tmp_path}/p.json"
    with open_features(spec) as f:
        want = list(f)
    rc, out, err = run("feat-to-dim.py", [spec, "-"], capsys)
    assert rc == 0 and out.strip() == "15", err
    rc, _, err = run("feat-to-len.py", [spec, f"ark,t:{tmp_path}/len"], capsys)
    assert rc == 0, err
    assert (tmp_path / "len").read_text() == "".join(f"{k} {m.shape[0]}\n" for k, m in want)
    rc, _, err = run("copy-feats.py", [spec, f"ark:{tmp_path}/copy.ark"], capsys)
    assert rc == 0, err
    with SequentialReader(f"ark:{tmp_path}/copy.ark", "mat") as r:
        assert [(k, m.tobytes()) for k, m in r] == [(k, m.tobytes()) for k, m in want]
    rc, _, err = run("compute-cmvn-stats.py", [f"--spk2utt=ark:{data}/spk2utt", spec,
                                               f"ark:{tmp_path}/spk.ark"], capsys)
    assert rc == 0, err
    rc, _, err = run("compute-cmvn-stats.py", [f"--spk2utt=ark:{data}/spk2utt",
                                               f"ark:{tmp_path}/copy.ark", f"ark:{tmp_path}/spk2.ark"],
                     capsys)
    assert (tmp_path / "spk.ark").read_bytes() == (tmp_path / "spk2.ark").read_bytes()


def test_feature_transform_tool_is_the_four_tool_route(data, tmp_path, capsys):
    """make-feature-transform.py on a pipeline == feature_transform_from_table on the bash chain
    of the first --max-utts utterances (train.sh's head -n 10000 list)."""
    FeaturePipeline.for_data_dir(str(data), "--norm-vars=false", "--delta-order=1",
                                 str(tmp_path / "train.scp")).write(str(tmp_path / "p.json"))
    rc, _, err = run("make-feature-transform.py", ["--splice=2", "--max-utts=5",
                                                   f"pipeline:{tmp_path}/p.json", tmp_path / "ft"],
                     capsys)
    assert rc == 0 and "Written the feature transform (10 -> 50)" in err, err
    head = (tmp_path / "train.scp").read_text().splitlines()[:5]
    (tmp_path / "head.scp").write_text("\n".join(head) + "\n")
    chain = bash_chain(data, tmp_path / "head.scp", "--norm-vars=false", "--delta-order=1")
    with TableWriter(f"ark:{tmp_path}/chain.ark", "mat") as w:
        for k, m in chain:
            w[k] = m
    feature_transform_from_table(f"ark:{tmp_path}/chain.ark", splice=2).write(
        str(tmp_path / "ft2"), binary=False)
    assert (tmp_path / "ft").read_bytes() == (tmp_path / "ft2").read_bytes()
    assert read_nnet(str(tmp_path / "ft")).output_dim == 50
    rc, _, err = run("nnet-activation-cmvn.py", [tmp_path / "ft", f"pipeline:{tmp_path}/p.json",
                                                 tmp_path / "act"], capsys)
    assert rc == 0 and "(dim 50)" in err, err


def test_aligners_look_up_a_pipeline_in_and_out_of_order(data, tmp_path):
    """The GMM aligners' random access (nnetmix.hmm.align_tools.open_lookup) into a pipeline:
    streamed forward in list order, a key behind the stream computed alone, an unknown key
    None; every matrix is the one open_features gives."""
    from nnetmix.hmm.align_tools import PipelineLookup, open_lookup

    FeaturePipeline.for_data_dir(str(data), "--norm-vars=true", "--delta-order=2").write(
        str(tmp_path / "p.json"))
    spec = f"pipeline:{tmp_path}/p.json"
    with open_features(spec) as f:
        want = dict(f)
    asked = [KEYS[0], KEYS[2], KEYS[1], "nobody", KEYS[8], KEYS[3]]
    with open_lookup(spec) as look:
        assert isinstance(look, PipelineLookup)
        got = [look.get(k) for k in asked]
    for k, m in zip(asked, got):
        if k == "nobody":
            assert m is None
        else:
            assert m.tobytes() == want[k].tobytes()


def write_transforms(tmp_path, in_dim):
    """An LDA-like global matrix (7 x 3*in_dim, linear) and per-speaker affine 7x8 fMLLR
    transforms keyed by speaker; returns (final.mat path, trans ark path)."""
    rng = np.random.default_rng(7)
    mat = tmp_path / "final.mat"
    from nnetmix.kaldi import write_object
    write_object(str(mat), rng.standard_normal((7, 3 * in_dim)).astype(np.float32), "mat")
    with TableWriter(f"ark:{tmp_path}/trans.1", "mat") as w:
        for s in range(3):
            w[f"spk{s}"] = (np.hstack([np.eye(7), np.zeros((7, 1))])
                            + 0.1 * rng.standard_normal((7, 8))).astype(np.float32)
    return mat, tmp_path / "trans.1"


def test_lda_and_fmllr_chain_is_the_bash_chain_bit_for_bit(data, tmp_path):
    mat, trans = write_transforms(tmp_path, 5)
    utt_list = tmp_path / "train.scp"
    pipe = FeaturePipeline.for_data_dir(str(data), "--norm-vars=false", "", str(utt_list),
                                        "--left-context=1 --right-context=1", str(mat),
                                        f"ark:{trans}")
    pipe.write(str(tmp_path / "p.json"))
    assert pipe.spk_utt2spk == f"ark:{data}/utt2spk"
    with open_features(f"pipeline:{tmp_path}/p.json") as f:
        got = list(f)
    py = sys.executable
    bins = f"{py} {ROOT}/bin"
    chain = (f"ark:{bins}/apply-cmvn.py --print-args=false --norm-vars=false "
             f"--utt2spk=ark:{data}/utt2spk scp:{data}/cmvn.scp scp:{utt_list} ark:- | "
             f"{bins}/splice-feats.py --print-args=false --left-context=1 --right-context=1 "
             f"ark:- ark:- | {bins}/transform-feats.py --print-args=false {mat} ark:- ark:- | "
             f"{bins}/transform-feats.py --print-args=false --utt2spk=ark:{data}/utt2spk "
             f"ark:{trans} ark:- ark:- |")
    with SequentialReader(chain, "mat") as r:
        want = [(k, np.array(m)) for k, m in r]
    assert [k for k, _ in got] == [k for k, _ in want] and len(got) == len(KEYS)
    for (_, a), (_, b) in zip(got, want):
        assert a.shape[1] == 7 and a.dtype == b.dtype == np.float32
        assert a.tobytes() == b.tobytes()
    # the transform fields are written only when set: a chain without them is written as before
    plain = FeaturePipeline.for_data_dir(str(data), "--norm-vars=false")
    assert "transform" not in plain.to_dict() and "transform" in pipe.to_dict()


def test_speaker_without_a_transform_is_skipped_as_transform_feats_skips_it(data, tmp_path,
                                                                           caplog):
    _, trans = write_transforms(tmp_path, 5)
    with TableWriter(f"ark:{tmp_path}/trans.2", "mat") as w, \
            SequentialReader(f"ark:{trans}", "mat") as r:
        for k, m in r:
            if k != "spk1":
                w[k] = np.array(m)[:5, [0, 1, 2, 3, 4, 7]]
    FeaturePipeline.for_data_dir(str(data), spk_transforms=f"ark:{tmp_path}/trans.2").write(
        str(tmp_path / "p.json"))
    with open_features(f"pipeline:{tmp_path}/p.json") as f:
        assert [k for k, _ in f] == [k for k in KEYS if not k.startswith("spk1-")]
    assert "No fMLLR transform available for utterance spk1-u0 [spk = spk1]" in caplog.text


def test_opts_from_a_directory_with_final_mat_is_lda(data, tmp_path, capsys):
    mat, trans = write_transforms(tmp_path, 5)
    model = tmp_path / "tri2"
    model.mkdir()
    (model / "cmvn_opts").write_text("--norm-means=true\n")
    (model / "delta_opts").write_text("--delta-order=2\n")
    (model / "splice_opts").write_text("--left-context=1 --right-context=1\n")
    out = tmp_path / "q.json"
    rc, _, err = run("make-feature-pipeline.py", [f"--opts-from={model}", data, out], capsys)
    assert rc == 0, err
    q = FeaturePipeline.read(str(out))
    # no final.mat: deltas, and splice_opts is not used (Kaldi's feat_type=delta)
    assert (q.delta_opts, q.splice_opts, q.transform) == ("--delta-order=2", "", "")
    (model / "final.mat").write_bytes(mat.read_bytes())
    rc, _, err = run("make-feature-pipeline.py", [f"--opts-from={model}",
                                                  f"--spk-transforms=ark:{trans}", data, out],
                     capsys)
    assert rc == 0, err
    q = FeaturePipeline.read(str(out))
    assert (q.delta_opts, q.splice_opts, q.transform, q.spk_transforms) == (
        "", "--left-context=1 --right-context=1", str(model / "final.mat"), f"ark:{trans}")
    with open_features(f"pipeline:{out}") as f:
        assert {m.shape[1] for _, m in f} == {7}
    rc, _, err = run("make-feature-pipeline.py", [f"--transform={tmp_path}/nosuch.mat", data,
                                                  tmp_path / "r.json"], capsys)
    assert rc == 1 and f"no such file {tmp_path}/nosuch.mat (the transform)" in err


def test_make_feature_pipelines_script_picks_the_jobs_transforms(data, tmp_path):
    from helpers import run_script
    mat, trans = write_transforms(tmp_path, 5)
    run_script(["utils/split_data.sh", data, 2], cwd=ROOT, check=True)
    tdir = tmp_path / "tri3"
    tdir.mkdir()
    for n in (1, 2):
        (tdir / f"trans.{n}").write_bytes(trans.read_bytes())
    (tdir / "num_jobs").write_text("2\n")
    exp = tmp_path / "exp"
    args = ["steps/make_feature_pipelines.sh", "--cmvn-opts", "--norm-means=true",
            "--splice-opts", "--left-context=1 --right-context=1", "--transform", mat,
            "--transform-dir", tdir, data, 2, exp]
    run_script(args, cwd=ROOT, check=True)
    p2 = FeaturePipeline.read(str(exp / "feats.2.json"))
    assert (p2.spk_transforms, p2.transform) == (f"ark:{tdir}/trans.2", str(mat))
    (tdir / "num_jobs").write_text("3\n")   # split otherwise: every job reads all of them
    (tdir / "trans.2").write_bytes(b"")      # (each speaker in one of the files)
    run_script(args, cwd=ROOT, check=True)
    assert FeaturePipeline.read(str(exp / "feats.1.json")).spk_transforms == \
        f"ark:cat {tdir}/trans.*|"
    with open_features(f"pipeline:{exp}/feats.1.json") as f:
        assert {m.shape[1] for _, m in f} == {7}
    (tdir / "trans.1").unlink()
    proc = run_script(args, cwd=ROOT)
    assert proc.returncode == 1 and f"no such file {tdir}/trans.1" in proc.stderr
