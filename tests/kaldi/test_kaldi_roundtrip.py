"""Our arks read back by kaldiio (an independent reader) and kaldiio's read by us; scp, pipes."""
import subprocess
import sys

import numpy as np
import pytest

kaldiio = pytest.importorskip("kaldiio")

from nnetmix.kaldi import RandomAccessReader, SequentialReader, TableWriter


def make_data(seed=777):
    rng = np.random.default_rng(seed)
    mats = {f"utt{i:02d}": rng.standard_normal((int(rng.integers(1, 30)), 7)).astype(np.float32) * 10
            for i in range(6)}
    mats["utt06"] = rng.standard_normal((3, 2))  # float64 -> DM
    mats["utt07"] = np.zeros((0, 0), dtype=np.float32)
    vecs = {k: rng.standard_normal(int(rng.integers(0, 9))).astype(np.float32) for k in "abcde"}
    vecs["f"] = rng.standard_normal(4)  # DV
    ivecs = {k: rng.integers(-5, 2**31 - 1, size=int(rng.integers(0, 40)), dtype=np.int64).astype(np.int32)
             for k in "abcde"}
    posts = {}
    for k in "abc":
        frames = []
        for _ in range(int(rng.integers(0, 6))):
            n = int(rng.integers(0, 4))
            frames.append([(int(i), float(np.float32(w))) for i, w in
                           zip(rng.integers(0, 3000, n), rng.random(n))])
        posts[k] = frames
    posts["d"] = []
    return mats, vecs, ivecs, posts


def write(spec, kind, data):
    with TableWriter(spec, kind) as w:
        for k, v in data.items():
            w[k] = v


def read(spec, kind):
    with SequentialReader(spec, kind) as r:
        return dict(r)


def same(a, b, binary):
    if isinstance(a, list):
        assert len(a) == len(b)
        for fa, fb in zip(a, b):
            assert [i for i, _ in fa] == [i for i, _ in fb]
            np.testing.assert_allclose([w for _, w in fa], [w for _, w in fb], rtol=0 if binary else 1e-6)
        return
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape or (a.size == b.size == 0)
    if binary:
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    else:
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("binary", [True, False])
@pytest.mark.parametrize("kind", ["mat", "vec", "ivec", "post"])
def test_roundtrip_ours(tmp_path, kind, binary):
    data = dict(zip(["mat", "vec", "ivec", "post"], make_data()))[kind]
    opt = "" if binary else ",t"
    write(f"ark{opt}:{tmp_path}/x.ark", kind, data)
    back = read(f"ark:{tmp_path}/x.ark", kind)
    assert list(back) == list(data)
    for k in data:
        same(back[k], data[k], binary or kind == "ivec")


@pytest.mark.parametrize("binary", [True, False])
def test_kaldiio_reads_ours(tmp_path, binary):
    mats, vecs, ivecs, _ = make_data()
    opt = "" if binary else ",t"
    for kind, data in (("mat", mats), ("vec", vecs), ("ivec", ivecs)):
        if not binary:
            data = {k: v for k, v in data.items() if v.size}  # kaldiio cannot read empty text
        write(f"ark{opt}:{tmp_path}/{kind}.ark", kind, data)
        ref = dict(kaldiio.load_ark(str(tmp_path / f"{kind}.ark")))
        assert list(ref) == list(data)
        for k, v in data.items():
            got = ref[k]
            if v.size == 0:
                assert got.size == 0
            elif binary:
                assert got.dtype == v.dtype
                np.testing.assert_array_equal(got, v)
            else:
                np.testing.assert_allclose(got, v, rtol=1e-6)


@pytest.mark.parametrize("text", [False, True])
def test_we_read_kaldiio(tmp_path, text):
    mats, vecs, ivecs, _ = make_data(5)
    for kind, data in (("mat", mats), ("vec", vecs), ("ivec", ivecs)):
        data = {k: v for k, v in data.items() if v.size}
        kaldiio.save_ark(str(tmp_path / f"{kind}.ark"), data, scp=str(tmp_path / f"{kind}.scp"),
                         text=text)
        for spec in (f"ark:{tmp_path}/{kind}.ark", f"scp:{tmp_path}/{kind}.scp"):
            back = read(spec, kind)
            assert list(back) == list(data)
            for k, v in data.items():
                if text:
                    np.testing.assert_allclose(back[k], v, rtol=1e-6)
                else:
                    np.testing.assert_array_equal(back[k], v)


