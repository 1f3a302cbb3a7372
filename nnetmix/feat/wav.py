"""Reading one wav.scp entry (an rxfilename) into samples on Kaldi's integer scale.

An entry is, as in Kaldi's wav.scp:

* a file: WAV/FLAC/... through soundfile (see audio.py for the integer scale); a NIST SPHERE
  file (``NIST_1A`` at its start) through sphere.py when it has one channel, and an error
  naming the file when it has two (write the entry as ``sph2pipe -f wav -p -c 1 f.sph |``:
  Kaldi cannot read SPHERE at all, and a silent choice of channel would be a bad guess);
* ``archive:offset``, the form ``extract-segments ... ark,scp:a.ark,a.scp`` writes: the Kaldi
  wave object at that byte (riff.py);
* ``-``: standard input;
* ``command |``: an ``sph2pipe ... f.sph |`` command is served in process (sph2pipe.py), so
  Kaldi's Switchboard-style wav.scp needs no sph2pipe binary; any other command runs through
  the shell and its output is decoded like a file (SPHERE output included, all channels).
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from nnetmix.errors import FormatError
from nnetmix.feat.audio import Audio, AudioReadError, SampleRateError, read_soundfile
from nnetmix.feat.riff import read_wave
from nnetmix.feat.sph2pipe import parse_sph2pipe, run_sph2pipe, serve_sph2pipe
from nnetmix.feat.sphere import SphereFile, is_sphere

__all__ = ["AudioReadError", "SampleRateError", "Audio", "read_audio"]

_OFFSET = re.compile(r"^(.*):([0-9]+)$")


def _run(cmd: str) -> bytes:
    proc = subprocess.run(cmd, shell=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if proc.returncode != 0:
        err = proc.stderr.decode(errors="replace").strip().splitlines()
        tail = f": {err[-1]}" if err else ""
        raise AudioReadError(f"command '{cmd.strip()}' failed with status "
                             f"{proc.returncode}{tail}")
    return proc.stdout


def _decode(data: bytes, where: str) -> Audio:
    if is_sphere(data):
        sph = SphereFile(data, where)
        return sph.read()
    return read_soundfile(data, where)


def _read_sphere_file(path: str) -> Audio:
    sph = SphereFile(path)
    channels = sph.header.channel_count
    if channels != 1:
        raise AudioReadError(f"{path}: SPHERE file with {channels} channels named directly in "
                             f"wav.scp (write the entry as 'sph2pipe -f wav -p -c 1 {path} |', "
                             "-c 2 for the second channel)")
    if sph.header.shorten:
        audio = run_sph2pipe(None, ("-f", "wav", "-p"), path, path)
        if audio is None:
            raise sph.shorten_error()
        return audio
    return sph.read()


def _read_offset(path: str, offset: int, rx: str) -> Audio:
    try:
        with open(path, "rb") as fh:
            fh.seek(offset)
            return read_wave(fh.read, rx)
    except OSError as e:
        raise AudioReadError(f"cannot read {rx}: {e.strerror}") from None
    except FormatError as e:
        raise AudioReadError(str(e)) from None


def read_audio(rxfilename: str) -> Audio:
    """Read a whole recording; raise AudioReadError on anything that cannot be decoded."""
    rx = rxfilename.strip()
    if rx.endswith("|"):
        cmd = rx[:-1]
        served = parse_sph2pipe(cmd)
        if served is not None:
            return serve_sph2pipe(served)
        return _decode(_run(cmd), f"output of '{cmd.strip()}'")
    if rx == "-":
        return _decode(sys.stdin.buffer.read(), "standard input")
    if not Path(rx).is_file():
        m = _OFFSET.match(rx)
        if m and Path(m.group(1)).is_file():
            return _read_offset(m.group(1), int(m.group(2)), rx)
        raise AudioReadError(f"no such file {rx}")
    try:
        with open(rx, "rb") as fh:
            head = fh.read(len(b"NIST_1A"))
    except OSError as e:
        raise AudioReadError(f"cannot read {rx}: {e.strerror}") from None
    if is_sphere(head):
        return _read_sphere_file(rx)
    return read_soundfile(rx, rx)
