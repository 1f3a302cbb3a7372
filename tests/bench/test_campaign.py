"""bench/campaign.py, the experiment driver: plan files and run ids, the results store, and whole
campaigns on a stand-in recipe whose run.sh writes what train.sh and decode.sh leave (the
driver is what is tested here; the real recipes are tested in tests/egs). With
NNETMIX_TEST_EXPERIMENTS=1 a real digits smoke campaign runs too (several minutes)."""
import dataclasses
import datetime
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from helpers import ROOT, experiments_opt_in

from bench.experiments import campaign_tables
from bench.experiments.campaign import CampaignOptions, _Run, estimate_core_seconds, expect, \
    next_fitting, parse_until, run_campaign, status
from bench.experiments.procs import alive, process_stamp
from bench.experiments import spec as spec_module
from bench.experiments.spec import PlanError, RunSpec, bench_id, load_plan, run_id
from bench.experiments.store import Store, StoreError
from bench.experiments.tasks import get_task

SCRIPT = ROOT / "bench" / "campaign.py"

FAKE_RUN_SH = """\
#!{python}
# A stand-in for egs/digits/s5/run.sh: the prerequisite stages write a corpus list and a model,
# the run stages copy what train.sh + decode.sh leave (made by tests/helpers.py write_run).
import os, shutil, sys, time
from pathlib import Path
args = sys.argv[1:]
opt = {{args[i][2:]: args[i + 1] for i in range(0, len(args) - 1, 2) if args[i].startswith("--")}}
stage, stop = int(opt.get("stage", 0)), int(opt.get("stop-stage", 100))
if os.environ.get("FAKE_TERM_SECONDS"):    # a recipe's exit traps: SIGTERM takes a while
    import signal
    def _term(signum, frame):
        with open(os.environ["FAKE_TERM_LOG"], "a") as f:
            f.write("SIGTERM\\n")
        time.sleep(float(os.environ["FAKE_TERM_SECONDS"]))
        sys.exit(143)
    signal.signal(signal.SIGTERM, _term)
if stage <= 0 <= stop:
    time.sleep(float(os.environ.get("FAKE_PREFIX_SLEEP", "0")))
    Path("data/train").mkdir(parents=True, exist_ok=True)
    Path("data/train/text").write_text("u1 one\\nu2 two\\n" + os.environ.get("FAKE_CORPUS", ""))
    Path("data/test").mkdir(parents=True, exist_ok=True)
    Path("data/test/utt2cond").write_text("t1 clean 0.0 - 0.9\\nt2 pink 6.0 - 0.9\\n")
    Path("exp/mono").mkdir(parents=True, exist_ok=True)
    Path("exp/mono/final.mdl").write_bytes(b"model")
if stage <= 8 <= stop:
    tag, n = opt["dnn-tag"], int(opt["dnn-num-workers"])
    if n == int(os.environ.get("FAKE_FAIL_WORKERS", "0")):
        print("training failed", file=sys.stderr)
        sys.exit(3)
    time.sleep(float(os.environ.get("FAKE_SLEEP", "0")))
    lr = opt["dnn-opts"].split("--learn-rate ")[1].split()[0]
    shutil.copytree(Path({templates!r}) / f"w{{n}}_{{lr}}", f"exp/dnn_rbm_w{{n}}_{{tag}}",
                    dirs_exist_ok=True)
"""


@pytest.fixture(scope="module")
def templates(tmp_path_factory):
    """The run directories the stand-in recipe's runs copy: WER 3.0 / 3.5 / 5.0% at 1 / 2 / 4
    workers; CV frame accuracy one point higher at learning rate 0.004."""
    from helpers import write_run
    t = tmp_path_factory.mktemp("templates")
    for n, wer in ((1, 3.0), (2, 3.5), (4, 5.0)):
        for lr in ("0.004", "0.008"):
            write_run(t / f"w{n}_{lr}", wer=wer, workers=n, error_seed=n,
                      cv_acc=70.0 + (1.0 if lr == "0.004" else 0.0))
    return t


PLAN = """\
task = "digits"
size = "smoke"
[defaults]
input = "mfcc"
learn_rate = 0.008
[[run]]
name = "1 worker"
workers = 1
learn_rate = [0.004, 0.008]
[[run]]
name = "MA"
workers = 2
[[run]]
name = "NBM"
workers = 4
mixing = "bmuf-nbm"
"""


def _git(repo, *args):
    return subprocess.run(["git", "-C", str(repo)] + list(args), capture_output=True, text=True,
                          check=True).stdout


@pytest.fixture
def setup(tmp_path, templates):
    """A stand-in recipe, a plan, and a store inside a git repository of its own."""
    recipe = tmp_path / "recipe"
    (recipe / "local").mkdir(parents=True)
    (recipe / "conf").mkdir()
    for f in ("cmd.sh", "path.sh"):
        (recipe / f).write_text("")
    run_sh = recipe / "run.sh"
    run_sh.write_text(FAKE_RUN_SH.format(python=sys.executable, templates=str(templates)))
    run_sh.chmod(0o755)
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    _git(repo, "config", "user.email", "t@example.com")
    _git(repo, "config", "user.name", "t")
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN)
    opts = CampaignOptions(work=tmp_path / "work", store=repo / "bench" / "results", repo=ROOT,
                           jobs=2, nj=1, commit=True, cores=2)
    return get_task("digits", str(recipe)), plan, opts, repo


def _tables(task):
    return lambda store: campaign_tables.write_tables(store, list(task.decodes))


# ---- plans and ids
def test_plan_grid_defaults_and_duplicates(tmp_path):
    p = tmp_path / "p.toml"
    p.write_text(PLAN + '[[run]]\nname = "again"\nworkers = 1\nlearn_rate = 0.008\n')
    plan = load_plan(p)
    assert [(s.workers, s.learn_rate, s.mixing) for s in plan.runs] == [
        (1, 0.004, "average"), (1, 0.008, "average"), (2, 0.008, "average"),
        (4, 0.008, "bmuf-nbm")]                       # the repeated run once, in plan order
    assert plan.runs[0].input == "mfcc" and plan.runs[0].name == "1 worker"
    assert load_plan(p, size="quick").runs[0].size == "quick"


def test_a_pid_file_names_a_live_run_only_while_its_process_is_the_same(tmp_path):
    """A pid file left by a driver killed outright names a process that ended; after a reboot
    its pid may be another process's: the stamp (boot and start time) tells them apart, so the
    run starts again instead of being left to a driver that is gone."""
    from pathlib import Path
    f = tmp_path / "run.pid"
    me = os.getpid()
    if Path("/proc/sys/kernel/random/boot_id").exists():    # Linux: a real stamp, stable
        assert ":" in process_stamp(me) and process_stamp(me) == process_stamp(me)
    stamp = process_stamp(me) or "-"
    f.write_text(f"{me} 1 {stamp}\n")
    assert alive(f)
    f.write_text(f"{me} 1 {stamp}x\n")                 # the same pid, another process
    assert not alive(f)
    f.write_text(f"{me} 1\n")                          # a file without a stamp: the pid alone
    assert alive(f)
    f.write_text(f"{me} 1 -\n")                        # written where /proc had no stamp
    assert alive(f)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    f.write_text(f"{dead.pid} 1 {stamp}\n")
    assert not alive(f)


def test_the_next_run_is_the_first_that_fits_the_cores_left(tmp_path):
    """A 16-worker run waits for both cores while a one-worker run holds one; the one-worker run
    after it starts beside, and --jobs still bounds how many run."""
    def runs(*workers):
        return [_Run(RunSpec(task="digits", size="smoke", workers=n), f"r{i}")
                for i, n in enumerate(workers)]

    def opts(jobs, cores):
        return CampaignOptions(work=tmp_path, store=tmp_path, repo=tmp_path, jobs=jobs,
                               cores=cores)
    assert next_fitting(runs(16, 1), [], opts(2, 2)) == 0           # nothing runs: the first
    assert next_fitting(runs(16, 1, 1), runs(1), opts(2, 2)) == 1   # one core left: the 1-worker
    assert next_fitting(runs(16, 4), runs(1), opts(2, 2)) is None   # nothing fits one core
    assert next_fitting(runs(1), runs(1, 1), opts(3, 2)) is None    # no core left
    assert next_fitting(runs(1), runs(1), opts(1, 2)) is None       # --jobs 1
    assert next_fitting(runs(8, 2), runs(2), opts(2, 4)) == 1       # 4 cores: 2 + 2 fit, 2 + 4 not


