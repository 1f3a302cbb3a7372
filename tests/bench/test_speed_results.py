"""bench/plans/speed.toml's store and bench/RESULTS.md: a plan of benchmarks only runs through
bench/campaign.py without prerequisites (a real bench/feature_speed.py, small), each benchmark's
tables render from its stored JSON as the script prints them, and --tables-only rewrites
bench/RESULTS.md and the charts byte for byte; the committed bench/RESULTS.md is its store's."""
import json
import shutil
import subprocess
import sys

import pytest

from helpers import ROOT, allreduce_rows

from bench import feature_speed, train_throughput
from bench.experiments import speed_tables
from bench.experiments.campaign import CampaignOptions, run_campaign
from bench.experiments.plot import have_matplotlib
from bench.experiments.spec import BenchSpec, PlanError, bench_id, load_plan
from bench.experiments.store import Store
from bench.experiments.tasks import get_task

SCRIPT = ROOT / "bench" / "campaign.py"
needs_sox = pytest.mark.skipif(shutil.which("sox") is None, reason="sox synthesises the wavs")
needs_mpl = pytest.mark.skipif(not have_matplotlib(), reason="matplotlib (the bench extra)")

FEATURES = {"config": "mfcc.conf", "plp_config": "plp.conf", "wavs": 4, "audio_seconds": 10.0,
            "cpus": 2, "repeat": 3,
            "mfcc": [{"nj": 1, "frames": 1000, "ours_e2e_s": 0.5, "ours_compute_s": 0.2,
                      "knf_s": 0.25},
                     {"nj": 2, "frames": 1000, "ours_e2e_s": 0.3, "ours_compute_s": 0.1,
                      "knf_s": 0.2}],
            "plp": [{"nj": 1, "frames": 1000, "plp_e2e_s": 0.6, "plp_compute_s": 0.4},
                    {"nj": 2, "frames": 1000, "plp_e2e_s": 0.4, "plp_compute_s": 0.2}],
            "plp_numpy_s": 0.01}
THROUGHPUT = {"torch": True, "rows": [
    {"dims": [440, 512, 512, 512, 500], "mb": 256, "threads": 1, "sgemm_gflops": 50.0,
     "params": 1_000_000, "ours_fps": 4000.0, "torch_fps": 5000.0, "backend": "cpu"},
    {"dims": [440, 512, 512, 512, 500], "mb": 256, "threads": 2, "sgemm_gflops": 90.0,
     "params": 1_000_000, "ours_fps": 7000.0, "torch_fps": 3500.0, "backend": "cpu"}]}

RBM = {"backend": "cpu", "steps": 10, "rows": [
    {"vis": 440, "hid": 2048, "type": "gauss", "mb": 100, "ours_fps": 3000.0,
     "torch_fps": 2000.0}]}
NGSGD = {"net": "440-512-500", "minibatch": 256, "backend": "cpu", "threads_numba": 2,
         "steps_per_optimizer": 8, "sgd_step_s": 0.1, "ngsgd_step_s": 0.11,
         "sgd_step_min_s": 0.09, "ngsgd_step_min_s": 0.1, "overhead_step": 0.1,
         "plain_grad_s": 0.03, "ngsgd_hook_s": 0.04, "overhead_hook": 0.1,
         "loadavg_before": 1.0, "loadavg_after": 1.1, "ngsgd_updates_limited": 0, "cores": 2}
# what the two text-only benchmarks print (their tables are kept as printed)
DECODE = ("| max-active | beam | decoder | seconds | RTF | x C++ (CPU) |\n| --- | --- | --- | --- "
          "| --- | --- |\n| 7000 | 13 | nnetmix faster | 1.708 | 0.0148 | 0.66 |\n")
DETERMINIZE = "| step | seconds |\n| --- | --- |\n| determinize, compiled | 0.676 |\n" \
              "\ncompiled over python: 35.1x faster\n"


