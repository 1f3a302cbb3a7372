"""Kaldi wave objects and tables, extract-segments, and features of segmented data directories."""
import io
import logging
import os
import struct
import subprocess

import numpy as np
import pytest
import soundfile as sf
from helpers import (ROOT, dummy_samples, g711_ulaw, load_bin, path_without_sph2pipe, script_env,
                     write_sphere, write_wav)

from nnetmix.errors import FormatError, UsageError
from nnetmix.feat import (Audio, Extractor, SegmentOptions, SegmentsError, WaveWriter,
                          compute_feats_table, extract_segments, iter_wave_table, read_audio,
                          read_feature_config)
from nnetmix.feat.riff import encode_wave, read_wave
from nnetmix.kaldi import SequentialReader

MFCC_CONF = ROOT / "conf" / "mfcc.conf"


def reader(data: bytes):
    pos = [0]

    def read(n):
        out = data[pos[0]:pos[0] + n]
        pos[0] += len(out)
        return out
    return read


def test_wave_object_is_kaldis_wavedata_write():
    """44 header bytes as WaveData::Write, samples truncated toward zero then clipped."""
    samples = np.array([[1.7, -1.7, 40000.0, -40000.0, 32767.0]], dtype=np.float32)
    data, clipped = encode_wave(Audio(samples, 8000.0))
    assert clipped == 2 and len(data) == 44 + 10
    head = struct.unpack("<4sI4s4sIHHIIHH4sI", data[:44])
    assert head == (b"RIFF", 46, b"WAVE", b"fmt ", 16, 1, 1, 8000, 16000, 2, 16, b"data", 10)
    assert np.frombuffer(data[44:], "<i2").tolist() == [1, -1, 32767, -32768, 32767]
    two = np.stack([dummy_samples(50, 1), dummy_samples(50, 2)]).astype(np.float32)
    data, _ = encode_wave(Audio(two, 16000.0))
    ref, rate = sf.read(io.BytesIO(data), dtype="int16")  # an independent reader
    assert rate == 16000 and np.array_equal(ref.T, two)
    back = read_wave(reader(data), "x")
    assert back.sample_rate == 16000 and np.array_equal(back.samples, two)
    with pytest.raises(FormatError, match="empty"):
        encode_wave(Audio(np.zeros((1, 0), np.float32), 8000.0))


def test_wave_read_variants_kaldi_accepts():
    x = dummy_samples(40, 3)
    pcm = x.astype("<i2").tobytes()
    fmt = struct.pack("<HHIIHH", 1, 1, 8000, 16000, 2, 16)
    listing = b"LIST" + struct.pack("<I", 6) + b"abcdef"
    body = b"WAVE" + b"fmt " + struct.pack("<I", 16) + fmt + listing + b"data" + \
        struct.pack("<I", len(pcm)) + pcm
    riff = b"RIFF" + struct.pack("<I", len(body)) + body
    assert np.array_equal(read_wave(reader(riff), "x").samples[0], x)  # extra chunk skipped
    big = (b"RIFX" + struct.pack(">I", 36 + len(pcm)) + b"WAVEfmt " + struct.pack(">I", 16)
           + struct.pack(">HHIIHH", 1, 1, 8000, 16000, 2, 16) + b"data"
           + struct.pack(">I", len(pcm)) + x.astype(">i2").tobytes())
    assert np.array_equal(read_wave(reader(big), "x").samples[0], x)
    stream = (b"RIFF" + struct.pack("<I", 0) + b"WAVEfmt " + struct.pack("<I", 16) + fmt
              + b"data" + struct.pack("<I", 0) + pcm)  # sizes 0: read to the end
    assert np.array_equal(read_wave(reader(stream), "x").samples[0], x)
    with pytest.raises(FormatError, match="truncated wave data"):
        read_wave(reader(riff[:-3]), "x")
    with pytest.raises(FormatError, match="bits per sample 8"):
        read_wave(reader(riff.replace(fmt, struct.pack("<HHIIHH", 1, 1, 8000, 8000, 1, 8))), "x")
    with pytest.raises(FormatError, match="binary Kaldi object"):
        read_wave(reader(b"\0BFM " + bytes(20)), "x")


