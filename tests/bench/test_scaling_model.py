"""bench/scaling_model.py: the cost equations on hand-computed cases, monotonicity, the alpha-beta
fit on synthetic timings, bench/scaling.py output parsing, and a whole run on synthetic inputs."""
import json
import math

import pytest

from helpers import allreduce_rows, write_allreduce

from bench import scaling_model as sm
from bench.experiments.plot import have_matplotlib

SCALING_STDOUT = """\
# network 440-2048-2048-8806, minibatch 1024, allreduce mixing (mpi all-reduce) every 10 minibatches, 20 timed minibatches per rank, 1 thread per rank, 2 CPUs
ranks   frames/s  speedup  optimize s  aggregate s   wall s  mixes  load average (1/5/15 min) before -> after
    1     2048.0     1.00       10.00        0.000    10.00      3  0.50 0.40 0.30 -> 0.90 0.50 0.30
    2     3900.0     1.90       10.00        0.520    10.52      3  0.90 0.50 0.30 -> 1.80 0.70 0.40
"""


def test_ring_allreduce_hand_computed():
    # 2(p-1)/p * n * beta + 2(p-1) alpha, p = 4, n = 1 MB, alpha = 10 us, beta = 1 ns/byte
    link = sm.Link(alpha=10e-6, beta=1e-9)
    t = sm.allreduce_seconds("ring", 4, 1e6, link)
    assert t == pytest.approx(2 * 3 / 4 * 1e6 * 1e-9 + 2 * 3 * 10e-6)   # 1.56 ms
    assert t == pytest.approx(1.56e-3)


def test_other_forms_hand_computed():
    link = sm.Link(alpha=5e-6, beta=2e-9)
    n = 4e6
    rd = sm.allreduce_seconds("recursive-doubling", 8, n, link)
    assert rd == pytest.approx(3 * (5e-6 + 8e-3))
    assert sm.allreduce_seconds("tree", 8, n, link) == pytest.approx(6 * (5e-6 + 8e-3))
    assert sm.allreduce_seconds("ring", 1, n, link) == 0.0
    # butterfly and ring mixing: one pairwise exchange of the whole model, whatever p
    for mixing in ("butterfly", "ring"):
        assert sm.mix_seconds(mixing, 16, n, link) == pytest.approx(5e-6 + 8e-3)
        assert sm.mix_seconds(mixing, 1, n, link) == 0.0
    with pytest.raises(ValueError, match="no cost form"):
        sm.allreduce_seconds("mpi", 4, n, link)


def test_link_from_gbps_and_speedup():
    link = sm.Link.from_gbps(56, 2.0)
    assert link.alpha == pytest.approx(2e-6)
    assert link.beta == pytest.approx(8 / 56e9)          # seconds per byte at 56 Gb/s
    assert sm.speedup(16, 1.0, 0.1) == pytest.approx(16 / 1.1)
    assert sm.speedup(1, 1.0, 0.0) == 1.0


def test_predict_hand_computed():
    # S = 10240 frames, P = 1e6, F = 6e9 FLOP/s: C = 10240 * 6e6 / 6e9 = 10.24 s
    w = sm.Workload("x", 1e6, 10240)
    link = sm.Link(alpha=1e-5, beta=1e-9)
    r = sm.predict(w, 8, link, 6e9)
    assert r["compute_s"] == pytest.approx(10.24)
    t = 2 * 7 * 1e-5 + 2 * 7 / 8 * 4e6 * 1e-9
    assert r["comm_s"] == pytest.approx(t)
    assert r["speedup"] == pytest.approx(8 * 10.24 / (10.24 + t))
    assert r["efficiency"] == pytest.approx(r["speedup"] / 8)


