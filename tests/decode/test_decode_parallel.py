"""Decoding in threads (gmm-latgen-faster-parallel, latgen-faster-mapped-parallel): archives
byte-identical to one thread's, written in input order with failures in place; the kernels the
threads run release the GIL; the TaskSequencer's ordering."""
import kaldi_hmm_gmm  # noqa: F401,I001 -- before kaldifst
import threading
import time

import numpy as np
import pytest

from nnetmix.decode import faster, gmmframes
from nnetmix.decode.decoder import read_decoding_graph
from nnetmix.decode.fstarrays import graph_arrays
from nnetmix.decode.sequencer import TaskSequencerConfig, run_in_order
from nnetmix.errors import UsageError
from nnetmix.kaldi import TableWriter

from helpers import FIXTURES, load_bin, yesno_items

NUM_UTTS = 9
BAD = 4      # this utterance gets a NaN feature: it fails, in its place


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    """feats.ark (utterance BAD has a NaN) and loglikes.ark (the GMM's) of yesno utterances."""
    if not FIXTURES.is_dir():
        pytest.skip(f"{FIXTURES} not present (a user's own clone)")
    d = tmp_path_factory.mktemp("par")
    _tm, am, items = yesno_items(FIXTURES, NUM_UTTS, noise=1.5)
    with TableWriter(f"ark:{d}/feats.ark") as fw, TableWriter(f"ark:{d}/loglikes.ark") as lw:
        for i, (k, f) in enumerate(items):
            lw[k] = am.log_likelihoods(f)
            if i == BAD:
                f = f.copy()
                f[1, 0] = np.nan
            fw[k] = f
    return d, [k for k, _f in items]


def _run(tool, opts, inputs, out, capsys):
    y = FIXTURES / "yesno"
    rc = load_bin(tool).main(opts + [str(y / "40.mdl"), str(y / "HCLG.fst"), inputs,
                                     f"ark:{out}.lat", f"ark:{out}.words", f"ark:{out}.ali"])
    return rc, capsys.readouterr().err


@pytest.mark.parametrize("decoder,gmm_opts", [("faster", ["--gmm-on-demand-pdfs=0"]),
                                              ("faster", ["--gmm-on-demand-pdfs=-1"]),
                                              ("simple", [])])
def test_gmm_latgen_parallel_archives_equal_one_threads(tables, tmp_path, capsys, decoder,
                                                        gmm_opts):
    d, keys = tables
    opts = ["--beam=13", "--lattice-beam=6", "--acoustic-scale=0.083333", "--allow-partial=true",
            f"--decoder={decoder}"] + gmm_opts
    rc, err1 = _run("gmm-latgen-faster.py", opts, f"ark:{d}/feats.ark", tmp_path / "one", capsys)
    assert rc == 0 and f"Done {NUM_UTTS - 1} utterances, failed for 1" in err1
    for threads, total in ((2, 0), (3, 1)):     # total 1 < threads: the window is num_threads
        out = tmp_path / f"t{threads}"
        rc, err = _run("gmm-latgen-faster-parallel.py", opts + [
            f"--num-threads={threads}", f"--num-threads-total={total}"],
            f"ark:{d}/feats.ark", out, capsys)
        assert rc == 0
        for ext in ("lat", "words", "ali"):
            assert (out.parent / f"{out.name}.{ext}").read_bytes() == \
                (tmp_path / f"one.{ext}").read_bytes(), ext
        assert f"Decoded with {threads} threads." in err
        assert "real-time factor per thread assuming 100 frames/sec" in err
        assert f"Done {NUM_UTTS - 1} utterances, failed for 1" in err
        # the per-utterance lines in input order, the failed utterance named
        logged = [ln.split("utterance ")[1].split()[0] for ln in err.splitlines()
                  if "Log-like per frame for utterance" in ln]
        assert logged == [k for i, k in enumerate(keys) if i != BAD]
        assert f"utterance {keys[BAD]}" in err and "not all finite" in err