@pytest.mark.parametrize("opt", ["", ",t"])
def test_ark_scp_offsets(tmp_path, opt):
    mats, _, ivecs, posts = make_data(3)
    for kind, data in (("mat", mats), ("ivec", ivecs), ("post", posts)):
        ark, scp = tmp_path / f"{kind}.ark", tmp_path / f"{kind}.scp"
        write(f"ark,scp{opt}:{ark},{scp}", kind, data)
        raw = ark.read_bytes()
        for line, key in zip(scp.read_text().splitlines(), data):
            k, where = line.split(" ", 1)
            path, offset = where.rsplit(":", 1)
            assert k == key and path == str(ark)
            head = raw[int(offset) - len(key) - 1:int(offset)]
            assert head == f"{key} ".encode()  # the offset is just after "key "
            if not opt:
                assert raw[int(offset):int(offset) + 2] == b"\0B"
        with RandomAccessReader(f"scp:{scp}", kind) as r:
            assert r.keys() == list(data) and len(r) == len(data)
            for key in reversed(list(data)):
                assert key in r
                same(r[key], data[key], not opt or kind == "ivec")
            assert "nope" not in r and r.get("nope", 5) == 5
        if kind == "mat" and not opt:
            ref = kaldiio.load_scp(str(scp))
            for key in data:
                np.testing.assert_array_equal(ref[key], data[key])


def test_random_access_ark_and_ranges(tmp_path):
    mats = make_data(9)[0]
    write(f"ark,scp:{tmp_path}/m.ark,{tmp_path}/m.scp", "mat", mats)
    with RandomAccessReader(f"ark:{tmp_path}/m.ark") as r:
        for key in sorted(mats, reverse=True):
            np.testing.assert_array_equal(r[key], mats[key])
    line = (tmp_path / "m.scp").read_text().splitlines()[1]
    key, rx = line.split()
    (tmp_path / "r.scp").write_text(f"{key}a {rx}[1:3]\n{key}b {rx}[0:1,2:4]\n")
    got = read(f"scp:{tmp_path}/r.scp", "mat")
    np.testing.assert_array_equal(got[f"{key}a"], mats[key][1:4])
    np.testing.assert_array_equal(got[f"{key}b"], mats[key][0:2, 2:5])


def test_pipes_in_and_out(tmp_path):
    _, _, ivecs, posts = make_data(11)
    write(f"ark:| gzip -c > {tmp_path}/ali.gz", "ivec", ivecs)
    back = read(f"ark:gunzip -c {tmp_path}/ali.gz |", "ivec")
    assert list(back) == list(ivecs)
    for k in ivecs:
        np.testing.assert_array_equal(back[k], ivecs[k])
    write(f"ark,t:| gzip -c > {tmp_path}/post.gz", "post", posts)
    back = read(f"ark:gunzip -c {tmp_path}/post.gz |", "post")
    for k in posts:
        same(back[k], posts[k], False)
    # an scp whose entries are input pipes, one object each
    for k in ("a", "b"):
        write(f"ark:{tmp_path}/one.{k}", "ivec", {k: ivecs[k]})
    (tmp_path / "p.scp").write_text("".join(f"{k} tail -c +3 {tmp_path}/one.{k} |\n" for k in "ab"))
    for k, v in read(f"scp:{tmp_path}/p.scp", "ivec").items():
        np.testing.assert_array_equal(v, ivecs[k])


def test_stdin_and_stdout_through_subprocess(tmp_path):
    mats = make_data(13)[0]
    write(f"ark:{tmp_path}/m.ark", "mat", mats)
    code = ("import sys\nfrom nnetmix.kaldi import SequentialReader, TableWriter\n"
            "with SequentialReader('ark:-') as r, TableWriter('ark,t:-') as w:\n"
            "    for k, m in r:\n        w[k] = m * 2\n")
    proc = subprocess.run([sys.executable, "-c", code], input=(tmp_path / "m.ark").read_bytes(),
                          capture_output=True, check=True)
    (tmp_path / "out.ark").write_bytes(proc.stdout)
    back = read(f"ark:{tmp_path}/out.ark", "mat")
    assert list(back) == list(mats)
    for k in mats:
        np.testing.assert_allclose(back[k], mats[k] * 2, rtol=1e-6, atol=1e-6)
