"""nnetmix.kaldi.fstfile: every FST a tool reads is checked before compiled code sees it.

A truncated, empty or garbage L, G, HCLG, H/CLG, training-graph archive or lattice archive given
to each tool that reads it ends with exit status 1 and one ERROR line naming the file: no signal,
no traceback, no OpenFst message of its own. The two crashes of issue 34 (a truncated L.fst to
compile-train-graphs.py, an HCLG whose start state is out of range to the decoder: signal 11)
run in subprocesses, since a signal is the point there; the rest call main(argv) in-process.
"""
import struct
import subprocess
import sys

import numpy as np
import pytest

from helpers import FIXTURES, ROOT, load_bin
from nnetmix.kaldi import TableWriter
from nnetmix.kaldi.fstfile import FST_MAGIC, FstFormatError, check_fst_bytes, read_checked_fst

_START_AT = 4 + 4 + len("vector") + 4 + len("standard") + 8 + 8  # the header's int64 start


def _vector_fst(states, start=0) -> bytes:
    """A binary VectorFst of standard arcs from [(final, [(il, ol, w, next), ...]), ...]."""
    out = [struct.pack("<i", FST_MAGIC)]
    for name in (b"vector", b"standard"):
        out.append(struct.pack("<i", len(name)) + name)
    out.append(struct.pack("<iiQqqq", 2, 0, 3, start, len(states), 0))
    for final, arcs in states:
        out.append(struct.pack("<fq", final, len(arcs)))
        out += [struct.pack("<iifi", *a) for a in arcs]
    return b"".join(out)


GOOD = _vector_fst([(np.inf, [(1, 2, 0.5, 1)]), (0.0, [])])


@pytest.mark.parametrize("data, problem", [
    (b"", "empty file"),
    (GOOD[:30], "truncated"),
    (GOOD[:-5], "truncated"),
    (b"\x00garbage" * 8, "not an OpenFst binary FST"),
    (GOOD + b"xx", "2 bytes of garbage after the FST"),
    (_vector_fst([(0.0, [])], start=3), "start state 3 out of range"),
    (_vector_fst([(0.0, [(1, 1, 0.0, 7)])]), "goes to state 7, out of range"),
    (_vector_fst([(0.0, [(-4, 1, 0.0, 0)])]), "negative input label -4"),
    (_vector_fst([]), "an FST with no states"),
    (GOOD.replace(b"standard", b"lattice4"), "'lattice4' arcs"),
    (GOOD[:_START_AT - 16] + struct.pack("<i", 9) + GOOD[_START_AT - 12:],
     "file version 9"),
])
def test_check_fst_bytes_names_the_problem(data, problem):
    with pytest.raises(FstFormatError, match=f"^x.fst: .*{problem}"):
        check_fst_bytes(data, "x.fst")


def test_labels_checked_against_their_limits():
    lay = check_fst_bytes(GOOD, "x.fst", max_ilabel=1, max_olabel=2)
    assert (lay.num_states, lay.num_arcs, lay.start) == (2, 1, 0)
    with pytest.raises(FstFormatError, match="output label 2 out of range .at most 1: words"):
        check_fst_bytes(GOOD, "x.fst", max_olabel=1, labels_from="words")


def test_vector_and_const_read_the_same(tmp_path):
    import kaldifst

    (tmp_path / "a.fst").write_bytes(GOOD)
    fst = read_checked_fst(str(tmp_path / "a.fst"))
    kaldifst.StdConstFst(fst).write(str(tmp_path / "c.fst"))
    const = read_checked_fst(str(tmp_path / "c.fst"))
    assert fst.to_str() == const.to_str()
    assert check_fst_bytes((tmp_path / "c.fst").read_bytes(), "c").fst_type == "const"


