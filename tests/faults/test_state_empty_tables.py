"""A table tool that did nothing (copy-feats.py on an empty archive, compute-mfcc-feats.py on
only unreadable wavs) exits 1 with one ERROR line and leaves no output file; Kaldi exits 1 too
but leaves an empty archive a later step reads as a data set of no utterances. A pipe output
still gets a clean, empty stream (align_si.sh accepts a job that aligned nothing)."""
from __future__ import annotations

import gzip

from helpers import load_bin


def _one_error(rc: int, err: str, what: str) -> str:
    errors = [ln for ln in err.splitlines() if ln.startswith("ERROR")]
    assert rc == 1 and len(errors) == 1 and "Traceback" not in err, err
    assert what in errors[0], errors[0]
    return errors[0]


def test_copy_feats_of_an_empty_archive(tmp_path, capsys):
    (tmp_path / "empty.ark").write_bytes(b"")
    for out in (f"ark:{tmp_path}/o.ark", f"ark,scp:{tmp_path}/o.ark,{tmp_path}/o.scp"):
        rc = load_bin("copy-feats.py").main([f"ark:{tmp_path}/empty.ark", out])
        err = capsys.readouterr().err
        line = _one_error(rc, err, f"{out}: nothing to write (no item was done), so no output "
                                   "was made")
        assert "Copied 0 feature matrices." in err.split(line)[0]     # Kaldi's LOG line first
        assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.ark"]


def test_compute_mfcc_feats_of_bad_wavs_only(tmp_path, capsys):
    (tmp_path / "bad.wav").write_bytes(b"RIFF\x00\x00")
    (tmp_path / "wav.scp").write_text(f"a {tmp_path}/missing.wav\nb {tmp_path}/bad.wav\n")
    out = f"ark,scp:{tmp_path}/raw.ark,{tmp_path}/raw.scp"
    rc = load_bin("compute-mfcc-feats.py").main([f"scp:{tmp_path}/wav.scp", out])
    err = capsys.readouterr().err
    _one_error(rc, err, f"scp:{tmp_path}/wav.scp: none of its 2 utterances could be read")
    assert "Done 0 out of 2 utterances." in err
    assert err.count("WARNING") == 2                                  # one per key, as Kaldi
    assert not (tmp_path / "raw.ark").exists() and not (tmp_path / "raw.scp").exists()


def test_an_empty_pipe_output_is_a_valid_empty_stream(tmp_path, capsys):
    (tmp_path / "empty.ark").write_bytes(b"")
    rc = load_bin("copy-feats.py").main([f"ark:{tmp_path}/empty.ark",
                                         f"ark:| gzip -c > {tmp_path}/o.ark.gz"])
    assert rc == 1 and "Copied 0 feature matrices." in capsys.readouterr().err
    assert gzip.decompress((tmp_path / "o.ark.gz").read_bytes()) == b""