def _store(root, rows):
    """A speed store at <root>/bench/results holding the three charted benchmarks."""
    store = Store(root / "bench" / "results", "speed")
    outputs = {"feature_speed": {"feature_speed.json": json.dumps(FEATURES)},
               "train_throughput": {"train_throughput.json": json.dumps(THROUGHPUT)},
               "rbm_throughput": {"rbm_throughput.json": json.dumps(RBM)},
               "ngsgd_overhead": {"ngsgd_overhead.json": json.dumps(NGSGD)},
               "allreduce": {"allreduce.json": json.dumps(rows)},
               "decode_speed": {"decode_speed.txt": DECODE},
               "determinize_speed": {"determinize_speed.txt": DETERMINIZE}}
    for bench, files in outputs.items():
        spec = BenchSpec("speed", bench, ("--quick",))
        store.write_bench({"run_id": bench_id(spec), "kind": "bench", "bench": spec.key(),
                           "name": bench, "command": [f"bench/{bench}.py", "--quick"],
                           "code": "abc1234", "machine": {"cpu": "Test CPU 9000", "cores": 2},
                           "load": "1.50 1.20 1.00 -> 2.00 1.40 1.10",
                           "seconds": {"run": 12.3}, "files": sorted(files)},
                          {k: v.encode() for k, v in files.items()})
    return store


def test_tables_are_the_scripts_own_with_machine_and_load(tmp_path):
    store = _store(tmp_path, allreduce_rows(5e-6, 1 / 3e9, ranks=(2,)))
    text = speed_tables.render(store)
    assert text.startswith("# Speed benchmarks\n")
    assert text.count("Machine: Test CPU 9000, 2 cores; load average 1.50 1.20 1.00 -> "
                      "2.00 1.40 1.10; 12 s.") == 7
    # each benchmark's tables as the script prints them, ratios against its reference included
    assert feature_speed.report(FEATURES) in text
    assert "| 1 | 1000 | 2,000 | 5,000 | 4,000 | 0.50 | 1.25 |" in text
    assert train_throughput.report(THROUGHPUT["rows"], True) in text
    assert "| 4000 | 5000 | 0.80x |" in text and "| 7000 | 3500 | 2.00x |" in text
    # a script's "# title" one level under its section
    assert "\n### CD-1 steps on cpu, medians of 10 steps\n" in text
    assert "| gauss-bern 440-2048 | 100 | 3,000 | 2,000 | 1.50x |" in text
    assert "\n### NG-SGD overhead, cpu backend, 440-512-500, minibatch 256, 2 threads\n" in text
    assert "| 0.100 | 0.110 | 10.0% |" in text
    assert "\n### 2 ranks\n" in text and "\n### alpha-beta fits\n" in text
    assert DECODE in text and DETERMINIZE in text  # printed tables, kept as printed
    # sections in a fixed order, each record linked relative to bench/RESULTS.md, charts named
    assert text.index("## Feature extraction") < text.index("## DNN training throughput") \
        < text.index("## RBM pretraining") < text.index("## NG-SGD's cost") \
        < text.index("## All-reduce time") < text.index("## Decoding real-time factor") \
        < text.index("## Lattice determinization")
    bid = bench_id(BenchSpec("speed", "allreduce", ("--quick",)))
    assert f"[{bid}](results/speed/{bid}/result.json): `bench/allreduce.py --quick`" in text
    for bench in speed_tables.CHARTED:
        assert f"](../docs/img/speed_{bench}.png)" in text


def test_an_empty_store_says_so(tmp_path):
    assert "No benchmark is stored yet." in speed_tables.render(Store(tmp_path, "speed"))


