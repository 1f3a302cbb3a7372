"""The benchmark charts (bench/experiments/plot.py, bench/allreduce.py's plot) with matplotlib,
and their absence without it."""
import sys

import pytest
from helpers import allreduce_rows

from bench import allreduce
from bench.experiments.plot import PALETTE, Series, line_chart, new_figure


def _with_quartiles(rows):
    for r in rows:
        r["quartiles"] = {k: [0.8 * r[k], 1.3 * r[k]] for k in r
                          if k not in ("bytes", "ranks", "reps")}
    return rows


def _image(path):
    image = pytest.importorskip("matplotlib.image")
    return image.imread(str(path))


def test_allreduce_plot_is_log_log_with_error_bars(tmp_path):
    pytest.importorskip("matplotlib")
    rows = _with_quartiles(allreduce_rows(5e-6, 1 / 3e9, ranks=(2, 4)))
    path = tmp_path / "allreduce.png"
    allreduce.plot(rows, ["ring", "tree", "recursive-doubling", "mpi"], [2, 4], path)
    img = _image(path)
    assert img.shape[1] > img.shape[0] > 300           # two panels side by side
    # the panels are drawn from the rows: without quartiles the picture differs (no bars)
    bare = tmp_path / "bare.png"
    for r in rows:
        del r["quartiles"]
    allreduce.plot(rows, ["ring", "tree", "recursive-doubling", "mpi"], [2, 4], bare)
    assert bare.read_bytes() != path.read_bytes()


def test_line_chart_log2_axes(tmp_path):
    pytest.importorskip("matplotlib")
    path = tmp_path / "speedup.png"
    line_chart(path, [Series("linear", [1, 2, 4, 8], [1, 2, 4, 8], "0.7", "dashed"),
                      Series("measured", [1, 2, 4, 8], [1, 1.9, 3.5, None], PALETTE[0],
                             yerr=[(0.1, 0.1)] * 4),
                      Series("reported", [4, 8], [3.8, 7.1], PALETTE[1], "points")],
               "speedup", "workers", "speedup (x)", xlog2=True, ymax=8.5, ylog2=True)
    assert _image(path).shape[0] > 300


def test_nothing_drawn_without_matplotlib(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)   # import now raises ImportError
    path = tmp_path / "x.png"
    assert new_figure(path) is None
    line_chart(path, [Series("a", [1, 2], [1, 2])], "t", "x", "y")
    allreduce.plot(allreduce_rows(5e-6, 1 / 3e9, ranks=(2,)), ["ring"], [2], path)
    assert not path.exists()
    err = capsys.readouterr().err
    assert err.count("matplotlib is not installed") == 3 and f"{path} not drawn" in err