def test_projections_hand_computed():
    """Overlapped: p C / max(C, T); 1bit: a ring all-gather of n/32 + 8/256 n bytes per rank."""
    w = sm.Workload("x", 1e6, 10240)
    link = sm.Link(alpha=1e-5, beta=1e-9)
    base = sm.predict(w, 8, link, 6e9)
    ov = sm.predict(w, 8, link, 6e9, overlap=True)
    assert ov["comm_s"] == base["comm_s"] and ov["speedup"] == pytest.approx(8.0)  # C > T
    slow = sm.Link(alpha=1e-5, beta=1e-5)             # T > C: the communication is the bound
    t = sm.predict(w, 8, slow, 6e9)["comm_s"]
    assert t > 10.24
    assert sm.predict(w, 8, slow, 6e9, overlap=True)["speedup"] == pytest.approx(8 * 10.24 / t)
    payload = 1e6 / 8 + 8 * math.ceil(1e6 / 256)      # 125,000 + 31,256 bytes
    cb = sm.predict(w, 8, link, 6e9, compression="1bit")
    assert cb["comm_s"] == pytest.approx(7 * 1e-5 + 7 * payload * 1e-9)
    assert cb["speedup"] == pytest.approx(8 * 10.24 / (10.24 + cb["comm_s"]))
    assert sm.compressed_seconds("fp16", 4, 1e6, link) == pytest.approx(3e-5 + 3 * 2e6 * 1e-9)
    assert sm.compressed_seconds("1bit", 1, 1e6, link) == 0.0
    assert sm.speedup(1, 1.0, 5.0, overlap=True) == 1.0


@pytest.mark.parametrize("algorithm", sm.MODEL_ALGORITHMS)
@pytest.mark.parametrize("p", [16, 32, 64])
def test_speedup_monotone_in_bandwidth_and_latency(algorithm, p):
    w = sm.Workload("seed 001", sm.SEED001_PARAMS, 10240)
    flops = 1.7e12
    bws = [0.1, 1, 10, 56, 100, 400, 10000]
    s = [sm.predict(w, p, sm.Link.from_gbps(b, 2.0), flops, algorithm)["speedup"] for b in bws]
    assert all(b > a for a, b in zip(s, s[1:]))
    assert s[-1] < p                                     # never beyond linear
    lat = [sm.predict(w, p, sm.Link.from_gbps(56, u), flops, algorithm)["speedup"]
           for u in (1, 10, 100, 1000)]
    assert all(b < a for a, b in zip(lat, lat[1:]))


def test_bandwidth_for_speedup_inverts_the_model():
    w = sm.Workload("seed 001", sm.SEED001_PARAMS, 10240)
    bw = sm.bandwidth_for_speedup(w, 16, 9.3, 2.0, 1.7e12)
    assert bw is not None
    s = sm.predict(w, 16, sm.Link.from_gbps(bw, 2.0), 1.7e12)["speedup"]
    assert s == pytest.approx(9.3, rel=1e-6)
    assert sm.bandwidth_for_speedup(w, 16, 16.0, 2.0, 1.7e12) is None   # linear: unreachable


@pytest.mark.parametrize("algorithm", ["ring", "tree", "recursive-doubling"])
def test_fit_recovers_alpha_beta(algorithm):
    alpha, beta = 7e-6, 1 / 2.5e9
    rows = allreduce_rows(alpha, beta, noise=0.01, seed=3)
    fit = sm.fit_link(rows, algorithm, max_ranks=8)
    assert fit["alpha"] == pytest.approx(alpha, rel=0.05)
    assert fit["beta"] == pytest.approx(beta, rel=0.02)
    assert fit["rms_rel_err"] < 0.03


def test_fit_leaves_out_oversubscribed_rows():
    good = allreduce_rows(4e-6, 1 / 3e9, ranks=(2,))
    bad = allreduce_rows(400e-6, 1 / 0.1e9, ranks=(4, 8))   # time sharing, not a link
    fit = sm.fit_link(good + bad, "ring", max_ranks=2)
    assert fit["ranks"] == [2]
    assert fit["alpha"] == pytest.approx(4e-6, rel=1e-6)
    assert fit["beta"] == pytest.approx(1 / 3e9, rel=1e-6)
    with pytest.raises(ValueError, match="fewer than 2 message sizes"):
        sm.fit_link(bad, "ring", max_ranks=2)