def test_wave_archive_and_script(tmp_path):
    audios = {k: Audio(dummy_samples(n, i)[None, :].astype(np.float32), 8000.0)
              for i, (k, n) in enumerate([("a", 900), ("b", 1234)])}
    ark, scp = tmp_path / "w.ark", tmp_path / "w.scp"
    with WaveWriter(f"ark,scp:{ark},{scp}") as w:
        for k, a in audios.items():
            w.write(k, a)
    assert ark.read_bytes().startswith(b"a RIFF")
    for rspec in (f"ark:{ark}", f"scp:{scp}"):
        got = {e.key: e.load() for e in iter_wave_table(rspec)}
        assert list(got) == ["a", "b"]
        for k in got:
            np.testing.assert_array_equal(got[k].samples, audios[k].samples)
    offset = scp.read_text().split()[3]
    assert np.array_equal(read_audio(offset).samples, audios["b"].samples)
    with pytest.raises(UsageError, match="binary mode"):
        WaveWriter(f"ark,t:{tmp_path / 'x.ark'}")


def run_extract(tmp_path, wav_scp: str, segments: str, **opts):
    (tmp_path / "wav.scp").write_text(wav_scp)
    (tmp_path / "segments").write_text(segments)
    ark = tmp_path / "seg.ark"
    done = extract_segments(f"scp,p:{tmp_path / 'wav.scp'}", str(tmp_path / "segments"),
                            f"ark:{ark}", SegmentOptions(**opts))
    return done, {e.key: e.load().samples for e in iter_wave_table(f"ark:{ark}")}


def test_extract_segments_follows_kaldi(tmp_path, caplog):
    rec = write_wav(tmp_path / "r.wav", 3 * 8000, seed=4, rate=8000)
    lines = ["ok r 0.5 1.25",               # [4000, 10000)
             "round r 2.03 2.5",             # 2.03 * 8000 = 16239.99..: rounds to 16240
             "tail r 2.5 -1",                # to the end
             "over r 2.8 3.3",               # 0.3 s past the end: truncated
             "far r 2.9 3.6",                # 0.6 s past: rejected
             "short r 1.0 1.05",             # < 0.1 s
             "late r 3.2 -1",                # starts after the end
             "nochan r 0.1 0.5 1",           # channel 1 of a mono recording
             "chan0 r 0.1 0.5 0",
             "bad r x 1", "neg r 1.0 0.5", "badchan r 0 1 -1", "three r 1",
             "lost missing 0 1", "gone unreadable 0 1"]
    scp = f"r {tmp_path / 'r.wav'}\nunreadable {tmp_path / 'nothing.wav'}\n"
    with caplog.at_level(logging.WARNING):
        (done, total), out = run_extract(tmp_path, scp, "\n".join(lines) + "\n")
    assert (done, total) == (5, len(lines))
    assert list(out) == ["ok", "round", "tail", "over", "chan0"]
    spans = {"ok": (4000, 10000), "round": (16240, 20000), "tail": (20000, 24000),
             "over": (22400, 24000), "chan0": (800, 4000)}
    for k, (b, e) in spans.items():
        np.testing.assert_array_equal(out[k][0], rec[b:e], err_msg=k)
    for text in ("too far out of file data range [0,3s]; skipping segment 'far r 2.9 3.6'",
                 "Segment short too short", "out of file data range [0, 3s]",
                 "Invalid channel 1 >= 1. Skipping segment nochan", "[bad start]: bad r x 1",
                 "[empty or invalid segment]: neg", "[bad channel]: badchan",
                 "Invalid line in segments file: three r 1",
                 "Could not find recording missing, skipping segment lost",
                 "Could not find recording unreadable, skipping segment gone"):
        assert text in caplog.text, text
    (done, _), out = run_extract(tmp_path, scp, "short r 1.0 1.05\nfar r 2.9 3.6\n",
                                 min_segment_length=0.04, max_overshoot=0.7)
    assert list(out) == ["short", "far"] and out["far"].shape == (1, 800)


def test_multichannel_recording_needs_channel_field(tmp_path):
    rec = write_wav(tmp_path / "st.wav", 8000, seed=5, rate=8000, channels=2)
    scp = f"st {tmp_path / 'st.wav'}\n"
    _, out = run_extract(tmp_path, scp, "right st 0.25 0.5 1\n")
    np.testing.assert_array_equal(out["right"][0], rec[2000:4000, 1])
    with pytest.raises(SegmentsError, match="st has 2 channels.*Processing segment both"):
        run_extract(tmp_path, scp, "both st 0.25 0.5\n")


