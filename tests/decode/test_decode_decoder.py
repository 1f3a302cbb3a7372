"""The decoding core on a tiny two-word system and on the Kaldi yesno model; the latgen tools."""
import kaldi_hmm_gmm  # noqa: F401,I001 -- before kaldifst
import numpy as np
import pytest

from nnetmix.decode.decoder import (DecodeError, LatticeDecoder, LatticeDecoderConfig,
                                    pdf_to_tid_matrix, read_decoding_graph)
from nnetmix.decode.graph import add_self_loops, make_clg, make_h, make_hclga, make_lg
from nnetmix.decode.latio import iter_compact_lattices
from nnetmix.decode.lattice import best_path
from nnetmix.hmm.khg import to_khg_context_dependency, to_khg_transition_model
from nnetmix.kaldi import SequentialReader, TableWriter

from helpers import (clat_paths, load_bin, loglikes_for, pdfs_of_phone, tiny_system, yesno_items,
                     yesno_text)


@pytest.fixture(scope="module")
def tiny():
    tm, tree, L, G = tiny_system()
    kc = to_khg_context_dependency(tree, tm.topo)
    ktm = to_khg_transition_model(tm, tree=tree, ctx_dep=kc)
    CLG, ilabels = make_clg(make_lg(L, G), [4, 5], 1, 0)
    Ha, dtid = make_h(ilabels, kc, ktm)
    hclg = add_self_loops(ktm, make_hclga(Ha, CLG, dtid), 0.1)
    return tm, tree, hclg, (kc, ktm)


def _frames(tree, phones, per_state=4):
    seq = []
    for p in phones:
        for pdf in pdfs_of_phone(tree, p):
            seq += [pdf] * per_state
    return seq


@pytest.mark.parametrize("phones,words", [([2], [1]), ([3, 2], [2, 1]),
                                          ([2, 1, 3, 3], [1, 2, 2])])
def test_tiny_decode_gives_expected_words(tiny, phones, words):
    tm, tree, hclg, _keep = tiny
    ll = loglikes_for(tm, _frames(tree, phones))
    dec = LatticeDecoder(hclg, tm, LatticeDecoderConfig(beam=13, lattice_beam=8,
                                                        acoustic_scale=0.1))
    res = dec.decode(ll, "u")
    assert res.words == words
    assert len(res.alignment) == ll.shape[0] == res.num_frames
    assert np.array_equal(tm.tid2pdf[res.alignment], np.array(_frames(tree, phones)))
    # the lattice's best path (acoustics rescaled) is the decoder's best path
    bw, bali, g, a = best_path(res.lattice, 1.0, 0.1)
    assert bw == words and bali == res.alignment
    assert abs(-(g + 0.1 * a) - res.likelihood) < 1e-3
    assert not res.partial