def test_parse_scaling_output():
    sc = sm.parse_scaling_output(SCALING_STDOUT)
    assert sc["dims"] == [440, 2048, 2048, 8806]
    assert sc["params"] == 440 * 2048 + 2048 + 2048 * 2048 + 2048 + 2048 * 8806 + 8806
    assert (sc["minibatch"], sc["average_every"], sc["minibatches"]) == (1024, 10, 20)
    assert [r["ranks"] for r in sc["rows"]] == [1, 2]
    assert sc["rows"][1]["aggregate"] == pytest.approx(0.52) and sc["rows"][1]["mixes"] == 3
    with pytest.raises(ValueError, match="no '# network"):
        sm.parse_scaling_output("ranks frames/s\n 1 2 3\n", "x.txt")
    with pytest.raises(ValueError, match="no 1-rank row"):
        sm.parse_scaling_output(SCALING_STDOUT.replace("\n    1 ", "\n    4 "))


def test_worker_speed_forms():
    assert sm.worker_flops("4x", 1e9, 1e6) == pytest.approx(4e9)
    assert sm.worker_flops("4535", 1e9, 63e6) == pytest.approx(4535 * 6 * 63e6)
    with pytest.raises(SystemExit, match="--worker-speed=fast"):
        sm.worker_flops("fast", 1e9, 1e6)