def test_until_starts_the_runs_that_finish_in_time_first(tmp_path):
    """With --until, the first run expected to finish by then starts ahead of earlier ones that
    would not; an unknown time counts as in time; the cores still decide what fits; when none
    would finish, plan order."""
    def runs(*walls, workers=1):
        out = [_Run(RunSpec(task="digits", size="smoke", workers=workers), f"r{i}")
               for i in range(len(walls))]
        for r, w in zip(out, walls):
            r.wall = w
        return out
    opts = CampaignOptions(work=tmp_path, store=tmp_path, repo=tmp_path, jobs=2, cores=2,
                           until=1000.0 + 3600)
    assert next_fitting(runs(7200, 3000, 600), [], opts, now=1000.0) == 1
    assert next_fitting(runs(7200, None, 600), [], opts, now=1000.0) == 1   # unknown: in time
    assert next_fitting(runs(7200, 9000), [], opts, now=1000.0) == 0        # none: plan order
    assert next_fitting(runs(7200, 3000), [], opts, now=5000.0) == 0        # past --until
    # beside a one-worker run, a 16-worker run in time does not fit one core
    assert next_fitting(runs(7200) + runs(600, workers=16) + runs(3000), runs(1), opts,
                        now=1000.0) == 2
    assert next_fitting(runs(7200, 600), [], dataclasses.replace(opts, until=None),
                        now=1000.0) == 0


def test_until_parses_a_time_of_day_or_a_date():
    now = datetime.datetime(2026, 12, 7, 23, 0).timestamp()
    assert parse_until("23:30", now) == datetime.datetime(2026, 12, 7, 23, 30).timestamp()
    assert parse_until("01:55", now) == datetime.datetime(2026, 12, 8, 1, 55).timestamp()
    assert parse_until("2026-12-09 04:00", now) == datetime.datetime(2026, 12, 9, 4).timestamp()
    assert parse_until("2026-12-09T04:00", now) == datetime.datetime(2026, 12, 9, 4).timestamp()
    for bad in ("25:00", "tomorrow", "2026-13-01 00:00"):
        with pytest.raises(ValueError, match=r"expected HH:MM or YYYY-MM-DD HH:MM"):
            parse_until(bad, now)
    p = subprocess.run([sys.executable, SCRIPT, "--plan", "x.toml", "--until", "9pm"],
                       capture_output=True, text=True)
    assert p.returncode == 2 and "argument --until: expected HH:MM" in p.stderr


@pytest.mark.parametrize("body, message", [
    ('[[run]]\nworkers = 2\nlearnrate = 0.1\n', "run 1: unknown option 'learnrate'"),
    ('[[run]]\nworkers = "two"\n', "run 1: workers = 'two' is not a int"),
    ('[[run]]\nworkers = 2\nblock_momentum = 0.9\n',
     "block_momentum / block_lr are BMUF settings, but mixing is 'average'"),
    ('[[run]]\nworkers = 1\nmixing = "bmuf-cbm"\n', "mixing 'bmuf-cbm' needs more than one"),
    ('[[run]]\nworkers = 6\nmixing = "butterfly"\n', "butterfly mixing needs a power-of-two"),
    ('[[run]]\nworkers = 2\nmixing = "allreduce"\n', "mixing 'allreduce' is not one of"),
    ('[[run]]\nworkers = 2\nlearn_rate = -0.1\n', "learn_rate must be positive"),
    ('[[run]]\nworkers = 2\nnetwork = "relu"\n', "init \"rbm\" is for the sigmoid dnn"),
    # compressed and overlapped mixing: what nnet-train-mpi.py refuses, and one worker
    ('[[run]]\nworkers = 1\nmix_compression = "1bit"\n',
     "mix_compression = '1bit' needs more than one worker"),
    ('[[run]]\nworkers = 1\noverlap_mixing = true\n',
     "overlap_mixing = true needs more than one worker"),
    ('[[run]]\nworkers = 4\nmixing = "ring"\nmix_compression = "1bit"\n',
     "mixing 'ring', mix_compression = '1bit': the training tool refuses it "
     "(--mix-compression=1bit with --mixing=ring"),
    ('[[run]]\nworkers = 4\nmixing = "butterfly"\nmix_compression = "fp16"\n',
     "(--mix-compression=fp16 with --mixing=butterfly"),
    ('[[run]]\nworkers = 4\nmixing = "butterfly"\noverlap_mixing = true\n',
     "(--overlap-mixing=true with --mixing=butterfly"),
    ('[[run]]\nworkers = 4\nmixing = "bmuf-nbm"\nmix_compression = "1bit"\n'
     'overlap_mixing = true\n', "(--overlap-mixing=true with --mix-compression=1bit"),
    ('[[run]]\nworkers = 4\nmix_compression = "2bit"\n',
     "mix_compression '2bit' is not one of none, fp16, bf16, 1bit, topk"),
    ('[[run]]\nworkers = 4\noverlap_mixing = "yes"\n', "overlap_mixing = 'yes' is not a bool"),
    # no end-of-epoch average: plain mixing on more than one worker only
    ('[[run]]\nworkers = 1\nepoch_average = false\n',
     "epoch_average = false needs more than one worker"),
    ('[[run]]\nworkers = 4\nmixing = "bmuf-cbm"\nepoch_average = false\n',
     "(--epoch-average=false with --bmuf=true"),
    ('[[run]]\nworkers = 4\nmixing = "ring"\nepoch_average = false\nmix_compression = "fp16"\n',
     "(--mix-compression=fp16 with --mixing=ring"),
])
def test_bad_plans_are_one_line_naming_the_run(tmp_path, body, message):
    p = tmp_path / "p.toml"
    p.write_text('task = "harbour"\n' + body)
    with pytest.raises(PlanError, match=r".*") as e:
        load_plan(p)
    assert str(e.value).startswith(f"{p}: run 1") and message in str(e.value)
    assert "\n" not in str(e.value)


def test_bad_plan_files(tmp_path):
    with pytest.raises(PlanError, match="no such plan file"):
        load_plan(tmp_path / "none.toml")
    (tmp_path / "a.toml").write_text("task = \n")
    with pytest.raises(PlanError, match="not a TOML file"):
        load_plan(tmp_path / "a.toml")
    (tmp_path / "b.toml").write_text('task = "digits"\nruns = []\n')
    with pytest.raises(PlanError, match="unknown top-level key 'runs'"):
        load_plan(tmp_path / "b.toml")


def test_more_workers_than_utterances_and_unknown_inputs(tmp_path):
    task = get_task("digits")
    with pytest.raises(PlanError, match="200 workers but the digits smoke training set has "
                                        "only 100 utterances"):
        task.check(RunSpec("digits", "smoke", input="mfcc", workers=200), "p.toml: run 3")
    with pytest.raises(PlanError, match="input 'fmllr': digits has mfcc"):
        task.check(RunSpec("digits", "smoke", workers=2), "p.toml: run 3")
    with pytest.raises(PlanError, match="unknown size 'huge'"):
        task.check(RunSpec("digits", "huge", input="mfcc"), "p.toml: run 3")


def test_run_id_is_the_spec_and_the_prerequisites():
    a = RunSpec("harbour", "full", workers=16, mixing="bmuf-nbm", block_momentum=0.94)
    assert run_id(a, "d1") == run_id(RunSpec(**{**a.__dict__, "name": "other label"}), "d1")
    assert run_id(a, "d1") != run_id(a, "d2")
    assert run_id(a, "d1") != run_id(RunSpec(**{**a.__dict__, "seed": 1}), "d1")
    # the id is part of the store's paths: it must not change when the code is edited
    assert run_id(a, "d1") == "dnn-w16-bmuf-nbm-85673a7aff"


def test_compressed_and_overlapped_runs_have_ids_of_their_own():
    """A field added with the behaviour before it as its default leaves the id alone; a 1bit
    or overlapped run is another run, its variant in the id's readable part."""
    a = RunSpec("harbour", "full", workers=16, mixing="bmuf-nbm", block_momentum=0.94)
    plain = RunSpec(**{**a.__dict__, "mix_compression": "none", "overlap_mixing": False})
    assert run_id(plain, "d1") == run_id(a, "d1") == "dnn-w16-bmuf-nbm-85673a7aff"
    one_bit = RunSpec(**{**a.__dict__, "mix_compression": "1bit"})
    fp16 = RunSpec(**{**a.__dict__, "mix_compression": "fp16"})
    overlap = RunSpec(**{**a.__dict__, "overlap_mixing": True})
    ids = [run_id(s, "d1") for s in (a, one_bit, fp16, overlap)]
    assert len(set(ids)) == 4 and len({i[-10:] for i in ids}) == 4
    assert ids[1].startswith("dnn-w16-bmuf-nbm-1bit-") and \
        ids[3].startswith("dnn-w16-bmuf-nbm-overlap-")
    assert one_bit.label() == "16 workers, bmuf-nbm every 10, 1bit updates, lr 0.008, seed 777"
    assert overlap.label() == "16 workers, bmuf-nbm every 10, overlapped, lr 0.008, seed 777"
    assert a.label() == "16 workers, bmuf-nbm every 10, lr 0.008, seed 777"