def test_const_fsts_in_archives_and_scripts(tmp_path):
    """A ConstFst in an FST archive or behind an scp line (Kaldi's tables refuse it; its header
    gives its size, so nnetmix reads it) gives the graph the VectorFst gives; one cut short, or
    aligned (padding relative to its own file), is one FstFormatError naming the key."""
    import kaldifst

    from nnetmix.kaldi.fstfile import iter_fst_table

    (tmp_path / "a.fst").write_bytes(GOOD)
    kaldifst.StdConstFst(read_checked_fst(str(tmp_path / "a.fst"))).write(str(tmp_path / "c.fst"))
    const = (tmp_path / "c.fst").read_bytes()
    (tmp_path / "g.ark").write_bytes(b"u1 " + const + b"u2 " + GOOD + b"u3 " + const)
    (tmp_path / "g.scp").write_text(f"u1 {tmp_path}/c.fst\nu2 {tmp_path}/g.ark:{3 + len(const) + 3}\n")
    want = read_checked_fst(str(tmp_path / "a.fst")).to_str()
    for spec, keys in ((f"ark:{tmp_path}/g.ark", ["u1", "u2", "u3"]),
                       (f"scp:{tmp_path}/g.scp", ["u1", "u2"])):
        got = list(iter_fst_table(spec))
        assert [k for k, _ in got] == keys
        assert all(f.to_str() == want for _, f in got)
    (tmp_path / "cut.ark").write_bytes(b"u1 " + const[:-6])
    with pytest.raises(FstFormatError, match=r"cut.ark \(key u1\): truncated \(cut in the 2 "
                                             r"states and 1 arcs of a const FST\)"):
        list(iter_fst_table(f"ark:{tmp_path}/cut.ark"))
    flags_at = 4 + 4 + len("const") + 4 + len("standard") + 4
    aligned = const[:flags_at] + struct.pack("<i", 4) + const[flags_at + 4:]
    (tmp_path / "al.ark").write_bytes(b"u1 " + aligned)
    with pytest.raises(FstFormatError, match=r"al.ark \(key u1\): an aligned const FST"):
        list(iter_fst_table(f"ark:{tmp_path}/al.ark"))


# -- the tools --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def yesno(tmp_path_factory):
    """Kaldi's yesno files, a feature archive, a training-graph archive and a lattice archive."""
    from nnetmix.kaldi import read_gmm_model

    if not (FIXTURES / "yesno").is_dir():
        pytest.skip(f"{FIXTURES} not present (a user's own clone)")
    d = tmp_path_factory.mktemp("fstfile")
    y = FIXTURES / "yesno"
    tm, am = read_gmm_model(str(y / "40.mdl"))
    rng = np.random.default_rng(0)
    with TableWriter(f"ark:{d}/feats.ark") as w:
        w["u1"] = rng.standard_normal((12, am.dim)).astype(np.float32)
        w["u2"] = rng.standard_normal((12, am.dim)).astype(np.float32)
    with TableWriter(f"ark:{d}/loglikes.ark") as w:
        w["u1"] = rng.standard_normal((12, am.num_pdfs)).astype(np.float32)
    (d / "text.int").write_text("u1 2 3\n")
    (d / "disambig.int").write_text("")
    assert load_bin("compile-train-graphs.py").main(
        [str(y / "tree"), str(y / "40.mdl"), str(y / "L.fst"), f"ark:{d}/text.int",
         f"ark:{d}/graphs.ark"]) == 0
    assert load_bin("gmm-latgen-faster.py").main(
        [str(y / "40.mdl"), str(y / "HCLG.fst"), f"ark:{d}/feats.ark", f"ark:{d}/lat.ark"]) == 0
    return y, d


