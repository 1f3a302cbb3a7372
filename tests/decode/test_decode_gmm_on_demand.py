"""GMM log-likelihoods computed by the compiled search for the pdfs it reaches (Kaldi's
DecodableAmDiagGmmScaled): the kernel agrees with the GEMM path to float32 rounding, the
on-demand search is byte for byte the dense search on the kernel's own matrix, and through
LatticeDecoder it gives the GEMM path's best paths and lattices (on Kaldi's yesno model)."""
import kaldi_hmm_gmm  # noqa: F401,I001 -- before kaldifst
import numpy as np
import pytest

from nnetmix.decode.decoder import (DecodeError, LatticeDecoder, LatticeDecoderConfig,
                                    read_decoding_graph)
from nnetmix.decode.faster import SearchOptions, lattice_search
from nnetmix.decode.fstarrays import graph_arrays
from nnetmix.decode.gmmframes import (GmmFrames, GmmLikelihoodOptions, OnDemandGmm,
                                      pdf_loglike_scaled, scaled_loglikes_matrix)
from nnetmix.hmm.gmm_likelihood import pdf_loglikes
from nnetmix.kaldi import TableWriter

from helpers import FIXTURES, clat_paths, load_bin, yesno_items

ACWT = 0.083333


@pytest.fixture(scope="module")
def yesno():
    if not FIXTURES.is_dir():
        pytest.skip(f"{FIXTURES} not present (a user's own clone)")
    tm, am, items = yesno_items(FIXTURES, 6, noise=1.5)
    hclg = read_decoding_graph(str(FIXTURES / "yesno" / "HCLG.fst"))
    return tm, am, items, hclg, OnDemandGmm(am)


def test_kernel_agrees_with_the_gemm_path(yesno):
    _tm, am, items, _hclg, gmm = yesno
    for _key, feats in items[:2]:
        ref = pdf_loglikes(gmm.stacked, feats, dtype=np.float64)
        got = scaled_loglikes_matrix(gmm, feats, 1.0)
        assert got.dtype == np.float32 and got.shape == ref.shape
        np.testing.assert_allclose(got, ref, rtol=2e-6, atol=1e-4)
        # one entry through the search's entry point, scaled as the search scales it
        x2 = gmm.design(feats)
        v = pdf_loglike_scaled(x2, 3, gmm.proj_t, gmm.gconst, gmm.offsets, 2, ACWT)
        assert v == np.float32(np.float32(ACWT) * got[3, 2])
        # the DiagGmm's own log-likelihood (Kaldi's per-pdf formula)
        assert got[3, 2] == pytest.approx(am.log_likelihoods(feats[3:4])[0, 2], rel=1e-5)


@pytest.mark.parametrize("best_path_only", [False, True])
@pytest.mark.parametrize("max_active,min_active,beam", [(7000, 200, 13.0), (10 ** 6, 0, 11.0),
                                                        (12, 3, 13.0)])
