"""lattice-best-path-grid.py against the three-tool pipeline it replaces in local/score.sh
(lattice-scale | lattice-add-penalty | lattice-best-path | int2sym.pl): the same bytes per
(LMWT, WIP) on decoder and random lattices, and its errors."""
import kaldi_hmm_gmm  # noqa: F401,I001 -- before kaldifst
import numpy as np
import pytest

from nnetmix.decode.bestpathgrid import ScoringGrid
from nnetmix.decode.latio import CompactLatticeWriter
from nnetmix.decode.lattice import CompactLattice, determinize_lattice_pruned
from nnetmix.errors import UsageError

from helpers import (ROOT, digits_search_lattices, digits_system, load_bin, random_mixed_lattice,
                     run_script)

LMWTS = (6, 9)
WIPS = "0.0,0.5,-1.25"


def _tie_on_float32() -> CompactLattice:
    """Two one-arc paths whose acoustic costs differ, but not once scaled by 1/7 and stored as
    float32: tied, the first arc wins (word 1); in float64 the second (word 2) would."""
    a1 = np.float32(900.0)
    a2 = a1
    while True:
        a2 = np.nextafter(a2, np.float32(0))
        if np.float32(float(a1) / 7) == np.float32(float(a2) / 7) and float(a2) / 7 < float(a1) / 7:
            break
    c = CompactLattice()
    c.add_state(), c.add_state()
    c.start = 0
    c.add_arc(0, 1, 1.5, float(a1), (1,), 1)
    c.add_arc(0, 2, 1.5, float(a2), (2,), 1)
    c.set_final(1, 0.0, 0.0)
    return c


def _special_lattices() -> list:
    empty_hyp = CompactLattice()            # a path with no word: "key" alone
    empty_hyp.add_state(), empty_hyp.add_state()
    empty_hyp.start = 0
    empty_hyp.add_arc(0, 0, 0.5, 3.0, (1, 1), 1)
    empty_hyp.set_final(1, 0.0, 1.0, (2,))
    no_final = CompactLattice()             # no successful path: no line
    no_final.add_state(), no_final.add_state()
    no_final.start = 0
    no_final.add_arc(0, 1, 0.5, 3.0, (1,), 1)
    return [("a-tie", _tie_on_float32()), ("b-empty-hyp", empty_hyp), ("c-no-final", no_final),
            ("d-no-states", CompactLattice())]


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    """Two gzipped archives (lat.1.gz, lat.2.gz) of decoder lattices of the digits graph,
    determinized random lattices (some with tied costs) and the special cases; words.txt."""
    d = tmp_path_factory.mktemp("grid")
    digits = digits_system()
    lats = [("digits%d" % i, determinize_lattice_pruned(r, 6.0))
            for i, r in enumerate(digits_search_lattices(digits, 4, 5))]
    rng = np.random.default_rng(11)
    for i in range(30):
        clat = determinize_lattice_pruned(random_mixed_lattice(rng), 8.0)
        clat.scale(acoustic_scale=float(rng.uniform(5, 15)))   # acoustic costs as large as a decoder's
        lats.append(("rand%02d" % i, clat))
    lats += _special_lattices()
    lats.sort()
    for n, part in ((1, lats[::2]), (2, lats[1::2])):
        with CompactLatticeWriter(f"ark:|gzip -c > {d}/lat.{n}.gz") as w:
            for key, clat in part:
                w.write(key, clat)
    (d / "keys").write_text("".join(f"{k}\n" for k, _ in lats))
    top = max([lab for _, c in lats for arcs in c.arcs for lab, *_ in arcs] + [1])
    (d / "words.txt").write_text("".join(f"w{i} {i}\n" for i in range(top + 1)))
    return d


def _pipeline(d, lmwt: int, wip: str, capsys) -> str:
    """What local/score.sh used to write to scoring/LMWT.WIP.tra."""
    scale, pen, bp, i2s = (load_bin(n) for n in ("lattice-scale.py", "lattice-add-penalty.py",
                                                 "lattice-best-path.py", "int2sym.py"))
    assert scale.main([f"--inv-acoustic-scale={lmwt}", f"ark:gunzip -c {d}/lat.*.gz|",
                       f"ark:{d}/s.ark"]) == 0
    assert pen.main([f"--word-ins-penalty={wip}", f"ark:{d}/s.ark", f"ark:{d}/p.ark"]) == 0
    assert bp.main([f"--word-symbol-table={d}/words.txt", f"ark:{d}/p.ark",
                    f"ark,t:{d}/int.tra"]) == 0
    capsys.readouterr()
    assert i2s.main(["-f", "2-", f"{d}/words.txt", f"{d}/int.tra"]) == 0
    return capsys.readouterr().out