@needs_mpl
def test_tables_only_rewrites_results_and_charts_byte_for_byte(tmp_path):
    store = _store(tmp_path, allreduce_rows(5e-6, 1 / 3e9, ranks=(2, 4)))
    plan = tmp_path / "speed.toml"
    plan.write_text('task = "speed"\n[[bench]]\nbench = "feature_speed"\n')
    cmd = [sys.executable, SCRIPT, "--plan", plan, "--store", store.root, "--tables-only"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    md, img = tmp_path / "bench" / "RESULTS.md", tmp_path / "docs" / "img"
    assert md.read_text() == speed_tables.render(store)
    pngs = {f.name: f.read_bytes() for f in img.glob("*.png")}
    assert sorted(pngs) == [f"speed_{b}.png" for b in sorted(speed_tables.CHARTED)]
    assert all(b.startswith(b"\x89PNG") for b in pngs.values())
    for f in img.glob("*.png"):
        f.unlink()
    assert subprocess.run(cmd, capture_output=True).returncode == 0
    assert {f.name: f.read_bytes() for f in img.glob("*.png")} == pngs


@needs_sox
def test_a_plan_of_benchmarks_runs_without_prerequisites(tmp_path, capsys):
    """A real bench/feature_speed.py, small: stored with its JSON and printed tables, tabled."""
    plan_file = tmp_path / "speed.toml"
    plan_file.write_text('task = "speed"\n[[bench]]\nbench = "feature_speed"\n'
                         'args = ["--num-synth", "2", "--repeat", "1"]\n')
    plan = load_plan(plan_file)
    assert plan.runs == () and plan.size == "full"
    store_root = tmp_path / "repo" / "bench" / "results"
    opts = CampaignOptions(work=tmp_path / "work", store=store_root, repo=ROOT, commit=False)
    assert run_campaign(get_task("speed"), plan, opts, speed_tables.write_speed_tables) == 0
    out = capsys.readouterr().out
    assert "1 benchmarks in" in out and "prerequisites" not in out
    assert not (opts.work / "exp").exists()
    rec = next(Store(store_root, "speed").benches())
    assert rec.result["files"] == ["feature_speed.json", "feature_speed.md"]
    data = json.loads(rec.text("feature_speed.json"))
    assert data["wavs"] == 2 and [r["nj"] for r in data["mfcc"]] == [1, 2]
    # what the script printed is what its report renders from the JSON it wrote
    assert feature_speed.report(data) in rec.text("feature_speed.md")
    assert feature_speed.report(data) in (tmp_path / "repo" / "bench" / "RESULTS.md").read_text()


def test_output_options_are_the_campaign_s(tmp_path):
    p = tmp_path / "p.toml"
    p.write_text('task = "speed"\n[[bench]]\nbench = "train_throughput"\n'
                 'args = ["--json", "x.json"]\n')
    with pytest.raises(PlanError, match="p.toml: bench 1: args: --json is the campaign's"):
        load_plan(p)


def test_the_speed_plan_checks_and_the_committed_results_are_its_store_s():
    plan = load_plan(ROOT / "bench" / "plans" / "speed.toml")
    assert plan.runs == () and {b.bench for b in plan.benches} >= set(speed_tables.CHARTED)
    store = Store(ROOT / "bench" / "results", "speed")
    if not list(store.benches()):
        pytest.skip("no speed benchmark is stored yet")
    assert speed_tables.render(store) == (ROOT / "bench" / "RESULTS.md").read_text(), \
        "bench/RESULTS.md is stale: run bench/campaign.py --plan bench/plans/speed.toml " \
        "--tables-only"


def test_compressed_mixing_rows_render_the_load_they_were_measured_at(monkeypatch):
    """A stored all-reduce run with --compression renders the same bytes on any machine at any
    load (--tables-only): the load average is the one each row recorded."""
    from bench import allreduce
    rows = [{"kind": "compression", "bytes": 4 << 20, "ranks": 2, "compression": c,
             "reps": 3, "payload": p, "sent": s, "time": t, "load": load}
            for c, p, s, t, load in (("none", 4 << 20, 4 << 20, 0.004, 1.5),
                                     ("1bit", 131080, 131080, 0.002, 2.2))]
    texts = []
    for now in (0.1, 30.0):
        monkeypatch.setattr(allreduce.os, "getloadavg", lambda now=now: (now, now, now))
        texts.append("\n".join(allreduce.compression_report(rows)))
    assert texts[0] == texts[1]
    assert "after each row: 1.5 to 2.2" in texts[0]
    assert "| 2 | 4 MiB | 1bit | 131 KB | 131 KB | 32.0 (wire 32.0) | 2 |" in texts[0]


def test_one_message_size_gets_no_alpha_beta_fit():
    """A run at one message size (the compressed-mixing entry) prints its times and no fit:
    a line through one point would read alpha 0 and n/a."""
    from bench import allreduce
    rows = [{"bytes": 4 << 20, "ranks": n, "reps": 3, "mpi": 0.004 * n, "memcpy": 0.001,
             "sendrecv": 0.002} for n in (2, 4)]
    text = allreduce.report(rows, ["mpi"], [2, 4], cores=2)
    assert "One message size: no alpha-beta fit." in text and "alpha-beta fits" not in text
    assert "| 4 MiB | 8 | 1 | 2 |" in text