def test_latgen_mapped_parallel_archives_equal_one_threads(tables, tmp_path, capsys):
    d, _keys = tables
    opts = ["--beam=13", "--lattice-beam=6", "--acoustic-scale=0.083333", "--decoder=faster"]
    assert _run("latgen-faster-mapped.py", opts, f"ark:{d}/loglikes.ark", tmp_path / "one",
                capsys)[0] == 0
    rc, err = _run("latgen-faster-mapped-parallel.py", opts + ["--num-threads=2"],
                   f"ark:{d}/loglikes.ark", tmp_path / "two", capsys)
    assert rc == 0 and "Decoded with 2 threads." in err
    for ext in ("lat", "words", "ali"):
        assert (tmp_path / f"two.{ext}").read_bytes() == (tmp_path / f"one.{ext}").read_bytes()
    rc, err = _run("latgen-faster-mapped-parallel.py", ["--num-threads=0"],
                   f"ark:{d}/loglikes.ark", tmp_path / "zero", capsys)
    assert rc != 0 and "--num-threads=0" in err


def test_the_threads_kernels_release_the_gil():
    """Numba runs a kernel without the GIL only when it is compiled nogil."""
    for kernel in (faster._search, faster._raw_lattice, faster._trace_backpointers,
                   faster.best_path_arcs, gmmframes.pdf_loglike_scaled):
        assert kernel.targetoptions.get("nogil") is True, kernel


def test_the_search_lets_other_threads_run(tables, monkeypatch):
    """While one thread is inside the compiled search, another thread keeps running Python: a
    kernel holding the GIL would stop it for the whole search (checked by hand with a copy of
    _search compiled without nogil: 1 tick inside against over a thousand). No timing is
    asserted, only whether the ticks fall inside the search."""
    tm, am, items = yesno_items(FIXTURES, NUM_UTTS, noise=1.5)
    graph = graph_arrays(read_decoding_graph(str(FIXTURES / "yesno" / "HCLG.fst")))
    gmm = gmmframes.OnDemandGmm(am)
    feats = np.concatenate([f for _k, f in items] * 2)
    tid2pdf = np.asarray(tm.tid2pdf, dtype=np.int64)
    opts = faster.SearchOptions(beam=13.0, lattice_beam=6.0)
    faster.lattice_search(graph, None, tid2pdf, opts, gmm=(gmm, feats[:50], 0.1))  # compiled
    kernel, span = faster._search, []

    def timed(*args):
        span.append(time.perf_counter())
        out = kernel(*args)
        span.append(time.perf_counter())
        return out
    monkeypatch.setattr(faster, "_search", timed)
    t = threading.Thread(target=faster.lattice_search, args=(graph, None, tid2pdf, opts),
                         kwargs=dict(gmm=(gmm, feats, 0.1)))
    ticks = []
    t.start()
    while t.is_alive():
        ticks.append(time.perf_counter())
        time.sleep(0.001)
    t.join()
    assert len(span) == 2
    assert sum(span[0] < x < span[1] for x in ticks) >= 10


def test_run_in_order_emits_in_input_order_with_bounded_window():
    """Work that finishes in reverse order is emitted in input order, never more than the
    window in flight; an error raised by work surfaces at its turn."""
    in_flight, peak, lock = [0], [0], threading.Lock()

    def work(i):
        with lock:
            in_flight[0] += 1
            peak[0] = max(peak[0], in_flight[0])
        time.sleep(0.002 * (10 - i % 10))
        with lock:
            in_flight[0] -= 1
        return i * i

    got = []
    cfg = TaskSequencerConfig(num_threads=3, num_threads_total=4)
    run_in_order(range(20), work, lambda i, r: got.append((i, r)), cfg)
    assert got == [(i, i * i) for i in range(20)]
    assert peak[0] <= 3
    emitted = []

    def failing(i):
        if i == 5:
            raise KeyError("five")
        return i

    with pytest.raises(KeyError, match="five"):
        run_in_order(range(10), failing, lambda i, r: emitted.append(i),
                     TaskSequencerConfig(num_threads=2))
    assert emitted == [0, 1, 2, 3, 4]
    with pytest.raises(UsageError, match="num-threads"):
        run_in_order([1], work, lambda i, r: None, TaskSequencerConfig(num_threads=0))
    assert TaskSequencerConfig(2).window() == 22 and TaskSequencerConfig(2, 1).window() == 2