def test_grid_writes_what_the_pipeline_writes(archive, tmp_path, capsys):
    grid = load_bin("lattice-best-path-grid.py")
    assert grid.main([f"--min-lmwt={LMWTS[0]}", f"--max-lmwt={LMWTS[1]}",
                      f"--word-ins-penalty={WIPS}", f"--word-symbol-table={archive}/words.txt",
                      f"ark:gunzip -c {archive}/lat.*.gz|", f"{tmp_path}/LMWT.WIP.tra"]) == 0
    err = capsys.readouterr().err
    assert "Best-path failed for key c-no-final (at 12 of 12 grid points)" in err
    assert "Best-path failed for key d-no-states" in err
    outputs = {}
    for lmwt in range(LMWTS[0], LMWTS[1] + 1):
        for wip in WIPS.split(","):
            got = (tmp_path / f"{lmwt}.{wip}.tra").read_text()
            assert got == _pipeline(archive, lmwt, wip, capsys), (lmwt, wip)
            outputs[lmwt, wip] = got
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        f"{lmwt}.{wip}.tra" for lmwt, wip in outputs)            # no temporary file left
    lines = outputs[7, "0.0"].splitlines(keepends=True)
    assert len(lines) == 4 + 30 + 2 and "b-empty-hyp\n" in lines and "a-tie w1\n" in lines
    assert not any(x.startswith(("c-no-final", "d-no-states")) for x in lines)
    assert len(set(outputs.values())) > 4    # LM weight and penalty do change best paths


def test_grid_fails_when_no_lattice_has_a_path(tmp_path, capsys):
    with CompactLatticeWriter(f"ark:{tmp_path}/lat.ark") as w:
        w.write("u1", _special_lattices()[2][1])
    (tmp_path / "words.txt").write_text("<eps> 0\nA 1\n")
    grid = load_bin("lattice-best-path-grid.py")
    assert grid.main(["--min-lmwt=7", "--max-lmwt=8", "--word-ins-penalty=0.0",
                      f"--word-symbol-table={tmp_path}/words.txt", f"ark:{tmp_path}/lat.ark",
                      f"{tmp_path}/LMWT.WIP.tra"]) == 1
    assert (tmp_path / "7.0.0.tra").read_text() == ""   # as the pipeline leaves it


@pytest.mark.parametrize("opts, pattern, message", [
    (["--word-ins-penalty=0.0,x"], "LMWT.WIP.tra",
     "--word-ins-penalty=0.0,x: 'x' is not a number (expected a comma-separated list"),
    (["--word-ins-penalty=0.5,0.5"], "LMWT.WIP.tra", "a penalty is repeated"),
    (["--word-ins-penalty=0.0,,1.0"], "LMWT.WIP.tra", "'' is not a number"),
    (["--min-lmwt=9", "--max-lmwt=8"], "LMWT.WIP.tra", "expected 1 <= min-lmwt <= max-lmwt"),
    ([], "LMWT.tra", "output pattern '{d}/LMWT.tra' has no WIP placeholder"),
    ([], "WIP.tra", "has no LMWT placeholder"),
    (["--word-symbol-table="], "LMWT.WIP.tra", "--word-symbol-table is required"),
])
def test_grid_usage_errors(tmp_path, capsys, opts, pattern, message):
    (tmp_path / "words.txt").write_text("<eps> 0\nA 1\n")
    grid = load_bin("lattice-best-path-grid.py")
    rc = grid.main([f"--word-symbol-table={tmp_path}/words.txt", *opts,
                    f"ark:{tmp_path}/missing.ark", f"{tmp_path}/{pattern}"])
    err = capsys.readouterr().err
    assert rc == 1
    errors = [x for x in err.splitlines() if x.startswith("ERROR")]
    assert len(errors) == 1 and message.format(d=tmp_path) in errors[0], err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["words.txt"]


def test_grid_input_errors_leave_no_output(archive, tmp_path, capsys):
    grid = load_bin("lattice-best-path-grid.py")
    (tmp_path / "7.0.0.tra").write_text("old\n")
    args = ["--min-lmwt=7", "--max-lmwt=7", "--word-ins-penalty=0.0"]
    assert grid.main([*args, f"--word-symbol-table={archive}/words.txt",
                      f"ark:{tmp_path}/missing.ark", f"{tmp_path}/LMWT.WIP.tra"]) == 1
    errors = [x for x in capsys.readouterr().err.splitlines() if x.startswith("ERROR")]
    assert len(errors) == 1 and "missing.ark" in errors[0]
    (tmp_path / "words.txt").write_text("<eps> 0\nw1 1\n")     # lacks the digits' words
    assert grid.main([*args, f"--word-symbol-table={tmp_path}/words.txt",
                      f"ark:gunzip -c {archive}/lat.*.gz|", f"{tmp_path}/LMWT.WIP.tra"]) == 1
    errors = [x for x in capsys.readouterr().err.splitlines() if x.startswith("ERROR")]
    assert len(errors) == 1 and f"{tmp_path}/words.txt: no symbol for word id" in errors[0]
    assert (tmp_path / "7.0.0.tra").read_text() == "old\n"     # the old file stays, whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["7.0.0.tra", "words.txt"]