def test_on_demand_search_is_the_dense_search(yesno, best_path_only, max_active, min_active,
                                              beam):
    """Every array of the raw lattice, the reached-final flag and the per-frame expanded counts
    are equal when the dense search reads the matrix the kernel fills."""
    tm, _am, items, hclg, gmm = yesno
    graph = graph_arrays(hclg)
    tid2pdf = np.asarray(tm.tid2pdf, dtype=np.int64)
    opts = SearchOptions(beam, max_active, min_active, 6.0, 25, 0.5)
    for _key, feats in items:
        dense = lattice_search(graph, scaled_loglikes_matrix(gmm, feats, ACWT), tid2pdf, opts,
                               best_path_only)
        lazy = lattice_search(graph, None, tid2pdf, opts, best_path_only, gmm=(gmm, feats, ACWT))
        a, b = dense.lattice, lazy.lattice
        assert a.num_states == b.num_states > 1 and a.start == b.start
        for name in ("src", "dst", "ilabel", "olabel", "g", "a", "final_g", "final_a"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
        assert dense.reached_final == lazy.reached_final
        np.testing.assert_array_equal(dense.expanded[:, :2], lazy.expanded[:, :2])
        # the pdfs computed per frame: none from a matrix; on demand, at most all of them, and
        # fewer when max-active cuts the tokens
        assert not dense.expanded[:, 2].any()
        assert 0 < lazy.expanded[:, 2].min() and lazy.expanded[:, 2].max() <= tm.num_pdfs
        if max_active == 12:
            assert lazy.expanded[:, 2].mean() < tm.num_pdfs


@pytest.mark.parametrize("lattice", [True, False])
def test_decoder_on_demand_gives_the_gemm_paths(yesno, lattice):
    """Through LatticeDecoder (what gmm-latgen-faster runs): the same best path as the GEMM
    path's matrix, and the same lattice paths at costs equal to float32 rounding."""
    tm, _am, items, hclg, gmm = yesno
    dec = LatticeDecoder(hclg, tm, LatticeDecoderConfig(
        beam=13.0, lattice_beam=6.0, max_active=7000, acoustic_scale=ACWT, allow_partial=True,
        decoder="faster"))
    for key, feats in items:
        lazy = dec.decode(GmmFrames(gmm, feats, True), key, lattice=lattice)
        gemm = dec.decode(GmmFrames(gmm, feats, False), key, lattice=lattice)
        assert lazy.words == gemm.words and lazy.alignment == gemm.alignment
        assert lazy.likelihood == pytest.approx(gemm.likelihood, rel=1e-5)
        got = clat_paths(lazy.lattice if lattice else lazy.path_lattice)
        ref = clat_paths(gemm.lattice if lattice else gemm.path_lattice)
        assert [p[:2] for p in got] == [p[:2] for p in ref]
        for (_w, _t, g1, a1), (_w2, _t2, g2, a2) in zip(got, ref):
            assert g1 == pytest.approx(g2, abs=1e-4) and a1 == pytest.approx(a2, rel=1e-5)


def test_gmm_frames_for_the_simple_decoder_and_bad_input(yesno):
    tm, _am, items, hclg, gmm = yesno
    key, feats = items[0]
    simple = LatticeDecoder(hclg, tm, LatticeDecoderConfig(acoustic_scale=ACWT, beam=13.0,
                                                           allow_partial=True))
    faster = LatticeDecoder(hclg, tm, LatticeDecoderConfig(acoustic_scale=ACWT, beam=13.0,
                                                           allow_partial=True, decoder="faster"))
    # --decoder=simple takes the GEMM matrix even when on_demand is set
    assert simple.decode(GmmFrames(gmm, feats, True), key).words == \
        faster.decode(GmmFrames(gmm, feats, True), key).words
    with pytest.raises(DecodeError, match="zero-length"):
        faster.decode(GmmFrames(gmm, feats[:0], True), "empty")
    bad = feats.copy()
    bad[2, 1] = np.nan
    with pytest.raises(DecodeError, match="bad.*not all finite"):
        faster.decode(GmmFrames(gmm, bad, True), "bad")


def test_on_demand_threshold():
    opts = GmmLikelihoodOptions(gmm_on_demand_pdfs=400)
    assert not opts.on_demand(399) and opts.on_demand(400) and opts.on_demand(5000)
    assert GmmLikelihoodOptions(0).on_demand(1)
    assert not GmmLikelihoodOptions(-1).on_demand(10 ** 6)


def test_gmm_tools_on_demand_and_dense_give_the_same_words(yesno, tmp_path, capsys):
    """gmm-decode-faster and gmm-latgen-faster with --gmm-on-demand-pdfs=0 (always) and -1
    (never): the same words and alignments."""
    _tm, _am, items, _hclg, _gmm = yesno
    with TableWriter(f"ark:{tmp_path}/feats.ark") as w:
        for k, f in items:
            w[k] = f
    y = FIXTURES / "yesno"
    latgen_opts = ["--decoder=faster", "--allow-partial=true"]
    for tool, extra in (("gmm-decode-faster.py", []), ("gmm-latgen-faster.py", latgen_opts)):
        outs = {}
        for mode in ("0", "-1"):
            tables = [f"ark,t:{tmp_path}/w{mode}", f"ark,t:{tmp_path}/a{mode}"]
            if tool == "gmm-latgen-faster.py":
                tables.insert(0, f"ark:{tmp_path}/lat{mode}")
            assert load_bin(tool).main(extra + [
                "--beam=13", "--acoustic-scale=0.083333", f"--gmm-on-demand-pdfs={mode}",
                str(y / "40.mdl"), str(y / "HCLG.fst"), f"ark:{tmp_path}/feats.ark",
                *tables]) == 0
            outs[mode] = ((tmp_path / f"w{mode}").read_text(),
                          (tmp_path / f"a{mode}").read_text())
        assert outs["0"] == outs["-1"] and outs["0"][0].count("\n") == len(items)
    capsys.readouterr()
