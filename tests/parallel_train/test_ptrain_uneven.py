"""bin/nnet-train-mpi.py on deliberately uneven shards (docs/parallel.md "Uneven data"): the
ranks agree on the smallest shard's count of whole minibatches, each trains exactly that many
(the result file's frames say so), every mixing (model averaging by all-reduce, butterfly, ring
and hierarchical mixing, BMUF, compressed updates) ends with one model on every rank, and a
rank with less than one minibatch, or no usable frame at all, ends every rank at once with one
error line and no model written (no rank waits at a mix, none divides by zero)."""
import json
import re

import numpy as np
import pytest
from helpers import (memory_lstm, memory_utts, mpi_net, mpi_utts, run_mpi, write_data,
                     write_targets)

from nnetmix.parallel import partition_utterances

MB = 16
OPTS = [f"--minibatch-size={MB}", "--randomizer-size=64", "--learn-rate=0.02",
        "--momentum=0.5", "--average-every=3",
        "--max-dropped-fraction=1"]  # the short shards are made by dropping targets
#: each (ranks, mixing options) once; 3 ranks is not a power of two (no butterfly there)
MIXINGS = [(2, ["--mixing=allreduce"]), (2, ["--mixing=butterfly"]),
           (3, ["--mixing=ring"]), (3, ["--bmuf=true", "--mix-compression=1bit"]),
           (3, ["--mixing=hierarchical"]), (4, ["--bmuf=true"]),
           (4, ["--mixing=butterfly"]), (4, ["--mix-compression=fp16"]),
           (2, ["--bmuf=true", "--mixing=hierarchical"])]


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    d = tmp_path_factory.mktemp("puneven")
    rng = np.random.default_rng(11)
    utts = mpi_utts(rng, num_utts=24)
    data = write_data(d, utts)
    init = d / "init.nnet"
    mpi_net(rng).write(str(init))
    return d, utts, data, init


def _shards(utts, n):
    """Each rank's utterances of epoch 0 (the tool's partition: seed 777)."""
    part = partition_utterances({k: f.shape[0] for k, f, _ in utts}, n, 0, 777)
    return [list(p) for p in part.parts]


def _uneven(d, utts, n, name, keep_last):
    """Targets with the last rank's utterances cut down to its ``keep_last`` longest ones (the
    others lose their targets, so that rank's usable frames are far fewer); returns the
    targets rspecifier and the last rank's usable frames."""
    frames = {k: f.shape[0] for k, f, _ in utts}
    last = sorted(_shards(utts, n)[-1], key=lambda k: -frames[k])
    drop = tuple(last[keep_last:])
    return (write_targets(d / f"{name}.post.ark", utts, drop=drop),
            sum(frames[k] for k in last[:keep_last]))


def _run(d, n, data, targets, init, name, extra):
    out, result = d / f"{name}.nnet", d / f"{name}.json"
    p, _ = run_mpi(n, [*OPTS, *extra, f"--utt2num-frames={data['u2nf']}",
                       f"--rank-log={d}/{name}.rank%d.log", f"--result-file={result}",
                       data["feats"], targets, str(init), str(out)], timeout=240)
    logs = [(d / f"{name}.rank{r}.log").read_text() for r in range(n)]
    return p, out, result, logs


@pytest.mark.parametrize("n, extra", MIXINGS,
                         ids=[f"{n}-{'_'.join(e)}" for n, e in MIXINGS])
def test_far_fewer_frames_on_one_rank(task, n, extra):
    """One rank holds one utterance (a few minibatches) and the others several times more:
    every rank trains the agreed count, the last partial block or mixing period is mixed, and
    the tool's final-model check (the same model on every rank, by digest) passes."""
    d, utts, data, init = task
    name = f"few{n}{'_'.join(e.strip('-').replace('=', '') for e in extra)}"
    targets, usable = _uneven(d, utts, n, name, 1)
    agreed = usable // MB
    assert agreed >= 1
    p, out, result, logs = _run(d, n, data, targets, init, name, extra)
    assert p.returncode == 0, p.stderr
    assert out.exists()
    for r, text in enumerate(logs):
        m = re.search(r"rank %d: (\d+) minibatches agreed \((\d+) local\)" % r, text)
        assert m and int(m.group(1)) == agreed, text
        assert int(m.group(2)) >= agreed
    assert int(re.search(r"rank %d: \d+ minibatches agreed \((\d+) local\)" % (n - 1),
                         logs[-1]).group(1)) == agreed  # the short rank sets the count
    res = json.loads(result.read_text())
    # every rank trained exactly the agreed minibatches, no more (the rest is dropped)
    assert res["frames"] == n * agreed * MB and res["minibatches"] == agreed
    assert "the final model" not in p.stderr


