"""Tables of recordings: Kaldi's TableReader/TableWriter<WaveHolder> for wav rspecifiers.

``scp:wav.scp`` lists rxfilenames (each read by wav.py's read_audio); ``ark:f``/``ark:-`` hold
Kaldi wave objects after each ``key `` (riff.py), as extract-segments writes them and
compute-mfcc-feats reads them. nnetmix.kaldi's tables hold matrices, vectors and posteriors;
wave objects have no ``\\0B`` marker and a layout of their own, so their table code lives here,
on nnetmix.kaldi's specifier parsing and byte streams.

Kaldi's semantics kept: an scp entry is read only when its value is asked for, so a bad entry
is that key's problem (the caller warns and skips it); a damaged archive is an error; with
``scp,p:`` a random-access lookup of an unreadable entry counts as a missing key (warned about);
archives are binary only ("Wave data can only be written in binary mode").
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Iterator, Optional

from nnetmix.errors import FormatError, UsageError
from nnetmix.feat.audio import Audio, AudioReadError
from nnetmix.feat.riff import encode_wave, read_wave
from nnetmix.feat.wav import read_audio
from nnetmix.kaldi.specifier import parse_rspecifier, parse_wspecifier
from nnetmix.kaldi.stream import InputStream, OutputSink, open_input, open_output
from nnetmix.kaldi.writer import ArkScpSinks

__all__ = ["WaveEntry", "iter_wave_table", "WaveRandomAccess", "WaveWriter", "copy_wave_table"]

logger = logging.getLogger(__name__)


@dataclass
class WaveEntry:
    """One key of a wave table; :meth:`load` reads it (scp) or returns it (archive)."""

    key: str
    rx: Optional[str] = None
    audio: Optional[Audio] = None

    def load(self) -> Audio:
        """The recording; AudioReadError when an scp entry cannot be read."""
        if self.audio is not None:
            return self.audio
        return read_audio(self.rx or "")


def _script_lines(src: InputStream) -> Iterator[tuple[str, str]]:
    lineno = 0
    while True:
        line = src.readline()
        if not line:
            return
        lineno += 1
        text = line.decode("utf-8", errors="surrogateescape").strip()
        if not text:
            continue
        parts = text.split(None, 1)
        if len(parts) != 2:
            raise FormatError(f"{src.name}:{lineno}: expected '<key> <rxfilename>', got "
                              f"'{text[:80]}'")
        yield parts[0], parts[1].strip()


def _archive_items(src: InputStream) -> Iterator[tuple[str, Audio]]:
    while True:
        word = src.read_word()
        if not word:
            return
        key = word.decode("utf-8", errors="surrogateescape")
        after = src.peek(1)
        if after in (b" ", b"\t"):
            src.read(1)
        elif not after:
            raise FormatError(f"{src.name}: truncated archive: key {key[:60]} is followed by "
                              "end of file, expected wave data")
        yield key, read_wave(src.read, f"{src.name} (key {key})")


def iter_wave_table(rspecifier: str) -> Iterator[WaveEntry]:
    """Entries of ``scp:``/``ark:`` wave table, in order (Kaldi's SequentialTableReader)."""
    spec = parse_rspecifier(rspecifier)
    src = open_input(spec.filename, rspecifier)
    ok = False
    try:
        if spec.type == "scp":
            for key, rx in _script_lines(src):
                yield WaveEntry(key, rx=rx)
        else:
            for key, audio in _archive_items(src):
                yield WaveEntry(key, audio=audio)
        ok = True
    finally:
        src.close(check=ok)


class WaveRandomAccess:
    """Recordings by key (Kaldi's RandomAccessTableReader<WaveHolder>); the last one is cached,
    so segments sorted by recording read each recording once."""

    def __init__(self, rspecifier: str):
        self.rspecifier = rspecifier
        self.spec = parse_rspecifier(rspecifier)
        self._rx: dict[str, str] = {}
        self._audio: dict[str, Audio] = {}
        self._last: Optional[tuple[str, Audio]] = None
        src = open_input(self.spec.filename, rspecifier)
        try:
            if self.spec.type == "scp":
                for key, rx in _script_lines(src):
                    if key in self._rx:
                        raise FormatError(f"{src.name}: duplicate key {key}")
                    self._rx[key] = rx
            else:
                for key, audio in _archive_items(src):
                    if key in self._audio:
                        raise FormatError(f"{src.name}: duplicate key {key} in archive")
                    self._audio[key] = audio
        except BaseException:
            src.close(check=False)
            raise
        src.close(check=True)

    def has_key(self, key: str) -> bool:
        """Listed (and, with ``scp,p:``, readable: a failure is warned about and means no)."""
        if key in self._audio:
            return True
        if key not in self._rx:
            return False
        if self.spec.permissive:
            try:
                self.value(key)
            except AudioReadError as e:
                logger.warning("%s: cannot read key %s (permissive): %s", self.rspecifier, key, e)
                return False
        return True

    def value(self, key: str) -> Audio:
        if key in self._audio:
            return self._audio[key]
        if self._last is not None and self._last[0] == key:
            return self._last[1]
        if key not in self._rx:
            raise AudioReadError(f"{self.rspecifier}: no entry for key {key}")
        audio = read_audio(self._rx[key])
        self._last = (key, audio)
        return audio


class WaveWriter(ArkScpSinks):
    """Writes recordings as Kaldi wave objects to ``ark:f``, ``ark:-`` or ``ark,scp:a,s``;
    a context manager (files appear under their names only on success)."""

    def __init__(self, wspecifier: str):
        self.wspecifier = wspecifier
        self.spec = parse_wspecifier(wspecifier)
        if self.spec.type == "scp":
            raise UsageError(f"{wspecifier}: wave data is written to an archive (ark:file or "
                             "ark,scp:file.ark,file.scp)")
        if not self.spec.binary:
            raise UsageError(f"{wspecifier}: Wave data can only be written in binary mode")
        self._ark: OutputSink = open_output(self.spec.ark or "", wspecifier)
        self._scp: Optional[OutputSink] = None
        if self.spec.type == "both":
            try:
                self._scp = open_output(self.spec.scp or "", wspecifier)
            except BaseException:
                self._ark.abort()
                raise
        self.closed = False

    def write(self, key: str, audio: Audio) -> None:
        if not key or any(c.isspace() for c in key):
            raise FormatError(f"{self.wspecifier}: invalid key {key!r}")
        data, clipped = encode_wave(audio, f"{self.wspecifier} (key {key})")
        if clipped:
            logger.warning("WARNING: clipped %d samples out of total %d. Reduce volume?",
                           clipped, audio.samples.size)
        name = key.encode("utf-8", errors="surrogateescape")
        self._ark.write(name + b" ")
        offset = self._ark.pos
        self._ark.write(data)
        if self._scp is not None:
            self._scp.write(name + f" {self.spec.ark}:{offset}\n".encode("utf-8",
                                                                        "surrogateescape"))
        if self.spec.flush:
            self._ark.flush()


def copy_wave_table(rspecifier: str, wspecifier: str) -> int:
    """Kaldi's wav-copy: every recording of a wave table written as a wave object (an scp's
    files, pipes and SPHERE entries become one archive); an entry that cannot be read stops the
    run, as Kaldi's sequential read does, and a table with no recording writes nothing."""
    done = 0
    with WaveWriter(wspecifier) as writer:
        for entry in iter_wave_table(rspecifier):
            try:
                audio = entry.load()
            except AudioReadError as e:
                raise AudioReadError(f"{rspecifier}: recording {entry.key}: {e}") from None
            writer.write(entry.key, audio)
            done += 1
        logger.info("Copied %d wave files", done)
        if not done:
            raise FormatError(f"{rspecifier}: no recording, so {wspecifier} is not written")
    return done