def test_main_writes_table_and_json(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(sm.os, "cpu_count", lambda: 2)   # the rows of 4 and 8 are oversubscribed
    ar = write_allreduce(tmp_path / "ar", allreduce_rows(5e-6, 1 / 3e9, ranks=(2, 4, 8)))
    (tmp_path / "scaling.txt").write_text(SCALING_STDOUT)
    out = tmp_path / "out"
    assert sm.main(["--allreduce-json", str(ar), "--scaling-output",
                    str(tmp_path / "scaling.txt"), "--out-dir", str(out),
                    "--worker-speed", "2x"]) == 0
    md = (out / "scaling_model.md").read_text()
    for seed_speedup in ("| 9.3 |", "| 17 |", "| 28.4 |", "| 56.2 |"):
        assert seed_speedup in md
    res = json.loads((out / "scaling_model.json").read_text())
    assert res["fit"]["ranks"] == [2]
    # compute here: 10 s for 20 minibatches of 1024 frames = 0.5 s each
    assert res["compute"]["ms"] == pytest.approx(500.0)
    here = 6 * res["compute"]["params"] * 1024 / 0.5
    assert res["cluster"]["worker_gflops"] == pytest.approx(2 * here / 1e9)
    # the check against bench/scaling.py's own 2-rank measurement
    [check] = res["check"]
    assert check["ranks"] == 2 and check["measured"] == pytest.approx(1.90)
    assert 1.0 < check["predicted"] <= 2.0
    assert check["rel_err"] == pytest.approx(check["predicted"] / 1.90 - 1)
    pred = {(p["workload"][:5], p["workers"]): p["speedup"] for p in res["predictions"]}
    assert sorted(w for _, w in pred) == [16, 16, 32, 32, 64, 64]
    assert all(0 < s <= w for (_, w), s in pred.items())
    for p in res["predictions"]:    # hiding T never slows down; 1bit's all-gather grows with p
        pj = p["projections"]
        assert p["speedup"] <= pj["overlapped"] <= p["workers"] + 1e-9
        assert pj["1bit"] <= pj["1bit_overlapped"] <= p["workers"] + 1e-9
    assert "| overlapped (projection) | 1bit T (s) | 1bit (projection) |" in md
    assert "wrote" in capsys.readouterr().err
    png = (out / "scaling_model.png")
    assert png.exists() == have_matplotlib()
    if png.exists():
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bad_allreduce_json(tmp_path):
    bad = tmp_path / "allreduce.json"
    bad.write_text("{not json")
    with pytest.raises(SystemExit, match="allreduce.json: not bench/allreduce.py's JSON"):
        sm.main(["--allreduce-json", str(bad), "--compute-ms", "100", "--out-dir",
                 str(tmp_path)])


def test_seed_points_are_the_issue_numbers():
    got = {(p["seed"], p["method"].split(" ")[0], p["workers"]): p["speedup"]
           for p in sm.SEED_POINTS}
    assert got[("001", "model", 16)] == 9.3 and got[("001", "model", 32)] == 17.0
    assert got[("002", "BMUF", 32)] == 28.4 and got[("002", "BMUF-NBM", 64)] == 56.2
    assert math.isclose(sm.K40M_FPS, 4535.5, rel_tol=1e-3)


SCALING_16 = """\
# network 440-512-512-1464, minibatch 1024, allreduce mixing (mpi all-reduce) every 10 minibatches, 20 timed minibatches per rank, 1 thread per rank, 16 CPUs, backend cpu
ranks   frames/s  speedup  optimize s  aggregate s   wall s  mixes  buffers  load average (1/5/15 min) before -> after
    1    10000.0     1.00        2.00        0.000     2.00      2     host  0.1 0.1 0.1 -> 0.1 0.1 0.1
    2    19000.0     1.90        2.00        0.050     2.05      2     host  0.1 0.1 0.1 -> 0.1 0.1 0.1
    4    36000.0     3.60        2.00        0.100     2.10      2     host  0.1 0.1 0.1 -> 0.1 0.1 0.1
   16   120000.0    12.00        2.00        0.300     2.30      2     host  0.1 0.1 0.1 -> 0.1 0.1 0.1
   32   100000.0    10.00        4.00        0.600     4.60      2     host  0.1 0.1 0.1 -> 0.1 0.1 0.1
"""


def test_the_model_is_checked_at_every_rank_count_with_a_core_each(tmp_path, monkeypatch):
    """On a machine of 16 CPUs: the check has the rows of 2, 4 and 16 ranks (32 shares the
    cores), each the hand-computed model speedup p C / (C + mixes x T(p)) beside the measured one
    with its error; --max-ranks fits the link to that machine's rows whatever the cores here."""
    monkeypatch.setattr(sm.os, "cpu_count", lambda: 2)     # rendering on another machine
    alpha, beta = 5e-6, 1 / 3e9
    ar = write_allreduce(tmp_path / "ar", allreduce_rows(alpha, beta, ranks=(2, 4, 8, 16, 32)))
    (tmp_path / "scaling.txt").write_text(SCALING_16)
    out = tmp_path / "out"
    assert sm.main(["--allreduce-json", str(ar), "--scaling-output",
                    str(tmp_path / "scaling.txt"), "--out-dir", str(out),
                    "--max-ranks", "16"]) == 0
    res = json.loads((out / "scaling_model.json").read_text())
    assert res["fit"]["ranks"] == [2, 4, 8, 16]
    assert res["fit"]["alpha"] == pytest.approx(alpha, rel=1e-3)
    assert [c["ranks"] for c in res["check"]] == [2, 4, 16]
    n = 4 * (440 * 512 + 512 + 512 * 512 + 512 + 512 * 1464 + 1464)     # float32 bytes
    c = 2.00                       # 20 minibatches' compute at one rank
    for row, measured in zip(res["check"], (1.90, 3.60, 12.00)):
        p = row["ranks"]
        t = 2 * (p - 1) * alpha + 2 * (p - 1) / p * n * beta
        model = p * c / (c + 2 * t)
        assert row["predicted"] == pytest.approx(model, rel=1e-3)
        assert row["rel_err"] == pytest.approx(model / measured - 1, rel=1e-3)
    md = (out / "scaling_model.md").read_text()
    assert "at the rank counts with a core each (16 CPUs)" in md
    assert "| ranks | all-reduces | measured speedup | model | error |" in md
    assert f"| 16 | 2 | 12.00 | {res['check'][2]['predicted']:.2f} | " in md
    assert "| 32 | 2 |" not in md