def test_runs_without_the_epoch_average_have_ids_of_their_own():
    """epoch_average = true is the behaviour before the field (ids kept); false is another run,
    named "noepochavg" in its id and "no epoch average" in its label."""
    ring = RunSpec("harbour", "full", workers=16, mixing="ring")
    assert run_id(RunSpec(**{**ring.__dict__, "epoch_average": True}), "d1") == run_id(ring, "d1")
    own = RunSpec(**{**ring.__dict__, "epoch_average": False})
    assert run_id(own, "d1").startswith("dnn-w16-ring-noepochavg-")
    assert run_id(own, "d1")[-10:] != run_id(ring, "d1")[-10:]
    assert own.label() == "16 workers, ring every 10, no epoch average, lr 0.008, seed 777"


def test_runs_with_the_max_change_limit_set_have_ids_of_their_own():
    """max_change = None is the tool's limit, the behaviour before the field (ids kept); 0
    (off) is another run, said in its label; it is NG-SGD's, so plain SGD refuses it."""
    ma = RunSpec("harbour", "full", workers=16)
    assert run_id(RunSpec(**{**ma.__dict__, "max_change": None}), "d1") == run_id(ma, "d1")
    off = RunSpec(**{**ma.__dict__, "max_change": 0.0})
    assert run_id(off, "d1")[-10:] != run_id(ma, "d1")[-10:]
    assert off.label() == "16 workers, average every 10, lr 0.008, no max-change, seed 777"
    assert RunSpec(**{**ma.__dict__, "max_change": 0.2}).label().endswith(
        ", max-change 0.2, seed 777")
    off.check("p.toml: run 1")
    with pytest.raises(PlanError, match=r"p.toml: run 1: max_change is NG-SGD's "
                                        r"--max-change-per-sample, but optimizer is 'sgd'"):
        RunSpec(**{**off.__dict__, "optimizer": "sgd"}).check("p.toml: run 1")
    with pytest.raises(PlanError, match=r"max_change must be 0 \(off\) or positive"):
        RunSpec(**{**ma.__dict__, "max_change": -1.0}).check("p.toml: run 1")


def test_stored_run_ids_are_recomputed_from_their_specs():
    """Every run in bench/results keeps its id: the id recomputed from the stored spec and
    prerequisites' digest is the stored one (a new RunSpec field must leave them alone)."""
    from bench.experiments.spec import spec_from_dict
    found = sorted(p for p in (ROOT / "bench" / "results").glob("*/*/result.json")
                   if not p.parent.name.startswith("bench-"))
    assert found, "bench/results holds no stored campaign run to recompute"
    for p in found:
        result = json.loads(p.read_text())
        spec = spec_from_dict(result["spec"], str(p))
        assert result["run_id"] == p.parent.name
        assert run_id(spec, result["prereqs"]) == result["run_id"], f"{p}: its id changed"
        # a run stored before mix_compression/overlap_mixing existed has neither (its id was
        # kept); one with either names it in its id
        assert not spec.mix_variant or f"-{spec.mix_variant}-" in result["run_id"]


def _train_sh_options() -> set:
    """The options steps/nnet/train.sh takes: its configuration block's variables, as
    parse_options.sh turns them into --options."""
    text = (ROOT / "steps" / "nnet" / "train.sh").read_text()
    block = text.split("# Begin configuration section.")[1].split("# End configuration")[0]
    return {"--" + m.group(1).replace("_", "-")
            for m in re.finditer(r"^([a-z_0-9]+)=", block, re.M)}


@pytest.mark.parametrize("field, value, option", [
    ("mix_compression", "1bit", ["--mix-compression", "1bit"]),
    ("mix_compression", "topk", ["--mix-compression", "topk"]),
    ("overlap_mixing", True, ["--overlap-mixing", "true"]),
    ("epoch_average", False, ["--epoch-average", "false"]),
    ("max_change", 0.0, ["--ngsgd-opts", "--max-change-per-sample=0"]),
])
def test_compression_and_overlap_reach_the_training_command_line(field, value, option):
    """The harbour recipe's DNN training gets them through --dnn-opts, as steps/nnet/train.sh
    options it has (and run.sh hands --dnn-opts to train.sh)."""
    task = get_task("harbour")
    mixing = {"mixing": "ring"} if field == "epoch_average" else {
        "mixing": "bmuf-nbm", "block_momentum": 0.94}
    spec = RunSpec("harbour", "full", workers=16, **mixing, **{field: value})
    task.check(spec, "p.toml: run 1")
    args = task.run_args(spec, run_id(spec, "d"))
    train = args[args.index("--dnn-opts") + 1].split()
    i = train.index(option[0])
    assert train[i:i + 2] == option and train.count(option[0]) == 1
    names = train[0::2]
    assert all(n.startswith("--") for n in names) and set(names) <= _train_sh_options()
    plain = task.run_args(RunSpec("harbour", "full", workers=16, mixing="bmuf-nbm",
                                  block_momentum=0.94), "x")
    assert "--mix-compression" not in plain[-1] and "--overlap-mixing" not in plain[-1]
    assert "--epoch-average" not in plain[-1] and "--ngsgd-opts" not in plain[-1]
    run_sh = (ROOT / "egs" / "harbour" / "s5" / "run.sh").read_text()
    assert any("steps/nnet/train.sh" in block and "$dnn_opts" in block
               for block in run_sh.split("\n\n"))


# ---- the store
def test_epoch_tables_keep_the_max_change_counts_and_read_older_ones(tmp_path):
    """epochs.tsv has NG-SGD's limited / all layer updates per epoch; a record stored before
    those columns reads with them empty, and a table of neither header is refused."""
    from bench.experiments.store import EPOCH_COLUMNS, EPOCH_COLUMNS_BEFORE_LIMITED
    store = Store(tmp_path, "harbour")
    spec = RunSpec("harbour", "full")
    rows = [{"epoch": 0, "cv_loss": 1.5, "cv_acc": 40.0, "verdict": "initial"},
            {"epoch": 1, "learn_rate": 0.008, "train_loss": 1.2, "train_acc": 50.0,
             "cv_loss": 1.1, "cv_acc": 55.0, "verdict": "accepted", "minibatches": 390,
             "limited": 1170, "updates": 1170}]
    path = store.write({"run_id": "r1", "spec": spec.key()}, rows, {})
    got = store.read("r1").epochs
    assert (got[1]["limited"], got[1]["updates"]) == (1170, 1170) and got[0]["limited"] is None
    lines = (path / "epochs.tsv").read_text().splitlines()
    assert lines[0].split("\t") == list(EPOCH_COLUMNS)
    old = ["\t".join(EPOCH_COLUMNS_BEFORE_LIMITED)] + [
        "\t".join(line.split("\t")[:-2]) for line in lines[1:]]
    (path / "epochs.tsv").write_text("\n".join(old) + "\n")
    got = store.read("r1").epochs
    assert got[1]["minibatches"] == 390 and got[1]["limited"] is None and "updates" in got[1]
    (path / "epochs.tsv").write_text("\n".join(["epoch\tcv_acc"] + old[1:]) + "\n")
    with pytest.raises(StoreError, match="epochs.tsv: not an epochs table"):
        store.read("r1")


def test_store_refuses_incomplete_records_and_cleans_temporaries(tmp_path):
    store = Store(tmp_path, "digits")
    spec = RunSpec("digits", "smoke", input="mfcc")
    result = {"run_id": "r1", "spec": spec.key()}
    path = store.write(result, [{"epoch": 0, "cv_loss": 1.5, "cv_acc": 40.0,
                                 "verdict": "initial"}], {"ref.decode_test.txt": b"u1 a b\n"})
    rec = store.read("r1")
    assert rec.epochs[0]["cv_acc"] == 40.0 and rec.tokens("decode_test", "ref") == [
        ("u1", ["a", "b"])]
    with pytest.raises(StoreError, match="exists already"):
        store.write(result, [], {})
    (path / "epochs.tsv").unlink()
    with pytest.raises(StoreError, match=r"r1: incomplete run record \(no epochs.tsv"):
        list(store.records())
    (tmp_path / "digits" / ".r2.tmp").mkdir()
    assert store.stale_temporaries() == [tmp_path / "digits" / ".r2.tmp"]
    # a record made on other prerequisites than the store's
    store.write({"run_id": "r3", "spec": spec.key(), "prereqs": "d-other"}, [], {})
    store.write_prereqs("smoke", "digest: d-store\n")
    with pytest.raises(StoreError, match=r"r3: made on other prerequisites \(digest d-other, "
                                         r"prereqs-smoke.md has d-store\)"):
        store.read("r3")


