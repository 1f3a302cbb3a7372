"""``sph2pipe ... file.sph |`` entries of wav.scp, served in process.

Kaldi's Switchboard, Fisher and Callhome recipes write wav.scp lines such as
``sw02001-A /opt/kaldi/tools/sph2pipe_v2.5/sph2pipe -f wav -p -c 1 /data/sw02001.sph |``.
Such an entry is recognised when it is one plain command (no other pipe, redirection, variable
or glob) whose program is named ``sph2pipe`` (any directory) and whose options are those LDC's
sph2pipe 2.5 parses with getopt ``daupf:c:t:s:h:``. We serve it from our own SPHERE reader
(sphere.py) with sph2pipe's semantics (sph2pipe.c, doConversion):

* ``-c 1|2`` picks the first or second channel; on a 1-channel file it is ignored, as there;
* ``-t b:e`` (seconds) and ``-s b:e`` (samples) cut the output: start ``int(b * rate)``,
  end ``int(e * rate)``, an empty or too large end meaning the end of the file, a start past
  the end an error;
* ``-f wav`` (or ``rif``) and ``-f sph`` and no ``-f`` are served; ``-p`` (16-bit output)
  changes nothing here, since we return the decoded 16-bit values either way.

The in-process path is used even when an sph2pipe binary exists: it gives the same integers
(tests compare with the binary when one is on PATH), takes about as long (some 50 ms per
5-minute Switchboard side either way), and so a recipe behaves the same on machines with and
without the binary. Shorten-compressed files do go to a binary (we have no shorten decoder):
the command's own program if it exists, else ``sph2pipe`` from PATH; without either they are a
one-line error. (A standalone ``shorten`` program is not used: its output for SPHERE's embedded
streams could not be checked here.)
Entries we do not recognise (``-f raw|au|aif``, ``-u``, ``-a``, ``-h hdr``, an output file,
``sph2pipe ... | sox ... |``) are run by the shell as any other ``command |`` entry.
"""
from __future__ import annotations

import getopt
import os
import shlex
import shutil
import subprocess
from dataclasses import dataclass

from nnetmix.feat.audio import Audio, AudioReadError, read_soundfile
from nnetmix.feat.sphere import SphereFile

__all__ = ["Sph2pipeCommand", "parse_sph2pipe", "serve_sph2pipe", "run_sph2pipe", "sph2pipe_span"]

_SHELL_CHARS = set("$`*?~")
_OPERATORS = set("();<>|&")


@dataclass(frozen=True)
class Sph2pipeCommand:
    """One ``sph2pipe [options] file.sph`` call that writes to stdout."""

    text: str                                    #: the command as written
    program: str                                 #: argv[0] as written (a name or a path)
    path: str                                    #: the input SPHERE file
    channel: int | None = None                   #: 0-based, from -c 1|2; None: all channels
    seconds: tuple[float, float] = (0.0, 0.0)    #: -t b:e (0 = not given, as in sph2pipe)
    samples: tuple[int, int] = (0, 0)            #: -s b:e (0 = not given)
    options: tuple[str, ...] = ()                #: the options, to hand to a binary unchanged


def _span(arg: str, flag: str, kind: type, text: str):
    if ":" not in arg:
        raise AudioReadError(f"'{text}': invalid arg for -{flag} -- missing ':' (expected b:e)")
    parts = arg.split(":", 1)
    try:
        b, e = (kind(p) if p else kind(0) for p in parts)
    except ValueError:
        raise AudioReadError(f"'{text}': invalid arg '{arg}' for -{flag}") from None
    if b < 0 or e < 0:
        raise AudioReadError(f"'{text}': negative time in -{flag} {arg}")
    if b > 0 and e > 0 and b >= e:
        raise AudioReadError(f"'{text}': -{flag} {arg}: start >= end")
    return b, e


