"""NIST SPHERE files and Kaldi's 'sph2pipe ... |' wav.scp entries, served without the binary."""
import io
import logging
import shutil
import subprocess

import numpy as np
import pytest
import soundfile as sf
from helpers import g711_alaw, g711_ulaw, path_without_sph2pipe, sphere_header, write_sphere

from nnetmix.feat import AudioReadError, SphereError, SphereFile, read_audio
from nnetmix.feat.sph2pipe import parse_sph2pipe

RATE = 8000
N = 3 * RATE + 17


@pytest.fixture
def no_sph2pipe(monkeypatch):
    """PATH without the directories that hold an sph2pipe program."""
    monkeypatch.setenv("PATH", path_without_sph2pipe())


def pcm2(seed=0):
    return np.random.default_rng(seed).integers(-32768, 32768, (N, 2)).astype(np.int16)


@pytest.mark.parametrize("order", ["01", "10"])
def test_pcm_two_channels_both_byte_orders(tmp_path, no_sph2pipe, order):
    data = pcm2()
    path = write_sphere(tmp_path / "a.sph", data, byte_format=order)
    sph = SphereFile(str(path))
    assert (sph.header.channel_count, sph.header.sample_rate, sph.num_samples) == (2, RATE, N)
    np.testing.assert_array_equal(sph.read().samples, data.T.astype(np.float32))
    for c in (1, 2):
        audio = read_audio(f"sph2pipe -f wav -p -c {c} {path} |")
        assert audio.sample_rate == RATE and audio.samples.shape == (1, N)
        np.testing.assert_array_equal(audio.samples[0], data[:, c - 1])
    both = read_audio(f"/opt/kaldi/tools/sph2pipe_v2.5/sph2pipe -f wav -p {path} |")
    np.testing.assert_array_equal(both.samples, data.T)


@pytest.mark.parametrize("coding, g711", [("ulaw", g711_ulaw), ("alaw", g711_alaw)])
def test_companded_two_channels_decode_as_g711(tmp_path, no_sph2pipe, coding, g711):
    """All 256 codes on both channels decode to ITU G.711's values (sph2pipe's tables)."""
    codes = np.stack([np.arange(256), 255 - np.arange(256)], axis=1).astype(np.uint8)
    codes = np.tile(codes, (4, 1))
    path = write_sphere(tmp_path / "u.sph", codes, coding=coding)
    table = np.array([g711(c) for c in range(256)], dtype=np.float32)
    for c in (1, 2):
        got = read_audio(f"sph2pipe -f wav -p -c {c} {path} |").samples[0]
        np.testing.assert_array_equal(got, table[codes[:, c - 1]])
    if coding == "ulaw":  # sph2pipe's ulaw2pcm table, first and last entries as printed there
        assert table[:4].tolist() == [-32124, -31100, -30076, -29052]
        assert table[[127, 128, 255]].tolist() == [0, 32124, 0]


def test_sph2pipe_time_and_sample_ranges(tmp_path, no_sph2pipe):
    data = pcm2(1)
    path = write_sphere(tmp_path / "a.sph", data)
    cases = {"-t 0.5:1.25": (4000, 10000), "-t 1.0001:": (8000, N), "-t :2.5": (0, 20000),
             "-t 2.9:99": (23200, N), "-s 100:9000": (100, 9000), "-s 24000:": (24000, N)}
    for opt, (b, e) in cases.items():
        got = read_audio(f"sph2pipe -f wav -p -c 2 {opt} {path} |").samples[0]
        np.testing.assert_array_equal(got, data[b:e, 1], err_msg=opt)
    # GNU getopt: options may follow the file name, and take attached values
    got = read_audio(f"sph2pipe {path} -fwav -p -c2 -t0.5:1.25 |").samples[0]
    np.testing.assert_array_equal(got, data[4000:10000, 1])
    with pytest.raises(AudioReadError, match="start point > length"):
        read_audio(f"sph2pipe -f wav -p -t 4:5 {path} |")
    with pytest.raises(AudioReadError, match="-c takes 1 or 2"):
        read_audio(f"sph2pipe -f wav -p -c 3 {path} |")


def test_sample_count_disagreeing_with_size_uses_size(tmp_path, caplog):
    data = pcm2(2)
    path = write_sphere(tmp_path / "a.sph", data, sample_count=N + 100)
    with caplog.at_level(logging.WARNING):
        sph = SphereFile(str(path))
    assert sph.num_samples == N and f"sample_count reset to {N}" in caplog.text
    np.testing.assert_array_equal(read_audio(f"sph2pipe -c 1 {path} |").samples[0], data[:, 0])


def test_shorten_without_decoder_is_one_line_error(tmp_path, no_sph2pipe):
    body = b"ajkg\x02" + bytes(300)
    path = write_sphere(tmp_path / "sw02001.sph", np.zeros((10, 2), np.uint8),
                        coding="ulaw,embedded-shorten-v2.00", body=body)
    assert SphereFile(str(path)).header.shorten
    for rx in (f"sph2pipe -f wav -p -c 1 {path} |", str(write_sphere(
            tmp_path / "mono.sph", np.zeros(10, np.int16), coding="pcm,embedded-shorten-v2.00",
            body=body))):
        with pytest.raises(SphereError) as e:
            read_audio(rx)
        msg = str(e.value)
        assert "\n" not in msg and "shorten-compressed" in msg
        assert "sph2pipe program" in msg and "none on PATH" in msg and ".sph" in msg