# ---- whole campaigns on the stand-in recipe
def test_campaign_runs_stores_commits_and_skips(setup, capsys):
    task, plan_file, opts, repo = setup
    plan = load_plan(plan_file)
    assert run_campaign(task, plan, opts, _tables(task)) == 0
    store = Store(opts.store, "digits")
    records = list(store.records())
    assert len(records) == 4
    log = _git(repo, "log", "--format=%s").splitlines()
    assert len(log) == 5 and log[-1] == "bench/results/digits: the smoke prerequisites' fingerprint"
    assert all(line.startswith("bench/results/digits: ") for line in log)
    assert _git(repo, "status", "--porcelain") == ""      # everything it wrote is committed
    r1 = next(r for r in records if r.spec.workers == 1 and r.spec.learn_rate == 0.004)
    assert r1.result["decodes"]["decode_test"]["wer"] == 3.0
    assert r1.result["kept"]["cv_acc"] == 69.0 and r1.result["epochs_rejected"] == 1
    assert r1.result["command"][0] == "./run.sh" and "--dnn-tag" in r1.result["command"]
    assert [e["epoch"] for e in r1.epochs] == [0, 1, 2, 3] and r1.epochs[1]["optimize"] > 0
    text = (store.dir / "RESULTS.md").read_text()
    # the CV-chosen learning rate, the lower end of its grid; each rate's test WER beside its
    # CV figures (the templates' 1-worker runs: 3.00%)
    # and how far it fitted the training set: the kept epoch's training accuracy, the epochs
    kept = r1.result["kept"]["epoch"]
    train = next(e["train_acc"] for e in r1.epochs if e["epoch"] == kept)
    assert re.search(r"\| 1 worker \| 1 \| - \| \*\*0\.004\*\* \(grid's end\) \| 69\.00 \| "
                     rf"[0-9.]+ \| {train:.2f} \| 3 \| 3\.00 \|", text)
    # the 2-worker run (3.50%) against one worker at 0.004 (3.00%): 2 words on 400, a tie
    assert "| MA | 2 | average | 0.008 x 2 | 777 | decode_test | 3.00 | 3.50 |" in text
    assert "| tie |" in text
    # a second start skips every stored run, commits nothing
    capsys.readouterr()
    assert run_campaign(task, plan, opts, _tables(task)) == 0
    assert "4 runs in" in capsys.readouterr().out and len(_git(repo, "log", "--oneline")
                                                          .splitlines()) == 5
    # the tables come back byte for byte from the store alone, on a copy elsewhere
    copy = opts.work.parent / "copy"
    shutil.copytree(opts.store, copy)
    (copy / "digits" / "RESULTS.md").unlink()
    campaign_tables.write_tables(Store(copy, "digits"), ["decode_test"])
    assert (copy / "digits" / "RESULTS.md").read_text() == text
    st = status(task, plan, opts)
    assert "runs: 4 done, 0 running, 0 left" in st and "CPU-hours left: none" in st
    # each run's label starts in one column, however long its name (not part of the id)
    import dataclasses
    long = dataclasses.replace(plan, runs=(dataclasses.replace(
        plan.runs[-1], name="a name longer than the column was"),) + plan.runs[:-1])
    rows = [line for line in status(task, long, opts).splitlines()
            if line.startswith("  done ")]
    starts = {line.index(spec.label()) for spec in long.runs for line in rows
              if line.endswith(spec.label())}
    assert len(rows) == 4 and len(starts) == 1
    # a driver stopped between storing a record and committing it, another in mid-write
    _git(repo, "reset", "-q", "--mixed", "HEAD~1")
    (store.dir / ".dnn-w9-average-0000000000.tmp").mkdir()
    capsys.readouterr()
    assert run_campaign(task, plan, opts, _tables(task)) == 0
    out, err = capsys.readouterr()
    assert "stored by an earlier start" in out and "half-made; removed" in err
    assert _git(repo, "status", "--porcelain") == "" and len(_git(repo, "log", "--oneline")
                                                             .splitlines()) == 5
    assert not store.stale_temporaries()


def test_the_test_set_s_conditions_are_stored_once_with_the_prerequisites(setup):
    """A task whose corpus has per-utterance test conditions: the first start copies them into
    the store beside the prerequisites' fingerprint and commits them; a later start keeps them;
    with none stored and none in the work directory, one line says which file is missing."""
    from bench.experiments.campaign import CampaignError
    task, plan_file, opts, repo = setup
    task = dataclasses.replace(task, conditions="data/test/utt2cond")
    assert run_campaign(task, load_plan(plan_file), opts, _tables(task)) == 0
    store = Store(opts.store, "digits")
    assert store.conditions("smoke") == {"t1": ["clean", "0.0", "-", "0.9"],
                                         "t2": ["pink", "6.0", "-", "0.9"]}
    log = _git(repo, "log", "--format=%s").splitlines()
    assert log.count("bench/results/digits: the smoke test set's conditions") == 1
    assert _git(repo, "status", "--porcelain") == ""
    assert run_campaign(task, load_plan(plan_file), opts, _tables(task)) == 0
    assert len(_git(repo, "log", "--format=%s").splitlines()) == len(log)
    store.conditions_path("smoke").unlink()
    (opts.work / "data" / "test" / "utt2cond").unlink()
    with pytest.raises(CampaignError, match=r"data/test/utt2cond: no such file \(the test "
                                            r"set's conditions"):
        run_campaign(task, load_plan(plan_file), opts, _tables(task))


def test_compressed_and_overlapped_runs_go_through_the_campaign(setup):
    """1bit and overlapped BMUF-NBM are runs of their own: stored under their own ids, their
    options in the stored run.sh command, their names and mixing in the tables."""
    task, plan_file, opts, repo = setup
    plan_file.write_text('task = "digits"\nsize = "smoke"\n[defaults]\ninput = "mfcc"\n'
                         'learn_rate = 0.008\nworkers = 2\nmixing = "bmuf-nbm"\n'
                         '[[run]]\nname = "NBM"\n'
                         '[[run]]\nname = "NBM 1bit"\nmix_compression = "1bit"\n'
                         '[[run]]\nname = "NBM overlap"\noverlap_mixing = true\n')
    assert run_campaign(task, load_plan(plan_file), opts, _tables(task)) == 0
    recs = {r.spec.name: r for r in Store(opts.store, "digits").records()}
    assert sorted(recs) == ["NBM", "NBM 1bit", "NBM overlap"]
    assert recs["NBM 1bit"].run_id.startswith("dnn-w2-bmuf-nbm-1bit-")
    assert recs["NBM overlap"].run_id.startswith("dnn-w2-bmuf-nbm-overlap-")
    dnn_opts = {name: r.result["command"][r.result["command"].index("--dnn-opts") + 1]
                for name, r in recs.items()}
    assert "--mix-compression 1bit" in dnn_opts["NBM 1bit"]
    assert "--overlap-mixing true" in dnn_opts["NBM overlap"]
    assert "--mix-compression" not in dnn_opts["NBM"] + dnn_opts["NBM overlap"]
    assert "--overlap-mixing" not in dnn_opts["NBM"] + dnn_opts["NBM 1bit"]
    text = (opts.store / "digits" / "RESULTS.md").read_text()
    assert "| NBM 1bit | 2 | bmuf-nbm (eta 1-1/N), 1bit updates |" in text
    assert "| NBM overlap | 2 | bmuf-nbm (eta 1-1/N), overlapped |" in text
    assert "| NBM | 2 | bmuf-nbm (eta 1-1/N) |" in text


def test_failed_run_is_named_and_the_others_go_on(setup, monkeypatch, capsys):
    task, plan_file, opts, repo = setup
    monkeypatch.setenv("FAKE_FAIL_WORKERS", "2")
    assert run_campaign(task, load_plan(plan_file), opts, _tables(task)) == 1
    out = capsys.readouterr().out
    assert "failed after" in out and "(exit 3), log is in" in out
    assert len(list(Store(opts.store, "digits").records())) == 3
    st = status(task, load_plan(plan_file), opts)
    assert "runs: 3 done, 0 running, 1 left" in st and "CPU-hours left: about" in st
    cpu, wall = re.search(r"CPU-hours left: about ([0-9.]+) .*: about ([0-9.]+) hours of this "
                          rf"machine's {opts.cores} cores", st).groups()
    assert float(wall) == pytest.approx(float(cpu) / opts.cores, abs=0.06)
    # a run whose directory holds finished epochs says how many it resumes after
    rid = re.search(r"  left    (\S+) ", st).group(1)
    marks = opts.work / "exp" / f"dnn_rbm_w2_{rid}"
    marks.mkdir(parents=True)
    for i in (1, 2, 3):
        (marks / f".done_iter{i:02d}").touch()
    hours = re.search(rf"  left    {rid} .* \(about ([0-9.]+) h\)\n", st).group(1)
    st = status(task, load_plan(plan_file), opts)
    resumed = re.search(rf"  left    {rid} .* \(3 epochs done, about ([0-9.]+) h\)\n", st)
    assert resumed and float(resumed.group(1)) <= float(hours)
    # a plan that holds none of the stored runs (a grid extended past them) still measures on them
    only = plan_file.with_name("only.toml")
    only.write_text('task = "digits"\nsize = "smoke"\n[defaults]\ninput = "mfcc"\n'
                    '[[run]]\nworkers = 2\nlearn_rate = 0.008\n')
    st = status(task, load_plan(only), opts)
    assert "runs: 0 done, 0 running, 1 left" in st and "3 finished runs measured" in st
    # --until: the run left, expected to take longer than the time left, still starts (plan
    # order when none would finish in time: its directory may survive)
    opts.until = time.time() + 1.0
    monkeypatch.delenv("FAKE_FAIL_WORKERS")
    capsys.readouterr()
    assert run_campaign(task, load_plan(plan_file), opts, _tables(task)) == 0
    assert "until " in capsys.readouterr().out


