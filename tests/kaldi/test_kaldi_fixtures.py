"""Files written by Kaldi's own tools read correctly, and we write them back byte for byte."""
import numpy as np
import pytest

kaldiio = pytest.importorskip("kaldiio")

from nnetmix.kaldi import RandomAccessReader, SequentialReader, TableWriter


@pytest.fixture
def kio(kaldi_fixtures):
    return kaldi_fixtures / "kaldi-io-for-python"


def read(spec, kind="mat"):
    with SequentialReader(spec, kind) as r:
        return list(r)


def test_feats_binary_matches_kaldiio(kio):
    ours = read(f"ark:{kio}/feats.ark")
    ref = list(kaldiio.load_ark(str(kio / "feats.ark")))
    assert [k for k, _ in ours] == [k for k, _ in ref] and len(ours) == 10
    for (_, a), (_, b) in zip(ours, ref):
        assert a.dtype == np.float32 and a.shape[1] == 13
        np.testing.assert_array_equal(a, b)


def test_feats_text_is_first_two(kio):
    text = read(f"ark:{kio}/feats_ascii.ark")
    binary = dict(read(f"ark:{kio}/feats.ark"))
    assert len(text) == 2
    for key, m in text:
        np.testing.assert_allclose(m, binary[key], rtol=1e-6, atol=1e-5)


def test_compressed_cm(kio):
    comp = read(f"ark:{kio}/feats_compressed.ark")
    plain = dict(read(f"ark:{kio}/feats.ark"))
    ref = dict(kaldiio.load_ark(str(kio / "feats_compressed.ark")))
    for key, m in comp:
        assert m.dtype == np.float32
        assert np.abs(m - plain[key]).max() <= 1.2e-5
        np.testing.assert_allclose(m, ref[key], atol=2e-5)  # kaldiio rounds in float32 only


def test_vectors_and_alignments(kio):
    conf, conf_t = read(f"ark:{kio}/conf.ark", "vec"), read(f"ark:{kio}/conf_ascii.ark", "vec")
    assert [k for k, _ in conf] == [k for k, _ in conf_t] and len(conf) == 10
    for (_, a), (_, b) in zip(conf, conf_t):
        assert a.dtype == np.float32 and a.ndim == 1
        np.testing.assert_allclose(a, b, rtol=1e-6)
    ali, ali_t = read(f"ark:{kio}/ali.ark", "ivec"), read(f"ark:{kio}/ali_ascii.ark", "ivec")
    ref = list(kaldiio.load_ark(str(kio / "ali.ark")))
    for (k1, a), (k2, b), (k3, c) in zip(ali, ali_t, ref):
        assert k1 == k2 == k3 and a.dtype == np.int32
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)


def test_yesno_alignments_through_gunzip_pipe(kaldi_fixtures):
    ali = read(f"ark:gunzip -c {kaldi_fixtures}/yesno/ali.1.gz |", "ivec")
    assert len(ali) == 31 and ali[0][0] == "0_0_0_0_1_1_1_1"
    assert all(a.dtype == np.int32 and a.size > 100 for _, a in ali)
    with RandomAccessReader(f"ark:gunzip -c {kaldi_fixtures}/yesno/ali.1.gz |", "ivec") as r:
        np.testing.assert_array_equal(r[ali[5][0]], ali[5][1])


@pytest.mark.parametrize("name,kind,spec", [
    ("feats.ark", "mat", "ark"), ("conf.ark", "vec", "ark"), ("ali.ark", "ivec", "ark"),
    ("ali_ascii.ark", "ivec", "ark,t"), ("conf_ascii.ark", "vec", "ark,t")])
def test_rewrite_is_byte_identical(kio, tmp_path, name, kind, spec):
    """Copying a Kaldi ark through us gives Kaldi's bytes (text floats at precision 7 too)."""
    source = "conf.ark" if name == "conf_ascii.ark" else name  # write text from exact floats
    out = tmp_path / name
    with TableWriter(f"{spec}:{out}", kind) as w:
        for key, value in read(f"ark:{kio}/{source}", kind):
            w[key] = value
    assert out.read_bytes() == (kio / name).read_bytes()


def test_text_matrix_rewrite_is_byte_identical(kio, tmp_path):
    first_two = read(f"ark:{kio}/feats.ark")[:2]
    with TableWriter(f"ark,t:{tmp_path}/t.ark") as w:
        for key, value in first_two:
            w[key] = value
    assert (tmp_path / "t.ark").read_bytes() == (kio / "feats_ascii.ark").read_bytes()