def test_tiny_decode_lattice_has_alternatives(tiny):
    tm, tree, hclg, _keep = tiny
    seq = _frames(tree, [2, 3])
    ll = loglikes_for(tm, seq, good=0.0, bad=-3.0)
    b = pdfs_of_phone(tree, 3)
    ll[len(seq) // 2:, pdfs_of_phone(tree, 2)] = -0.5   # 'a' nearly as good as 'b'
    res = LatticeDecoder(hclg, tm, LatticeDecoderConfig(beam=20, lattice_beam=10,
                                                        acoustic_scale=1.0)).decode(ll, "u")
    assert res.words == [1, 2] and b
    assert res.lattice.num_arcs() > 2


def test_pdf_to_tid_matrix_and_errors(tiny):
    tm, _tree, hclg, _keep = tiny
    ll = np.random.default_rng(0).normal(size=(5, tm.num_pdfs)).astype(np.float32)
    m = pdf_to_tid_matrix(ll, tm, 0.5)
    assert m.shape == (5, tm.num_transition_ids)
    assert np.allclose(m[:, 0], 0.5 * ll[:, tm.tid2pdf[1]])
    dec = LatticeDecoder(hclg, tm, LatticeDecoderConfig())
    with pytest.raises(DecodeError, match="expected"):
        dec.decode(ll[:, :-1], "u")
    with pytest.raises(DecodeError, match="final-state"):
        dec.decode(loglikes_for(tm, [pdfs_of_phone(_tree, 2)[0]]), "short")
    res = LatticeDecoder(hclg, tm, LatticeDecoderConfig(allow_partial=True)).decode(
        loglikes_for(tm, [pdfs_of_phone(_tree, 2)[0]]), "short")
    assert res.partial


def _yesno_tables(fixtures, tmp_path, n):
    """yesno_items, written to tmp_path/feats.ark and (their GMM log-likelihoods)
    tmp_path/loglikes.ark."""
    tm, am, items = yesno_items(fixtures, n)
    with TableWriter(f"ark:{tmp_path}/feats.ark") as w:
        for k, f in items:
            w[k] = f
    with TableWriter(f"ark:{tmp_path}/loglikes.ark") as w:
        for k, f in items:
            w[k] = am.log_likelihoods(f)
    return tm, am, items


@pytest.mark.parametrize("decoder", ["simple", "faster"])
def test_gmm_latgen_faster_and_mapped_on_yesno(kaldi_fixtures, tmp_path, capsys, decoder):
    y = kaldi_fixtures / "yesno"
    tm, am, items = _yesno_tables(kaldi_fixtures, tmp_path, 4)
    opts = ["--beam=13", "--lattice-beam=8", "--max-active=7000", "--acoustic-scale=0.083333",
            f"--word-symbol-table={y}/words.txt", f"--decoder={decoder}"]
    gmm = load_bin("gmm-latgen-faster.py")
    assert gmm.main(opts + [str(y / "40.mdl"), str(y / "HCLG.fst"), f"ark:{tmp_path}/feats.ark",
                            f"ark:|gzip -c > {tmp_path}/lat.1.gz", f"ark,t:{tmp_path}/words",
                            f"ark,t:{tmp_path}/ali"]) == 0
    err = capsys.readouterr().err
    for k, _f in items:
        assert f"{k} {yesno_text(k)} \n" in err
    assert "Log-like per frame for utterance" in err and "real-time factor" in err
    assert "Done 4 utterances, failed for 0" in err and "Overall log-likelihood per frame" in err
    mapped = load_bin("latgen-faster-mapped.py")
    assert mapped.main(opts + [str(y / "40.mdl"), str(y / "HCLG.fst"),
                               f"ark:{tmp_path}/loglikes.ark", f"ark:{tmp_path}/lat2.ark",
                               f"ark,t:{tmp_path}/words2"]) == 0
    assert (tmp_path / "words").read_text() == (tmp_path / "words2").read_text()
    lats = dict(iter_compact_lattices(f"ark:gunzip -c {tmp_path}/lat.1.gz|"))
    lats2 = dict(iter_compact_lattices(f"ark:{tmp_path}/lat2.ark"))
    assert list(lats) == [k for k, _ in items]
    for k in lats:
        assert best_path(lats[k], 1.0, 0.083333)[0] == best_path(lats2[k], 1.0, 0.083333)[0]
    # wrong feature dimension: every utterance fails, the tool says so and exits 1
    with TableWriter(f"ark:{tmp_path}/f13.ark") as w:
        w[items[0][0]] = items[0][1][:, :13]
    assert gmm.main([str(y / "40.mdl"), str(y / "HCLG.fst"), f"ark:{tmp_path}/f13.ark",
                     f"ark:{tmp_path}/x.ark"]) == 1
    assert "dimension 13" in capsys.readouterr().err



@pytest.mark.parametrize("tool", ["gmm-latgen-faster.py", "gmm-decode-faster.py",
                                  "latgen-faster-mapped.py", "decode-faster-mapped.py"])
def test_a_graph_of_another_lang_dir_is_refused_before_decoding(kaldi_fixtures, tmp_path,
                                                                capsys, tool):
    """An HCLG whose output labels are not all in --word-symbol-table (another lang directory's
    words.txt) stops before anything is decoded or written, naming both files."""
    y = kaldi_fixtures / "yesno"
    _yesno_tables(kaldi_fixtures, tmp_path, 1)
    words = tmp_path / "words.txt"
    words.write_text("<eps> 0\n<SIL> 1\nNO 2\n")          # no YES (3) in this table
    table = "loglikes" if "mapped" in tool else "feats"
    assert load_bin(tool).main([f"--word-symbol-table={words}", str(y / "40.mdl"),
                                str(y / "HCLG.fst"), f"ark:{tmp_path}/{table}.ark",
                                f"ark:{tmp_path}/out.ark"]) == 1
    err = capsys.readouterr().err
    assert err.count("ERROR") == 1 and "HCLG.fst (the decoding graph)" in err
    assert "output label 3 out of range (at most 2: input labels are the model's " \
           f"transition-ids, output labels the word ids of {words}" in err
    assert not (tmp_path / "out.ark").exists()


def test_gmm_decode_faster_and_mapped_on_yesno(kaldi_fixtures, tmp_path, capsys):
    """The best-path tools: the same words and alignments as gmm-latgen-faster's compiled
    search at the same settings, a linear lattice whose one path is that best path, and
    Kaldi's log lines."""
    y = kaldi_fixtures / "yesno"
    tm, am, items = _yesno_tables(kaldi_fixtures, tmp_path, 4)
    model, graph = str(y / "40.mdl"), str(y / "HCLG.fst")
    opts = ["--beam=13", "--acoustic-scale=0.083333"]
    assert load_bin("gmm-latgen-faster.py").main(
        opts + ["--decoder=faster", "--min-active=20", model, graph, f"ark:{tmp_path}/feats.ark",
                f"ark:{tmp_path}/lat.ark", f"ark,t:{tmp_path}/words.ref",
                f"ark,t:{tmp_path}/ali.ref"]) == 0
    capsys.readouterr()
    gmm = load_bin("gmm-decode-faster.py")
    assert gmm.main(opts + [f"--word-symbol-table={y}/words.txt", model, graph,
                            f"ark:{tmp_path}/feats.ark", f"ark,t:{tmp_path}/words",
                            f"ark,t:{tmp_path}/ali", f"ark:{tmp_path}/path.ark"]) == 0
    err = capsys.readouterr().err
    for k, _f in items:
        assert f"{k} {yesno_text(k)} \n" in err
    assert "Time taken [excluding initialization]" in err
    assert "Done 4 utterances, failed for 0" in err
    assert (tmp_path / "words").read_text() == (tmp_path / "words.ref").read_text()
    assert (tmp_path / "ali").read_text() == (tmp_path / "ali.ref").read_text()
    with SequentialReader(f"ark,t:{tmp_path}/words", "ivec") as r:
        words = {k: v.tolist() for k, v in r}
    with SequentialReader(f"ark,t:{tmp_path}/ali", "ivec") as r:
        alis = {k: v.tolist() for k, v in r}
    for k, clat in iter_compact_lattices(f"ark:{tmp_path}/path.ark"):
        (path,) = clat_paths(clat)
        assert list(path[0]) == words[k] and list(path[1]) == alis[k]
        # one compact arc per word, plus one for the word-less frames before the first word
        first_has_word = clat.arcs[clat.start][0][0] != 0
        assert clat.num_arcs() == len(words[k]) + (0 if first_has_word else 1)
    mapped = load_bin("decode-faster-mapped.py")
    assert mapped.main(opts + [model, graph, f"ark:{tmp_path}/loglikes.ark",
                               f"ark,t:{tmp_path}/words2"]) == 0
    assert (tmp_path / "words2").read_text() == (tmp_path / "words.ref").read_text()
    # one frame reaches no final state: with --allow-partial=false the utterance fails
    with TableWriter(f"ark:{tmp_path}/short.ark") as w:
        w[items[0][0]] = am.log_likelihoods(items[0][1])[:1]
    capsys.readouterr()
    assert mapped.main(["--allow-partial=false", model, graph, f"ark:{tmp_path}/short.ark",
                        f"ark,t:{tmp_path}/words3"]) == 1
    err = capsys.readouterr().err
    assert f"Did not successfully decode utterance {items[0][0]}, len = 1" in err


def test_read_decoding_graph_errors(tmp_path):
    (tmp_path / "bad.fst").write_text("not an fst")
    with pytest.raises(DecodeError,
                       match=r"bad.fst \(the decoding graph\): not an OpenFst binary FST"):
        read_decoding_graph(str(tmp_path / "bad.fst"))


def test_read_const_decoding_graph(kaldi_fixtures, tmp_path):
    """Kaldi's mkgraph.sh writes HCLG.fst as a const FST, which kaldifst cannot read itself."""
    import kaldifst
    from nnetmix.decode.graph import fst_arrays
    ref = kaldifst.StdVectorFst.read(str(kaldi_fixtures / "yesno" / "HCLG.fst"))
    kaldifst.StdConstFst(ref).write(str(tmp_path / "HCLG.const.fst"))
    assert (tmp_path / "HCLG.const.fst").read_bytes()[8:13] == b"const"
    got = read_decoding_graph(str(tmp_path / "HCLG.const.fst"))
    a, b = fst_arrays(got), fst_arrays(ref)
    assert a[0] == b[0] and a[1] == b[1]
    assert sorted(map(tuple, a[2].tolist())) == sorted(map(tuple, b[2].tolist()))
    assert np.allclose(a[4], b[4])