def test_other_prerequisites_stop_the_campaign(setup, monkeypatch, capsys):
    task, plan_file, opts, repo = setup
    plan = load_plan(plan_file)
    assert run_campaign(task, plan, opts, _tables(task)) == 0
    shutil.rmtree(opts.work)                    # a fresh machine that builds other files
    monkeypatch.setenv("FAKE_CORPUS", "u3 three\n")
    p = subprocess.run([sys.executable, SCRIPT, "--plan", plan_file, "--recipe", opts.work.parent
                        / "recipe", "--work", opts.work, "--store", opts.store],
                       capture_output=True, text=True)
    assert p.returncode == 1
    lines = p.stderr.strip().splitlines()
    assert "are not those of" in lines[-1] and "never mixed" in lines[-1]
    assert len(list(Store(opts.store, "digits").records())) == 4     # the store is untouched


def test_interrupted_driver_resumes_and_commits_what_it_stored(setup, monkeypatch):
    task, plan_file, opts, repo = setup
    monkeypatch.setenv("FAKE_SLEEP", "5")
    term_log = opts.work.parent / "terms.log"
    monkeypatch.setenv("FAKE_TERM_SECONDS", "2")
    monkeypatch.setenv("FAKE_TERM_LOG", str(term_log))
    cmd = [sys.executable, SCRIPT, "--plan", plan_file, "--recipe", opts.work.parent / "recipe",
           "--work", opts.work, "--store", opts.store, "--jobs", "1"]
    p = subprocess.Popen([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    deadline = time.time() + 120
    while not list((opts.work / "runs").glob("*.pid")) and time.time() < deadline:
        time.sleep(0.2)
    # two SIGTERMs while the run's exit traps take their time: the run gets one, the driver
    # waits for it and ends (a second wait from a nested handler once hung on Popen's lock)
    time.sleep(0.5)
    p.terminate()
    time.sleep(0.3)
    p.terminate()
    out, err = p.communicate(timeout=60)
    assert p.returncode == 128 + 15 and "left to resume" in out, out + err
    assert not list((opts.work / "runs").glob("*.pid"))
    assert term_log.read_text() == "SIGTERM\n"
    # an earlier driver stored a record but was stopped before its commit
    monkeypatch.setenv("FAKE_SLEEP", "0")
    monkeypatch.delenv("FAKE_TERM_SECONDS")
    assert run_campaign(task, load_plan(plan_file), opts, _tables(task)) == 0
    assert _git(repo, "status", "--porcelain") == ""
    assert len(list(Store(opts.store, "digits").records())) == 4


# ---- benchmarks ([[bench]])
SCALING_TEXT = """\
# network 440-256-256-500, minibatch 256, allreduce mixing (mpi all-reduce) every 10 minibatches, \
10 timed minibatches per rank, 1 thread per rank, 2 CPUs, backend cpu
ranks   frames/s  speedup  optimize s  aggregate s   wall s  mixes  buffers  load average \
(1/5/15 min) before -> after
    1     5346.0     1.00        4.79        0.000     4.79      2     host  1.0 1.0 1.0 -> 1.0 1.0 1.0
    2    10290.3     1.92        4.81        0.147     4.98      2     host  1.0 1.0 1.0 -> 1.0 1.0 1.0
"""

FAKE_BENCH = """\
#!{python}
# A stand-in for bench/allreduce.py (rows into --out-dir) and bench/scaling.py (stdout).
import sys
from pathlib import Path
args = sys.argv[1:]
if "--fail" in args:
    sys.exit(2)
if "--out-dir" in args:
    Path(args[args.index("--out-dir") + 1], "allreduce.json").write_text({rows!r})
else:
    sys.stdout.write({scaling!r})
"""

BENCH_PLAN = """
[[bench]]
name = "all-reduce"
bench = "allreduce"
args = ["--ranks", "2"]
[[bench]]
bench = "scaling"
args = ["--quick"]
"""


def test_bench_entries_in_plans(tmp_path):
    p = tmp_path / "p.toml"
    p.write_text('task = "digits"\nsize = "smoke"\n' + BENCH_PLAN + BENCH_PLAN)
    plan = load_plan(p)
    assert plan.runs == () and [b.bench for b in plan.benches] == ["allreduce", "scaling"]
    assert plan.benches[0].name == "all-reduce" and plan.benches[0].args == ("--ranks", "2")
    # the id is the task, script and options (not the label), pinned: stored ids never change
    assert bench_id(plan.benches[0]) == "bench-allreduce-" + __import__("hashlib").sha1(
        b'{"args": ["--ranks", "2"], "bench": "allreduce", "task": "digits"}').hexdigest()[:10]
    # a digits plan includes the benchmarks at its size's options
    from bench.experiments import plan as digits_plan
    p.write_text('task = "digits"\nsize = "smoke"\ninclude = ["seed004", "scaling"]\n')
    benches = load_plan(p).benches
    assert [(b.bench, b.args) for b in benches] == [
        ("allreduce", digits_plan.SIZES["smoke"].allreduce_args),
        ("scaling", digits_plan.SIZES["smoke"].scaling_args)]
    for body, message in (('bench = "fft"', "bench = 'fft' is not one of allreduce, scaling"),
                          ('bench = "allreduce"\nargs = [2]', "args must be a list of strings"),
                          ('bench = "allreduce"\nargs = ["--out-dir", "x"]',
                           "--out-dir is the campaign's"),
                          ('bench = "scaling"\nranks = 2', "unknown option 'ranks'")):
        p.write_text('task = "digits"\n[[bench]]\n' + body + "\n")
        with pytest.raises(PlanError, match=f"p.toml: bench 1: .*{message}"):
            load_plan(p)


@pytest.fixture
def fake_benches(tmp_path, monkeypatch):
    from helpers import allreduce_rows
    script = tmp_path / "fake_bench.py"
    script.write_text(FAKE_BENCH.format(python=sys.executable, scaling=SCALING_TEXT,
                                        rows=json.dumps(allreduce_rows(5e-6, 1 / 3e9,
                                                                       ranks=(2,)))))
    script.chmod(0o755)
    for name in ("allreduce", "scaling"):
        monkeypatch.setitem(spec_module.BENCHES, name, str(script))
    return script


def test_benchmarks_run_first_and_are_stored_committed_and_tabled(setup, fake_benches, capsys):
    task, plan_file, opts, repo = setup
    plan_file.write_text(PLAN + BENCH_PLAN)
    plan = load_plan(plan_file)
    assert run_campaign(task, plan, opts, _tables(task)) == 0
    out = capsys.readouterr().out
    assert out.index("benchmark bench-allreduce-") < out.index("prerequisites:")
    store = Store(opts.store, "digits")
    benches = list(store.benches())
    assert sorted(b.spec.bench for b in benches) == ["allreduce", "scaling"]
    assert len(list(store.records())) == 4          # benchmarks are no runs
    ar = next(b for b in benches if b.spec.bench == "allreduce")
    assert ar.result["files"] == ["allreduce.json"] and ar.result["machine"]["cores"] >= 1
    assert sorted(p.name for p in ar.path.iterdir()) == ["allreduce.json", "result.json"]
    assert not (opts.work / "benches" / ar.path.name).exists()
    subjects = _git(repo, "log", "--format=%s")
    assert f"({ar.path.name})" in subjects and _git(repo, "status", "--porcelain") == ""
    text = (store.dir / "RESULTS.md").read_text()
    assert "### Seed 004: all-reduce algorithms" in text and "### Scaling model" in text
    assert f"rows with 2 ranks of {ar.path.name}/allreduce.json" in text
    assert campaign_tables.render(store, list(task.decodes)) == text
    # seed 000's scaling at 2 workers is decided from the runs' measured frames per second
    claim = next(ln for ln in text.splitlines() if "scales nearly linearly at small N" in ln)
    assert "not measured" not in claim
    st = status(task, plan, opts)
    assert "4 runs, 2 benchmarks" in st and st.count("  done    bench-") == 2
    # a second start runs nothing again
    assert run_campaign(task, plan, opts, _tables(task)) == 0
    assert "benchmark bench-" not in capsys.readouterr().out


def test_a_benchmark_waits_for_a_machine_of_its_cores(setup, fake_benches, capsys):
    """min_cores: on a smaller machine the entry is not run (its timings would measure time
    sharing), --status says it waits and for what; on a machine that has the cores
    --benches-only runs it alone (no prerequisites, no runs). The id leaves min_cores out."""
    import dataclasses
    task, plan_file, opts, repo = setup
    plan_file.write_text(PLAN + BENCH_PLAN.replace('args = ["--quick"]\n',
                                                   'args = ["--ranks", "1,2,4"]\nmin_cores = 4\n'))
    plan = load_plan(plan_file)
    waiting = plan.benches[1]
    assert waiting.min_cores == 4 and plan.benches[0].min_cores == 1
    assert bench_id(waiting) == bench_id(dataclasses.replace(waiting, min_cores=1))
    assert run_campaign(task, plan, opts, _tables(task)) == 0
    out = capsys.readouterr().out
    wid = bench_id(waiting)
    assert (f"benchmark {wid} waits for a machine of 4 or more cores (this one has 2): "
            f"{waiting.label()}") in out and waiting.label().endswith(" --ranks 1,2,4")
    store = Store(opts.store, "digits")
    assert [b.spec.bench for b in store.benches()] == ["allreduce"]
    assert len(list(store.records())) == 4                   # the runs went on
    st = status(task, plan, opts)
    assert f"  waits   {wid}" in st and st.rstrip().count("(needs 4 or more cores)") == 1
    assert "benchmarks: 1 done, 0 left, 1 waiting for a machine of more cores than this " \
           "one's 2" in st
    big = dataclasses.replace(opts, cores=4, benches_only=True)
    assert run_campaign(task, plan, big, _tables(task)) == 0
    out = capsys.readouterr().out
    assert f"benchmark {wid} done" in out and "prerequisites" not in out
    assert "2 benchmarks in " in out and "waiting" not in out
    assert sorted(b.spec.bench for b in store.benches()) == ["allreduce", "scaling"]
    assert _git(repo, "status", "--porcelain") == ""
    assert "benchmarks: 2 done, 0 left, 0 waiting" in status(task, plan, opts)
    for bad in ("0", '"4"', "2.5"):
        plan_file.write_text('task = "digits"\n[[bench]]\nbench = "scaling"\nmin_cores = '
                             + bad + "\n")
        with pytest.raises(PlanError, match="bench 1: min_cores must be a whole number of "
                                            "cores, at least 1"):
            load_plan(plan_file)


def test_a_failed_benchmark_is_named_and_stores_nothing(setup, fake_benches, capsys):
    task, plan_file, opts, repo = setup
    plan_file.write_text('task = "digits"\nsize = "smoke"\n[[bench]]\nbench = "scaling"\n'
                         'args = ["--fail"]\n')
    assert run_campaign(task, load_plan(plan_file), opts, _tables(task)) == 1
    out = capsys.readouterr().out
    assert "failed:" in out and "exited 2 (log: " in out and "prerequisites" not in out
    assert list(Store(opts.store, "digits").benches()) == []
    assert not list(opts.store.glob("digits/.*.tmp"))


def test_status_and_bad_arguments(setup):
    task, plan_file, opts, repo = setup
    p = subprocess.run([sys.executable, SCRIPT, "--plan", plan_file, "--recipe",
                        opts.work.parent / "recipe", "--work", opts.work, "--store", opts.store,
                        "--status"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "prerequisites: not built" in p.stdout and "runs: 0 done, 0 running, 4 left" in p.stdout
    assert "CPU-hours left: unknown" in p.stdout
    p = subprocess.run([sys.executable, SCRIPT, "--plan", opts.work / "none.toml"],
                       capture_output=True, text=True)
    assert p.returncode == 1 and p.stderr.strip().endswith("none.toml: no such plan file")


def test_a_driver_stopped_in_the_prerequisites_ends_their_build(setup):
    """The prerequisites' run.sh is named in prereqs.pid while it runs: --status says so, a
    second driver on the same directory stops with one line instead of building beside it, and
    SIGTERM to the driver ends the build too (no run.sh goes on unowned); the next start
    builds them."""
    task, plan_file, opts, repo = setup
    cmd = [sys.executable, SCRIPT, "--plan", plan_file, "--recipe", opts.work.parent / "recipe",
           "--work", opts.work, "--store", opts.store, "--commit", "false"]
    pid_file = opts.work / "prereqs.pid"
    first = subprocess.Popen(cmd, env={**os.environ, "FAKE_PREFIX_SLEEP": "60"},
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        for _ in range(300):
            if pid_file.exists() and pid_file.read_text().strip():
                break
            time.sleep(0.1)
        builder = int(pid_file.read_text().split()[0])
        assert alive(pid_file)
        st = subprocess.run(cmd + ["--status"], capture_output=True, text=True).stdout
        assert f"prerequisites: being built (pid {builder})" in st
        second = subprocess.run(cmd, capture_output=True, text=True)
        assert second.returncode == 1
        assert second.stderr.strip().endswith(f"the prerequisites are being built by another "
                                              f"process (pid {builder}, named in {pid_file}); "
                                              f"let it finish, or stop it first")
        first.send_signal(signal.SIGTERM)
        out, _ = first.communicate(timeout=60)
    finally:
        if first.poll() is None:
            first.kill()
    assert first.returncode == 128 + signal.SIGTERM, out
    assert "stopped by signal 15 in the prerequisites" in out
    with pytest.raises(ProcessLookupError):
        os.kill(builder, 0)
    assert not pid_file.exists() and not (opts.work / ".prefix_done").exists()
    done = subprocess.run(cmd, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert (opts.work / ".prefix_done").exists() and not pid_file.exists()


def test_estimate_from_measured_epochs():
    class R:
        def __init__(self, workers, secs, epochs, run):
            self.spec = RunSpec("digits", "smoke", input="mfcc", workers=workers)
            self.result = {"machine": {"cores": 2}, "epochs_run": epochs, "train_seconds": secs,
                           "seconds": {"run": run}}
    done = [R(1, 100.0, 4, 140.0), R(2, 60.0, 6, 100.0)]
    # per-epoch core-seconds 25 (1 core) and 20 (2 cores): median 22.5; mean 5 epochs; mean
    # rest (40 s, 40 s) x 2 cores = 80
    assert estimate_core_seconds(RunSpec("digits", "smoke", input="mfcc", workers=4), done,
                                 2) == pytest.approx(22.5 * 5 + 80)
    # a run whose directory holds 2 finished epochs has 3 left; one past the mean, none
    spec = RunSpec("digits", "smoke", input="mfcc", workers=4)
    assert estimate_core_seconds(spec, done, 2, 2) == pytest.approx(22.5 * 3 + 80)
    assert estimate_core_seconds(spec, done, 2, 7) == pytest.approx(80)
    # expect(): the seconds on this machine's cores a run can use (4 workers: both)
    r = _Run(spec, "r0")
    expect([r], done, CampaignOptions(work=Path("/nonexistent"), store=Path("."),
                                      repo=Path("."), cores=2))
    assert r.wall == pytest.approx((22.5 * 5 + 80) / 2)


def test_the_cv_set_is_set_against_the_test_set():
    """RESULTS.md says whether the CV set ranks the models as the test set does: the grids whose
    CV choice is also their lowest WER, and Spearman's correlation of CV accuracy with WER over
    the runs of each network (a better network is not a CV set that ranks well)."""
    class R:
        def __init__(self, run_id, lr, cv_acc, wp, tg, network="dnn", train=None):
            self.run_id = run_id
            self.spec = RunSpec("harbour", "full", network=network, workers=1, learn_rate=lr,
                                **({"init": "random", "optimizer": "sgd"}
                                   if network == "blstm" else {}))
            self.result = {"kept": {"cv_acc": cv_acc, "cv_loss": 1.0, "epoch": int(bool(train))},
                           "decodes": {"wp": {"wer": wp}, **({"tg": {"wer": tg}} if tg else {})}}
            self.epochs = [{"epoch": 0, "train_acc": None}, {"epoch": 1, "train_acc": train}]
    # grid a: the CV set picks 0.008 (71%), whose WER is the grid's higher; grid b: it picks
    # 0.008 (69%), the grid's lower. CV ranks 3 4 1 2, wp ranks 2 3 4 1: rho = 1 - 6 x 12 / 60;
    # the training accuracies rank as the WERs do backwards (rho -1)
    a = {0.004: R("a1", 0.004, 70.0, 3.0, 3.5, train=80.0),
         0.008: R("a2", 0.008, 71.0, 4.0, 4.5, train=78.0)}
    b = {0.004: R("b1", 0.004, 68.0, 5.0, 5.5, train=76.0),
         0.008: R("b2", 0.008, 69.0, 2.0, None, train=82.0)}
    # three BLSTMs, better on CV and test alike: pooled with the DNNs they would pull rho down
    blstm = [R(f"l{i}", 0.0001, 80.0 + i, 1.0 - 0.1 * i, 1.5 - 0.1 * i, "blstm", 90.0 + i)
             for i in range(3)]
    recs = list(a.values()) + list(b.values()) + blstm
    text = "".join(campaign_tables._cv_against_test({"a": a, "b": b}, recs, ["wp", "tg"]))
    assert ("On wp, the CV choice is also the lowest WER of its grid in 1 of 2 grids, and over "
            "the runs above of each network Spearman's rank correlation of CV frame accuracy "
            "with WER is -1.00 (blstm, 3 runs), -0.20 (dnn, 4 runs); on tg, 0 of 2 and -1.00 "
            "(blstm, 3 runs), -0.50 (dnn, 3 runs).") in text
    assert ("The kept model's training frame accuracy against WER, the same way: -1.00 (blstm, 3 "
            "runs), -1.00 (dnn, 4 runs) on wp; -1.00 (blstm, 3 runs), -1.00 (dnn, 3 runs) on tg "
            "(negative: the runs that fitted the training set further decoded better).") in text
    # b2 is not decoded on tg: grid b's choice has no WER there, and the other three runs
    # (CV 70, 71, 68; WER 3.5, 4.5, 5.5) rank 2 3 1 against 1 2 3: rho = 1 - 6 x 6 / 24 = -0.5
    same = {0.004: R("c1", 0.004, 70.0, 3.0, None), 0.008: R("c2", 0.008, 71.0, 3.0, None),
            0.016: R("c3", 0.016, 72.0, 3.0, None)}
    text = "".join(campaign_tables._cv_against_test({"c": same}, list(same.values()), ["wp"]))
    assert "in 1 of 1 grids, and over the runs above of each network Spearman's rank " \
           "correlation of CV frame accuracy with WER is undefined (dnn, 3 runs)." in text
    # no epoch kept (the initial model): no training accuracy to rank
    assert "the same way: undefined (dnn, 0 runs) on wp" in text
    # every WER the same: no ranking


def test_committed_tables_are_the_store_s():
    """bench/results/<task>/RESULTS.md is what --tables-only writes from the records beside it."""
    root = ROOT / "bench" / "results"
    tasks = [d for d in sorted(root.iterdir()) if (d / "RESULTS.md").exists()] \
        if root.exists() else []
    if not tasks:
        pytest.skip("no campaign results are stored yet")
    for d in tasks:
        decodes = list(get_task(d.name).decodes)
        assert campaign_tables.render(Store(root, d.name), decodes) == \
            (d / "RESULTS.md").read_text(), f"{d}/RESULTS.md is stale: run bench/campaign.py " \
                                            f"--tables-only"


@experiments_opt_in
def test_digits_smoke_campaign(tmp_path):
    """The real digits recipe, four runs of the digits plan at the smoke size; ring mixing
    without the end-of-epoch average keeps each worker's model beside every epoch's and the
    second epoch starts each from its own; NG-SGD's max-change limit set off reaches the tool,
    and the epochs' counts the store."""
    plan = tmp_path / "plan.toml"
    plan.write_text(textwrap.dedent("""\
        task = "digits"
        size = "smoke"
        [defaults]
        input = "mfcc"
        max_epochs = 1
        [[run]]
        workers = 1
        [[run]]
        workers = 2
        mixing = "bmuf-nbm"
        [[run]]
        workers = 2
        mixing = "ring"
        average_every = 3
        epoch_average = false
        max_epochs = 2
        [[run]]
        workers = 2
        max_change = 0.0
        """))
    store = tmp_path / "results"
    p = subprocess.run([sys.executable, SCRIPT, "--plan", plan, "--work", tmp_path / "work",
                        "--store", store, "--commit", "false"], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    records = list(Store(store, "digits").records())
    assert len(records) == 4 and all(r.result["final_md5"] for r in records)
    # NG-SGD's max-change counts reach the epochs: none limited with the limit off
    off = next(r for r in records if r.spec.max_change == 0.0)
    assert "--ngsgd-opts --max-change-per-sample=0" in off.result["command"][-1]
    counted = [e for e in off.epochs if e["epoch"] > 0]
    assert counted and all(e["limited"] == 0 and e["updates"] > 0 for e in counted)
    ring = next(r for r in records if r.spec.mixing == "ring")
    assert "--epoch-average false" in ring.result["command"][-1]
    exp = next((tmp_path / "work").glob(f"exp/*{ring.run_id}"))
    assert len(list((exp / "nnet").glob("*_iter0[12]_*.ranks.npz"))) >= 1
    assert "starts from its own model" in (exp / "log" / "iter02.tr.rank1.log").read_text()
    assert json.loads((records[0].path / "result.json").read_text())["machine"]["cores"] >= 1


def test_a_stored_run_reads_as_its_directory(templates, tmp_path):
    """The seed tables' claims see a stored run as they saw its run directory: the same WER,
    CV numbers, epochs and time split, and the same significance test."""
    from bench.experiments.collect import collect
    from bench.experiments.stored import stored_run
    from bench.experiments.verdict import wer_test
    from nnetmix.train.runlog import read_run
    store = Store(tmp_path, "digits")
    runs = []
    for n in (1, 2):
        d = templates / f"w{n}_0.008"
        (d / "stages67_seconds").write_text("60\n")
        spec = RunSpec("digits", "smoke", input="mfcc", workers=n, mixing="average")
        result, rows, texts = collect(d, ("decode_test",), {
            "run_id": f"r{n}", "spec": spec.key(), "machine": {"cpu": "x", "cores": 2},
            "seconds": {"run": 60.0}})
        store.write(result, rows, texts)
        runs.append((read_run(d), stored_run(store.read(f"r{n}"), "decode_test")))
    for direct, stored in runs:
        for f in ("workers", "epochs", "rejected", "cv_loss", "cv_acc", "wer", "wer_errors",
                  "wer_words", "train_frames", "mixes"):
            assert getattr(stored, f) == getattr(direct, f), f
        assert stored.split_per_epoch() == pytest.approx(direct.split_per_epoch())
        assert stored.ms_per_minibatch == pytest.approx(direct.ms_per_minibatch)
    assert wer_test(runs[0][1], runs[1][1]) == wer_test(runs[0][0], runs[1][0])


def test_digits_sizes_include_the_seed_groups(tmp_path):
    """The digits experiments are sizes of the campaign: bench/plans/digits.toml includes
    bench/experiments/plan.py's groups (26 distinct runs at quick size) and their benchmarks."""
    from bench.experiments import plan as digits_plan
    p = ROOT / "bench" / "plans" / "digits.toml"
    for size in ("quick", "smoke"):
        specs = load_plan(p, size=size).runs
        runs = digits_plan.runs_for(digits_plan.TRAINING_GROUPS, digits_plan.SIZES[size])
        assert sorted((s.workers, s.mixing, s.average_every, s.minibatch, s.scheduler,
                       s.optimizer, s.init) for s in specs) == sorted(
            (r.workers, digits_plan.SPEC_MIXING[r.mix], r.average_every, r.minibatch,
             r.scheduler, r.optimizer, "rbm" if r.pretrain else "random") for r in runs)
        assert all(s.max_epochs == digits_plan.SIZES[size].max_iters for s in specs)
    bad = tmp_path / "p.toml"
    bad.write_text('task = "harbour"\nsize = "full"\ninclude = ["seed000"]\n')
    with pytest.raises(PlanError, match="include is for the digits sizes"):
        load_plan(bad)
    bad.write_text('task = "digits"\nsize = "quick"\ninclude = ["seed009"]\n')
    with pytest.raises(PlanError, match="include: unknown group 'seed009'"):
        load_plan(bad)


def test_the_plans_in_the_repository_check():
    for p in sorted((ROOT / "bench" / "plans").glob("*.toml")):
        plan = load_plan(p)
        task = get_task(plan.task)
        for i, spec in enumerate(plan.runs, 1):
            task.check(spec, f"{p}: run {i}")
            task.run_args(spec, "x")


def test_cv_chosen_rate_waits_for_its_grid(setup, capsys):
    task, plan_file, opts, repo = setup
    plan_file.write_text('task = "digits"\nsize = "smoke"\n[defaults]\ninput = "mfcc"\n'
                         '[[run]]\nworkers = 1\nlearn_rate = [0.008, 0.004]\n'
                         '[[run]]\nname = "seeds"\nworkers = 1\nlearn_rate = "cv"\n'
                         'seed = [777, 1]\n')
    plan = load_plan(plan_file)
    assert [s.deferred for s in plan.runs] == [False, False, True, True]
    st = status(task, plan, opts)
    assert "runs: 0 done, 0 running, 4 left (2 of them wait for their learning-rate grid)" in st
    assert run_campaign(task, plan, opts, _tables(task)) == 0
    assert "2 to run, 2 waiting for a learning-rate grid" in capsys.readouterr().out
    records = list(Store(opts.store, "digits").records())
    # 0.004 has the better CV accuracy: seed 777 at "cv" is the grid's own run, seed 1 a new one
    assert sorted((r.spec.learn_rate, r.spec.seed) for r in records) == [
        (0.004, 1), (0.004, 777), (0.008, 777)]
    assert "runs: 3 done, 0 running, 0 left (0 of them wait" in status(task, plan, opts)
    text = (Store(opts.store, "digits").dir / "RESULTS.md").read_text()
    assert "| seeds | 1 | - | 0.004 | decode_test | 1, 777 | 3.00, 3.00 | 3.00 | 0.00 | - |" \
        in text
    bad = plan_file.with_name("bad.toml")
    bad.write_text('task = "digits"\n[defaults]\ninput = "mfcc"\n'
                   '[[run]]\nworkers = 2\nlearn_rate = "cv"\n')
    with pytest.raises(PlanError, match="no run before it in the plan has this method"):
        load_plan(bad)


def test_a_run_its_grid_let_go_starts_in_its_plan_place(setup, capsys):
    """A "cv" run resolved once its grid is stored starts before the runs after it in the plan."""
    import dataclasses
    task, plan_file, opts, repo = setup
    plan_file.write_text('task = "digits"\nsize = "smoke"\n[defaults]\ninput = "mfcc"\n'
                         '[[run]]\nname = "grid"\nworkers = 1\nlearn_rate = [0.008, 0.004]\n'
                         '[[run]]\nname = "seed 1"\nworkers = 1\nlearn_rate = "cv"\nseed = 1\n'
                         '[[run]]\nname = "after"\nworkers = 2\nlearn_rate = 0.008\n')
    opts = dataclasses.replace(opts, jobs=1)
    assert run_campaign(task, load_plan(plan_file), opts, _tables(task)) == 0
    started = re.findall(r"run \S+ \(([^)]*)\) started", capsys.readouterr().out)
    assert started == ["grid", "grid", "seed 1", "after"]


def test_an_ablation_takes_its_baseline_grids_rate(setup):
    """``cv_grid``: a run of another method at the rate the named grid chose, so that it differs
    from its baseline in one thing; its id is that of the same spec with the rate written."""
    task, plan_file, opts, repo = setup
    plan_file.write_text('task = "digits"\nsize = "smoke"\n[defaults]\ninput = "mfcc"\n'
                         '[[run]]\nname = "1 worker"\nworkers = 1\nlearn_rate = [0.008, 0.004]\n'
                         '[[run]]\nname = "mb 1024"\nworkers = 1\nminibatch = 1024\n'
                         'learn_rate = "cv"\ncv_grid = "1 worker"\n')
    plan = load_plan(plan_file)
    assert [(s.deferred, s.cv_grid) for s in plan.runs] == [
        (False, ""), (False, ""), (True, "1 worker")]
    assert "1 of them wait for their learning-rate grid" in status(task, plan, opts)
    assert run_campaign(task, plan, opts, _tables(task)) == 0
    store = Store(opts.store, "digits")
    mb = [r for r in store.records() if r.spec.minibatch == 1024]
    assert [r.spec.learn_rate for r in mb] == [0.004]       # the grid's CV choice
    written = RunSpec("digits", "smoke", input="mfcc", minibatch=1024, learn_rate=0.004)
    assert mb[0].run_id == run_id(written, store.stored_prereqs("smoke"))
    assert "cv_grid" not in mb[0].result["spec"]


@pytest.mark.parametrize("body, message", [
    ('[[run]]\nworkers = 2\ncv_grid = "MA"\n',
     "cv_grid = 'MA' names the grid a learn_rate = \"cv\" run takes its rate from, but "
     "learn_rate is 0.008"),
    ('[[run]]\nname = "MA"\nworkers = 2\nlearn_rate = [0.004, 0.008]\n[[run]]\nworkers = 1\n'
     'learn_rate = "cv"\ncv_grid = "NBM"\n',
     "run 2: learn_rate = \"cv\", but no run before it in the plan is named 'NBM'"),
    ('[[run]]\nname = "MA"\nworkers = [2, 4]\nlearn_rate = [0.004, 0.008]\n[[run]]\n'
     'workers = 1\nlearn_rate = "cv"\ncv_grid = "MA"\n',
     "run 2: cv_grid = 'MA' names runs of more than one method"),
])
def test_bad_cv_grids(tmp_path, body, message):
    p = tmp_path / "p.toml"
    p.write_text('task = "harbour"\n' + body)
    with pytest.raises(PlanError) as e:
        load_plan(p)
    assert message in str(e.value) and "\n" not in str(e.value)


@pytest.mark.skipif(not __import__("bench.experiments.plot", fromlist=["x"]).have_matplotlib(),
                    reason="matplotlib is not installed (the bench extra)")
def test_charts_are_drawn_from_the_store_byte_for_byte(setup):
    task, plan_file, opts, repo = setup
    assert run_campaign(task, load_plan(plan_file), opts, _tables(task)) == 0
    store = Store(opts.store, "digits")
    pngs = {p.name: p.read_bytes() for p in store.dir.glob("*.png")}
    assert sorted(pngs) == ["cv_epochs_smoke.png", "wer_workers_smoke.png"]
    assert "![WER (decode_test) against workers](wer_workers_smoke.png)" in \
        (store.dir / "RESULTS.md").read_text()
    for p in store.dir.glob("*.png"):
        p.unlink()
    campaign_tables.write_tables(store, ["decode_test"])
    assert {p.name: p.read_bytes() for p in store.dir.glob("*.png")} == pngs


def test_a_runs_clock_counts_every_start_of_it(tmp_path, monkeypatch):
    """A run stopped with its driver (or its machine) and resumed later is stored with the wall
    seconds of every start in its work directory, not only the last one's (a resumed run read
    21 s for two hours of training)."""
    from bench.experiments import campaign
    (tmp_path / "runs").mkdir()
    now = [1000.0]
    monkeypatch.setattr(campaign.time, "time", lambda: now[0])
    campaign._tick(tmp_path, "r", new=True)
    now[0] = 1600.0
    campaign._tick(tmp_path, "r")           # the driver's last tick before the machine stopped
    now[0] = 5000.0                          # nothing ran between the two starts
    campaign._tick(tmp_path, "r", new=True)
    now[0] = 5021.0
    assert campaign._tick(tmp_path, "r") == 621.0
    assert len((tmp_path / "runs" / "r.clock").read_text().splitlines()) == 2


def test_a_record_whose_clock_missed_starts_shows_its_epochs_hours_as_a_bound():
    cell = campaign_tables._hours_cell
    assert cell({"seconds": {"run": 7483.1}, "train_seconds": 6901.1}) == "2.08"
    assert cell({"seconds": {"run": 21.0}, "train_seconds": 3059.6}) == ">= 0.85"


def test_the_readme_summary_is_the_store_s():
    """README.md's campaign table is what --tables-only writes from bench/results/<task>/."""
    root = ROOT / "bench" / "results"
    text = (ROOT / "README.md").read_text()
    marked = [d for d in sorted(root.iterdir()) if d.is_dir()
              and campaign_tables.SUMMARY_BEGIN.format(task=d.name) in text]
    assert [d.name for d in marked] == ["harbour"]
    for d in marked:
        store = Store(root, d.name)
        assert campaign_tables.readme_summary(store) == ROOT / "README.md"
        block = campaign_tables.summary_block(store, list(get_task(d.name).decodes))
        assert block in text, "README.md's campaign table is stale: run bench/campaign.py " \
                              "--tables-only"


def test_tables_write_the_summary_into_the_readme_that_holds_its_markers(setup):
    """write_tables fills the block between the task's markers in the README two levels above
    the store, counting the claims RESULTS.md decides; a README without them is left alone."""
    task, plan_file, opts, repo = setup
    assert run_campaign(task, load_plan(plan_file), opts, _tables(task)) == 0
    store = Store(opts.store, "digits")
    readme = store.dir.resolve().parents[2] / "README.md"
    begin = campaign_tables.SUMMARY_BEGIN.format(task="digits")
    end = campaign_tables.SUMMARY_END.format(task="digits")
    readme.write_text(f"# A repository\n\nintro\n\n{begin}\nold\n{end}\n\nafter\n")
    written = campaign_tables.write_tables(store, list(task.decodes))
    assert readme in written
    text = readme.read_text()
    assert text.startswith("# A repository\n\nintro\n\n" + begin) and text.endswith(
        end + "\n\nafter\n") and "old" not in text
    claims = campaign_tables.all_claims(store, list(task.decodes))
    rows = [ln for ln in text.splitlines() if ln.startswith("| seed") or ln.startswith("| issue")]
    assert rows and sum(int(r.split("|")[2]) for r in rows) == len(claims)
    assert "(4 training runs stored)" in " ".join(text.split())
    readme.write_text("# no markers\n")
    assert readme not in campaign_tables.write_tables(store, list(task.decodes))
    assert readme.read_text() == "# no markers\n"