def test_scoring_grid():
    g = ScoringGrid.parse(7, 9, "0.0,.5")
    assert g.points() == [(7, "0.0"), (7, ".5"), (8, "0.0"), (8, ".5"), (9, "0.0"), (9, ".5")]
    assert g.output_path("d/scoring/LMWT.WIP.tra", 8, ".5") == "d/scoring/8..5.tra"
    assert g.output_path("exp/WIP_LMWT/LMWT.WIP.tra", 7, "0.0") == "exp/WIP_LMWT/7.0.0.tra"
    with pytest.raises(UsageError, match="no LMWT placeholder in its file name"):
        g.check_pattern("exp/LMWT/WIP.tra")
    with pytest.raises(UsageError, match="'1e' is not a number"):
        ScoringGrid.parse(7, 9, "1e")


def _recipe(tmp_path, archive, lattices=("lat.1.gz", "lat.2.gz")):
    """A recipe directory as score.sh runs in: bin/, utils/, path.sh, local/score.sh linked; the
    archive's lattices in exp/decode, its words in exp/graph, references in data/test/text."""
    import shutil
    for name in ("bin", "utils"):
        (tmp_path / name).symlink_to(ROOT / name)
    (tmp_path / "path.sh").symlink_to(ROOT / "local" / "path.sh")
    (tmp_path / "local").mkdir()
    (tmp_path / "local" / "score.sh").symlink_to(ROOT / "local" / "score.sh")
    for d in ("exp/decode", "exp/graph", "data/test"):
        (tmp_path / d).mkdir(parents=True)
    for name in lattices:
        shutil.copy(archive / name, tmp_path / "exp" / "decode" / name)
    shutil.copy(archive / "words.txt", tmp_path / "exp" / "graph" / "words.txt")
    keys = sorted(line.split()[0] for line in (archive / "keys").read_text().splitlines())
    (tmp_path / "data" / "test" / "text").write_text("".join(f"{k} w1 w2\n" for k in keys))
    return tmp_path / "exp" / "decode"


def test_score_sh_writes_the_grid_and_its_wer(archive, tmp_path):
    dec = _recipe(tmp_path, archive)
    p = run_script(["local/score.sh", "--min-lmwt", str(LMWTS[0]), "--max-lmwt", str(LMWTS[1]),
                    "--word-ins-penalty", WIPS, "data/test", "exp/graph", "exp/decode"],
                   cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    grid = load_bin("lattice-best-path-grid.py")
    assert grid.main([f"--min-lmwt={LMWTS[0]}", f"--max-lmwt={LMWTS[1]}",
                      f"--word-ins-penalty={WIPS}", f"--word-symbol-table={archive}/words.txt",
                      f"ark:gunzip -c {archive}/lat.*.gz|", f"{tmp_path}/LMWT.WIP.tra"]) == 0
    for lmwt in range(LMWTS[0], LMWTS[1] + 1):
        for wip in WIPS.split(","):
            assert (dec / "scoring" / f"{lmwt}.{wip}.tra").read_bytes() == \
                (tmp_path / f"{lmwt}.{wip}.tra").read_bytes()
            assert (dec / f"wer_{lmwt}_{wip}").read_text().startswith("%WER ")
    logs = sorted(x.name for x in (dec / "scoring" / "log").glob("best_path.*.log"))
    assert logs == sorted(f"best_path.{w}.log" for w in WIPS.split(","))
    assert "local/score.sh: done, best: %WER" in p.stdout


def test_score_sh_fails_on_a_bad_lattice_archive(archive, tmp_path):
    dec = _recipe(tmp_path, archive, lattices=("lat.1.gz",))
    (dec / "lat.2.gz").write_bytes(b"not gzip")
    p = run_script(["local/score.sh", "--min-lmwt", "7", "--max-lmwt", "8", "--word-ins-penalty",
                    "0.0,1.0", "data/test", "exp/graph", "exp/decode"], cwd=tmp_path)
    assert p.returncode == 1
    assert "2 of 2 best-path jobs failed, logs in exp/decode/scoring/log/best_path.*.log" in p.stderr
    assert not list((dec / "scoring").glob("*.tra")) and not list(dec.glob("wer_*"))