def parse_sph2pipe(command: str) -> Sph2pipeCommand | None:
    """The sph2pipe call in ``command`` (a wav.scp pipe without its ``|``), or None when
    ``command`` is not one we serve in process (the shell then runs it)."""
    text = command.strip()
    if not text or _SHELL_CHARS & set(text):
        return None
    try:
        lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        words = list(lexer)
    except ValueError:
        return None
    if not words or any(w and set(w) <= _OPERATORS for w in words):
        return None
    if os.path.basename(words[0]) != "sph2pipe":
        return None
    try:
        opts, files = getopt.gnu_getopt(words[1:], "daupf:c:t:s:h:")
    except getopt.GetoptError as e:
        raise AudioReadError(f"'{text}': sph2pipe option error: {e}") from None
    if len(files) != 1:
        return None  # no input or an output file: nothing for us to read from stdout
    channel, seconds, samples, kept = None, (0.0, 0.0), (0, 0), []
    for flag, arg in opts:
        if flag in ("-u", "-a", "-h"):
            return None
        if flag == "-f":
            head = arg[:3].lower()
            if head not in ("wav", "rif", "sph"):
                return None
        elif flag == "-c":
            if arg not in ("1", "2"):
                raise AudioReadError(f"'{text}': -c takes 1 or 2, got '{arg}'")
            channel = int(arg) - 1
        elif flag == "-t":
            seconds = _span(arg, "t", float, text)
        elif flag == "-s":
            samples = _span(arg, "s", int, text)
        if flag != "-d":
            kept += [flag, arg] if arg else [flag]
    return Sph2pipeCommand(text=text, program=words[0], path=files[0], channel=channel,
                           seconds=seconds, samples=samples, options=tuple(kept))


def sph2pipe_span(cmd: Sph2pipeCommand, num_samples: int, rate: int) -> tuple[int, int]:
    """The samples [start, stop) sph2pipe writes for ``cmd`` (doConversion's arithmetic)."""
    bgnsec, endsec = cmd.seconds
    bgnsamp, endsamp = cmd.samples
    totalsec = num_samples / rate
    if bgnsec > totalsec or bgnsamp > num_samples:
        raise AudioReadError(f"'{cmd.text}': start point > length of {cmd.path} "
                             f"({num_samples} samples, {totalsec:g} s)")
    start = bgnsamp if bgnsamp else int(bgnsec * rate)
    if endsamp > num_samples or endsec >= totalsec or endsamp + endsec == 0:
        stop = num_samples
    else:
        stop = endsamp if endsamp > 0 else int(endsec * rate)
    stop = min(stop, num_samples)
    if stop < start:
        raise AudioReadError(f"'{cmd.text}': the range selects no samples of {cmd.path}")
    return start, stop


def run_sph2pipe(program: str | None, options: tuple[str, ...], path: str,
                 where: str) -> Audio | None:
    """Run an sph2pipe binary (``program`` if it can be found, else ``sph2pipe`` on PATH) and
    decode its output; None when there is none (the caller raises its own error)."""
    exe = (shutil.which(program) if program else None) or shutil.which("sph2pipe")
    if exe is None:
        return None
    argv = [exe, *options, path]
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if proc.returncode != 0:
        err = proc.stderr.decode(errors="replace").strip().splitlines()
        raise AudioReadError(f"{shlex.join(argv)} failed with status {proc.returncode}"
                             + (f": {err[-1]}" if err else ""))
    return read_soundfile(proc.stdout, f"output of '{shlex.join(argv)}' for {where}")


def serve_sph2pipe(cmd: Sph2pipeCommand) -> Audio:
    """What Kaldi would read from ``cmd |``: its samples, decoded in process where possible."""
    if not os.path.isfile(cmd.path):
        raise AudioReadError(f"'{cmd.text}': no such file {cmd.path}")
    sph = SphereFile(cmd.path)
    h = sph.header
    if cmd.channel is not None and h.channel_count > 2:
        raise AudioReadError(f"'{cmd.text}': -c works on 2-channel files; {cmd.path} has "
                             f"{h.channel_count} channels")
    if h.shorten:
        audio = run_sph2pipe(cmd.program, cmd.options, cmd.path, cmd.path)
        if audio is None:
            raise sph.shorten_error()
        return audio
    start, stop = sph2pipe_span(cmd, sph.num_samples, h.sample_rate)
    channel = cmd.channel if h.channel_count > 1 else None
    return sph.read(start, stop, channel)