@pytest.mark.parametrize("n, extra, keep", [(2, ["--bmuf=true"], 0), (3, [], 0),
                                            (4, ["--mixing=ring"], 0),
                                            (3, ["--bmuf=true", "--mix-compression=1bit"], -1),
                                            (4, ["--mixing=butterfly"], -1)])
def test_a_rank_without_one_minibatch_ends_every_rank(task, n, extra, keep):
    """No usable frame on a rank (keep 0: every target of its shard missing), or fewer than one
    minibatch (keep -1: its shortest utterance only, with minibatches longer than it): every
    rank leaves with the one error line (the agreement is a collective before any mix, so none
    waits), nothing is written."""
    d, utts, data, init = task
    name = f"short{n}{keep}{'_'.join(e.strip('-').replace('=', '') for e in extra)}"
    if keep == 0:
        targets, usable = _uneven(d, utts, n, name, 0)
        mb = MB
    else:
        frames = {k: f.shape[0] for k, f, _ in utts}
        last = sorted(_shards(utts, n)[-1], key=lambda k: frames[k])
        targets = write_targets(d / f"{name}.post.ark", utts, drop=tuple(last[1:]))
        usable = frames[last[0]]
        mb = usable + 1
    p, out, result, logs = _run(d, n, data, targets, init, name,
                                [*extra, f"--minibatch-size={mb}", f"--randomizer-size={4 * mb}"])
    assert p.returncode != 0
    errors = [ln for ln in p.stderr.splitlines() if ln.startswith("ERROR")]
    assert errors, p.stderr
    assert f"fewer usable frames than one minibatch ({mb}) on some rank" in errors[0]
    assert f"rank {n - 1} has {usable}" in p.stderr
    assert "Traceback" not in p.stderr
    assert not out.exists() and not result.exists()


def test_more_ranks_than_utterances_refused_on_every_rank(task):
    """Every rank needs a shard: 3 utterances at 4 ranks end every rank with the partition's
    one line (training and cross-validation alike), before any model is read or written."""
    d, utts, _, init = task
    few = write_data(d, utts[:3], "three")
    for name, extra in [("three_tr", []), ("three_cv", ["--cross-validate=true"])]:
        out = d / f"{name}.nnet"
        p, _ = run_mpi(4, [*OPTS, *extra, f"--utt2num-frames={few['u2nf']}", few["feats"],
                           few["targets"], str(init)] + ([] if extra else [str(out)]),
                       timeout=240)
        assert p.returncode != 0
        errors = [ln for ln in p.stderr.splitlines() if ln.startswith("ERROR")]
        assert errors and "partition: 3 utterances for 4 ranks (every rank needs data: use " \
            "fewer ranks)" in errors[0], p.stderr
        assert "Traceback" not in p.stderr and not out.exists()


@pytest.mark.slow
def test_recurrent_network_steps_on_uneven_shards(tmp_path):
    """An LSTM in multi-stream steps, BMUF at 3 ranks, one rank left with its longest
    utterance: the ranks agree on that rank's step count (its stream source's), train exactly
    that many and end with one model."""
    rng = np.random.default_rng(2)
    utts = memory_utts(rng, 30)
    data = write_data(tmp_path, utts)
    init = tmp_path / "lstm.init"
    memory_lstm().write(str(init))
    targets, _ = _uneven(tmp_path, utts, 3, "lstm", 1)
    p, out, result, logs = _run(tmp_path, 3, data, targets, init, "lstm",
                                ["--bmuf=true", "--batch-size=10", "--num-streams=4",
                                 "--learn-rate=0.01"])
    assert p.returncode == 0, p.stderr
    counts = [re.search(r"rank %d: (\d+) minibatches agreed \((\d+) local\)" % r, text)
              for r, text in enumerate(logs)]
    agreed = {int(m.group(1)) for m in counts}
    local = [int(m.group(2)) for m in counts]
    assert agreed == {local[-1]} and local[-1] >= 1 and min(local[:-1]) > local[-1]
    assert json.loads(result.read_text())["minibatches"] == local[-1] and out.exists()