def test_segment_features_equal_features_of_cut_wavs(tmp_path):
    """Features through segments + a wave archive equal those of WAVs cut to the same spans."""
    recs = {"ra": write_wav(tmp_path / "ra.wav", 40000, seed=6),
            "rb": write_wav(tmp_path / "rb.wav", 30000, seed=7)}
    segs = [("ra-1", "ra", 0.13, 0.91), ("ra-2", "ra", 1.0, 2.5), ("rb-1", "rb", 0.0, -1)]
    (tmp_path / "wav.scp").write_text("".join(f"{r} {tmp_path / r}.wav\n" for r in recs))
    (tmp_path / "segments").write_text("".join(f"{u} {r} {b} {e}\n" for u, r, b, e in segs))
    extract_segments(f"scp:{tmp_path / 'wav.scp'}", str(tmp_path / "segments"),
                     f"ark:{tmp_path / 'seg.ark'}")
    config = read_feature_config("mfcc", MFCC_CONF)
    compute_feats_table(config, f"ark:{tmp_path / 'seg.ark'}", f"ark:{tmp_path / 'a.ark'}")
    cut = []
    for u, r, b, e in segs:
        x = recs[r][int(b * 16000 + 0.5):len(recs[r]) if e < 0 else int(e * 16000 + 0.5)]
        sf.write(str(tmp_path / f"{u}.wav"), x, 16000, subtype="PCM_16")
        cut.append(f"{u} {tmp_path / u}.wav\n")
    (tmp_path / "cut.scp").write_text("".join(cut))
    compute_feats_table(config, f"scp:{tmp_path / 'cut.scp'}", f"ark:{tmp_path / 'b.ark'}")
    with SequentialReader(f"ark:{tmp_path / 'a.ark'}") as ra, \
            SequentialReader(f"ark:{tmp_path / 'b.ark'}") as rb:
        a, b = dict(ra), dict(rb)
    assert list(a) == list(b) == ["ra-1", "ra-2", "rb-1"]
    assert [a[k].shape[0] for k in a] == [1 + (12480 - 400) // 160, 1 + (24000 - 400) // 160,
                                          1 + (30000 - 400) // 160]
    for k in a:
        np.testing.assert_array_equal(a[k], b[k])


def test_bin_tools(tmp_path, capsys):
    write_wav(tmp_path / "r.wav", 16000, seed=8)
    (tmp_path / "wav.scp").write_text(f"r {tmp_path / 'r.wav'}\n")
    (tmp_path / "segments").write_text("u1 r 0.1 0.6\nu2 r 0.5 0.55\n")
    es = load_bin("extract-segments.py")
    assert es.main([f"scp:{tmp_path / 'wav.scp'}", str(tmp_path / "segments")]) == 1
    assert "Usage:  extract-segments.py" in capsys.readouterr().err
    ark = tmp_path / "s.ark"
    assert es.main([f"scp:{tmp_path / 'wav.scp'}", str(tmp_path / "segments"), f"ark:{ark}"]) == 0
    err = capsys.readouterr().err
    assert "Successfully processed 1 lines out of 2 in the segments file." in err
    assert "WARNING" in err and "Segment u2 too short" in err
    mfcc = load_bin("compute-mfcc-feats.py")
    assert mfcc.main([f"--config={MFCC_CONF}", f"ark:{ark}", f"ark,t:{tmp_path / 'f.txt'}"]) == 0
    assert "Done 1 out of 1 utterances." in capsys.readouterr().err
    dur = load_bin("wav-to-duration.py")
    assert dur.main([f"ark:{ark}", f"ark,t:{tmp_path / 'd'}"]) == 0
    assert (tmp_path / "d").read_text() == "u1 0.5\n"
    assert "Printed duration for 1 audio files." in capsys.readouterr().err


NEEDED = ["utils/run.py", "utils/parse_options.sh", "utils/split_data.sh",
          "utils/validate_data_dir.sh"]


@pytest.mark.skipif(not all((ROOT / f).exists() for f in NEEDED),
                    reason="utils/ job and data-dir scripts not present")
def test_make_mfcc_with_segments_switchboard_style(tmp_path):
    """Two 2-channel mu-law SPHERE calls, wav.scp as Kaldi's swbd recipe writes it (no sph2pipe
    binary on PATH), a segments file: make_mfcc.sh equals features of the G.711-decoded spans."""
    rng = np.random.default_rng(9)
    table = np.array([g711_ulaw(c) for c in range(256)], dtype=np.float32)
    recipe = tmp_path / "s5"
    (recipe / "data" / "train").mkdir(parents=True)
    for d in ("steps", "utils"):
        os.symlink(ROOT / d, recipe / d)
    (recipe / "conf").mkdir()
    (recipe / "conf" / "mfcc.conf").write_text(MFCC_CONF.read_text() + "--sample-frequency=8000\n")
    calls = {"sw02001": 4 * 8000 + 3, "sw02005": 3 * 8000}
    wav_scp, segments, utt2spk, decoded = [], [], [], {}
    for call, n in calls.items():
        codes = rng.integers(0, 256, (n, 2)).astype(np.uint8)
        path = write_sphere(tmp_path / f"{call}.sph", codes, coding="ulaw")
        for c, side in ((1, "A"), (2, "B")):
            reco = f"{call}-{side}"
            wav_scp.append(f"{reco} sph2pipe -f wav -p -c {c} {path} |")
            decoded[reco] = table[codes[:, c - 1]]
            for b, e in ((0.2, 1.1), (1.5, 2.95)):
                utt = f"{reco}_{int(b * 100):06d}-{int(e * 100):06d}"
                segments.append(f"{utt} {reco} {b} {e}")
                utt2spk.append(f"{utt} {reco}")
    data = recipe / "data" / "train"
    (data / "wav.scp").write_text("\n".join(wav_scp) + "\n")
    (data / "segments").write_text("\n".join(segments) + "\n")
    (data / "utt2spk").write_text("\n".join(utt2spk) + "\n")
    spk2utt = {}
    for line in utt2spk:
        spk2utt.setdefault(line.split()[1], []).append(line.split()[0])
    (data / "spk2utt").write_text("".join(f"{s} {' '.join(u)}\n" for s, u in spk2utt.items()))
    env = script_env()
    env["PATH"] = path_without_sph2pipe(env["PATH"])
    cmd = [str(recipe / "steps" / "make_mfcc.sh"), "--nj", "2", "data/train", "exp/mfcc", "mfcc"]
    p = subprocess.run(cmd, cwd=recipe, env=env, text=True, capture_output=True)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "segments file exists: using that" in p.stdout
    log = (recipe / "exp/mfcc/make_mfcc_train.1.log").read_text()
    assert "extract-segments.py scp,p:data/train/wav.scp" in log
    assert "Successfully processed 4 lines out of 4" in log and "Done 4 out of 4" in log
    with SequentialReader(f"scp:{data / 'feats.scp'}") as r:
        feats = dict(r)
    assert list(feats) == sorted(u.split()[0] for u in segments)
    extractor = Extractor(read_feature_config("mfcc", recipe / "conf" / "mfcc.conf"))
    durations = {}
    for line in segments:
        utt, reco, b, e = line.split()
        x = decoded[reco][int(float(b) * 8000 + 0.5):int(float(e) * 8000 + 0.5)]
        durations[utt] = len(x) / 8000
        np.testing.assert_array_equal(feats[utt], extractor.compute(x, 8000), err_msg=utt)
    assert (data / "utt2num_frames").read_text() == "".join(
        f"{u} {feats[u].shape[0]}\n" for u in feats)
    assert (data / "utt2dur").read_text() == "".join(f"{u} {durations[u]:g}\n" for u in feats)
    p = subprocess.run(cmd, cwd=recipe, env=env, text=True, capture_output=True)
    assert p.returncode == 0 and "skipping" in p.stdout
    (data / "feats.scp").unlink()
    (recipe / "conf" / "fbank.conf").write_text("--dither=0\n--sample-frequency=8000\n")
    p = subprocess.run([str(recipe / "steps" / "make_fbank.sh"), "--nj", "1", "data/train"],
                       cwd=recipe, env=env, text=True, capture_output=True)
    assert p.returncode == 0, p.stdout + p.stderr
    with SequentialReader(f"scp:{data / 'feats.scp'}") as r:
        assert {k: v.shape for k, v in r} == {k: (v.shape[0], 23) for k, v in feats.items()}