def _bad_files(d, good: bytes, tag: str) -> dict:
    """A truncated, an empty and a garbage copy of ``good`` in ``d``."""
    files = {"truncated": good[:len(good) * 2 // 3], "empty": b"",
             "garbage": bytes(np.random.default_rng(1).integers(0, 256, 300, dtype=np.uint8))}
    out = {}
    for kind, data in files.items():
        p = d / f"{tag}.{kind}"
        p.write_bytes(data)
        out[kind] = str(p)
    return out


def _tools(y, d, out):
    """(tool, the FST it reads, argv with {bad} where that FST goes)."""
    mdl, L, G = (str(y / n) for n in ("40.mdl", "L.fst", "G.fst"))
    return [
        ("compile-train-graphs.py", "L.fst", [str(y / "tree"), mdl, "{bad}", f"ark:{d}/text.int",
                                              f"ark:{out}/g.ark"]),
        ("make-lg.py", "L.fst", ["{bad}", G, f"{out}/LG.fst"]),
        ("make-lg.py", "G.fst", [L, "{bad}", f"{out}/LG.fst"]),
        ("fstcomposecontext.py", "L.fst", ["--context-size=1", "--central-position=0",
                                           f"{out}/ilabels", "{bad}", f"{out}/CLG.fst"]),
        ("make-hclga.py", "L.fst", ["{bad}", L, f"{d}/disambig.int", f"{out}/HCLGa.fst"]),
        ("add-self-loops.py", "HCLG.fst", [mdl, "{bad}", f"{out}/HCLG.fst"]),
    ] + [
        (tool, "HCLG.fst", [mdl, "{bad}", f"ark:{d}/{table}.ark", out_spec])
        for tool, table, out_spec in [
            ("gmm-decode-faster.py", "feats", f"ark,t:{out}/words"),
            ("decode-faster-mapped.py", "loglikes", f"ark,t:{out}/words"),
            ("gmm-latgen-faster.py", "feats", f"ark:{out}/lat"),
            ("gmm-latgen-faster-parallel.py", "feats", f"ark:{out}/lat"),
            ("latgen-faster-mapped.py", "loglikes", f"ark:{out}/lat"),
            ("latgen-faster-mapped-parallel.py", "loglikes", f"ark:{out}/lat")]
    ] + [
        ("gmm-align-compiled.py", "graphs.ark", [mdl, "ark:{bad}", f"ark:{d}/feats.ark",
                                                 f"ark:{out}/ali"]),
        ("align-equal-compiled.py", "graphs.ark", ["ark:{bad}", f"ark:{d}/feats.ark",
                                                   f"ark:{out}/ali"]),
        ("lattice-best-path.py", "lat.ark", ["ark:{bad}", f"ark,t:{out}/tra"]),
        ("lattice-copy.py", "lat.ark", ["ark:{bad}", f"ark:{out}/lat2"]),
    ]


def _error_lines(err: str, tool: str) -> list[str]:
    return [line for line in err.splitlines()
            if line.startswith("ERROR") or line.startswith(f"{tool}:")]


def test_every_fst_reader_refuses_bad_files_in_one_line(yesno, tmp_path, capfd):
    y, d = yesno
    goods = {n: (y / n).read_bytes() for n in ("L.fst", "G.fst", "HCLG.fst")}
    goods.update({n: (d / n).read_bytes() for n in ("graphs.ark", "lat.ark")})
    bad = {n: _bad_files(tmp_path, data, n) for n, data in goods.items()}
    capfd.readouterr()
    for tool, what, argv in _tools(y, d, tmp_path):
        main = load_bin(tool).main
        for kind, path in bad[what].items():
            rc = main(["--print-args=false"] + [a.replace("{bad}", path) for a in argv])
            err = capfd.readouterr().err
            errors = _error_lines(err, tool)
            case = f"{tool} on a {kind} {what}:\n{err}"
            assert rc == 1, case
            assert "Traceback" not in err and "VectorFst::Read" not in err, case
            assert len(errors) == 1, case
            if kind != "empty" or what not in ("graphs.ark", "lat.ark"):
                assert path in errors[0], case  # (an empty archive is no entries: nothing done)
    outputs = {"g.ark", "LG.fst", "CLG.fst", "ilabels", "HCLGa.fst", "HCLG.fst", "words", "lat",
               "ali", "tra", "lat2"}
    assert [p.name for p in tmp_path.iterdir() if p.name in outputs or ".tmp" in p.name] == []


def test_check_g_properties_on_bad_g(yesno, tmp_path, capfd):
    y, d = yesno
    lexicon = tmp_path / "lexicon.txt"
    lexicon.write_text("<SIL> SIL\nYES y\nNO n\n")
    tool = load_bin("check-g-properties.py").main
    for kind, path in _bad_files(tmp_path, (y / "G.fst").read_bytes(), "G").items():
        assert tool([path, str(lexicon), str(y / "words.txt")]) == 1, kind
        err = capfd.readouterr().err
        assert "Traceback" not in err and "VectorFst::Read" not in err, err
        assert len([line for line in err.splitlines() if path in line]) == 1, err


def _run(tool, *args):
    return subprocess.run([sys.executable, str(ROOT / "bin" / tool), "--print-args=false",
                           *map(str, args)], capture_output=True, text=True, timeout=120)


def test_truncated_lexicon_to_compile_train_graphs_is_no_signal(yesno, tmp_path):
    y, d = yesno
    bad = tmp_path / "L.fst"
    bad.write_bytes((y / "L.fst").read_bytes()[:300])
    r = _run("compile-train-graphs.py", y / "tree", y / "40.mdl", bad, f"ark:{d}/text.int",
             f"ark:{tmp_path}/g.ark")
    assert r.returncode == 1, r  # was -11 (SIGSEGV) after OpenFst's own "Read failed" line
    assert r.stderr.count("ERROR") == 1 and f"{bad}: truncated" in r.stderr, r.stderr
    assert not (tmp_path / "g.ark").exists()


def test_hclg_start_out_of_range_to_the_decoder_is_no_signal(yesno, tmp_path):
    y, d = yesno
    data = bytearray((y / "HCLG.fst").read_bytes())
    assert data[8:14] == b"vector"
    data[_START_AT:_START_AT + 8] = struct.pack("<q", 10 ** 6)
    bad = tmp_path / "HCLG.fst"
    bad.write_bytes(bytes(data))
    r = _run("gmm-decode-faster.py", y / "40.mdl", bad, f"ark:{d}/feats.ark",
             f"ark,t:{tmp_path}/words")
    assert r.returncode == 1, r  # was -11 (SIGSEGV)
    assert r.stderr.count("ERROR") == 1 and "start state 1000000 out of range" in r.stderr, \
        r.stderr


@pytest.mark.parametrize("gz", [False, True])
def test_lattice_best_path_leaves_no_partial_outputs(yesno, tmp_path, capfd, gz):
    """A lattice archive cut short in its second lattice: no .tra / .ali of the first one."""
    import gzip

    y, d = yesno
    data = (d / "lat.ark").read_bytes()
    assert data.count(b"u2 ") == 1
    cut = data[:len(data) - 20]
    if gz:
        (tmp_path / "lat.gz").write_bytes(gzip.compress(data)[:-40])
        rspec = f"ark:gunzip -c {tmp_path}/lat.gz |"
    else:
        (tmp_path / "lat.ark").write_bytes(cut)
        rspec = f"ark:{tmp_path}/lat.ark"
    tra, ali = tmp_path / "best.tra", tmp_path / "best.ali"
    tra.write_text("previous\n")
    rc = load_bin("lattice-best-path.py").main(["--print-args=false", rspec, f"ark,t:{tra}",
                                                f"ark,t:{ali}"])
    err = capfd.readouterr().err
    assert rc == 1 and len(_error_lines(err, "lattice-best-path.py")) == 1, err
    assert tra.read_text() == "previous\n" and not ali.exists()
    assert not [p for p in tmp_path.iterdir() if ".tmp" in p.name]