def test_sph_named_directly(tmp_path, no_sph2pipe):
    mono = pcm2(3)[:, 0]
    path = write_sphere(tmp_path / "m.sph", mono, byte_format="10")
    np.testing.assert_array_equal(read_audio(str(path)).samples, mono[None, :])
    stereo = write_sphere(tmp_path / "sw02001.sph", pcm2(4))
    with pytest.raises(AudioReadError, match=r"sw02001\.sph: SPHERE file with 2 channels.*"
                                             r"sph2pipe -f wav -p -c 1 .*sw02001\.sph \|"):
        read_audio(str(stereo))
    # SPHERE coming out of some other pipe is decoded whole, every channel kept
    np.testing.assert_array_equal(read_audio(f"cat {stereo} |").samples, pcm2(4).T)


def test_which_commands_are_served_in_process():
    cmd = parse_sph2pipe("/opt/kaldi/tools/sph2pipe_v2.5/sph2pipe -f wav -p -c 2 /d/sw02001.sph")
    assert (cmd.path, cmd.channel, cmd.options) == ("/d/sw02001.sph", 1, ("-f", "wav", "-p",
                                                                          "-c", "2"))
    assert parse_sph2pipe("sph2pipe -f sph 'a b.sph'").path == "a b.sph"
    for text in ("sph2pipe -f raw a.sph", "sph2pipe -f wav -p a.sph | sox -t wav - -t wav -",
                 "sph2pipe -f wav a.sph out.wav", "sph2pipe -u a.sph", "sph2pipe -h h a.sph",
                 "cat a.sph", "sph2pipe -f wav $CORPUS/a.sph", "sph2pipe -f wav a.sph > x"):
        assert parse_sph2pipe(text) is None, text


@pytest.mark.parametrize("fields, size, message", [
    ([("sample_rate", 8000), ("channel_count", 1), ("sample_coding", "pcm"),
      ("sample_byte_format", "01")], 1024, "no sample_count"),
    ([("sample_count", 4), ("sample_rate", 8000), ("channel_count", 1), ("sample_coding", "pcm"),
      ("sample_n_bytes", 2)], 1024, "needs sample_byte_format 01 or 10"),
    ([("sample_count", 4), ("sample_rate", 8000), ("channel_count", 1), ("sample_n_bytes", 3),
      ("sample_coding", "pcm"), ("sample_byte_format", "012")], 1024, "sample_n_bytes 3"),
    ([("sample_count", 4), ("sample_rate", 8000), ("channel_count", 1),
      ("sample_coding", "pcm,embedded-wavpack"), ("sample_byte_format", "01")], 1024,
     "unsupported SPHERE compression"),
    ([("sample_count", 4), ("sample_rate", 8000), ("channel_count", 1),
      ("sample_coding", "vsel")], 1024, "unsupported SPHERE sample_coding 'vsel'"),
])
def test_bad_headers_name_the_file(tmp_path, fields, size, message):
    path = tmp_path / "bad.sph"
    path.write_bytes(sphere_header(fields, size) + bytes(64))
    with pytest.raises(SphereError, match=message) as e:
        read_audio(str(path))
    assert str(e.value).startswith(str(path))
    path.write_bytes(b"NIST_1A\n   1024\nsample_count -i 4\n")
    with pytest.raises(SphereError, match="not a NIST SPHERE file"):
        SphereFile(str(path))


def test_missing_coding_with_two_byte_samples_is_pcm(tmp_path):
    data = pcm2(5)[:100, 0]
    fields = [("sample_count", 100), ("sample_rate", 8000), ("channel_count", 1),
              ("sample_n_bytes", 2), ("sample_byte_format", "10")]
    (tmp_path / "a.sph").write_bytes(sphere_header(fields, 2048) + data.astype(">i2").tobytes())
    np.testing.assert_array_equal(read_audio(str(tmp_path / "a.sph")).samples[0], data)


@pytest.mark.skipif(shutil.which("sph2pipe") is None, reason="no sph2pipe binary on PATH")
def test_in_process_equals_sph2pipe_binary(tmp_path):
    """Where an sph2pipe binary exists, the in-process samples equal what it writes."""
    files = [write_sphere(tmp_path / "le.sph", pcm2(6)),
             write_sphere(tmp_path / "be.sph", pcm2(7), byte_format="10"),
             write_sphere(tmp_path / "u.sph", pcm2(8).view(np.uint8)[:, :2], coding="ulaw")]
    for path in files:
        for opts in ("-f wav -p -c 1", "-f wav -p -c 2 -t 0.5:1.25", "-f wav -p -s 10:5000",
                     "-f wav -c 2"):
            out = subprocess.run(["sph2pipe", *opts.split(), str(path)], check=True,
                                 capture_output=True).stdout
            ref, rate = sf.read(io.BytesIO(out), dtype="int16", always_2d=True)
            ours = read_audio(f"sph2pipe {opts} {path} |")
            assert ours.sample_rate == rate
            np.testing.assert_array_equal(ours.samples, ref.T, err_msg=f"{path} {opts}")
