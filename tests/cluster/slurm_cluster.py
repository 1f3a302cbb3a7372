"""A real one-node Slurm (munged, slurmctld, slurmd) in a temporary directory, for the tests.

Debian's slurm-wlm and munge (installed through utils/install_debian_deps.sh when missing) are
started by hand, as root, with every file under one directory: a munge key and socket of their
own, a slurm.conf for this host (its name, CPUs and memory as ``slurmd -C`` reports them,
select/cons_tres, proctrack/linuxproc, no cgroups, no accounting database), free ports, and
state, spool, pid and log files. Client commands find it through ``SLURM_CONF``, so a Slurm the
machine may already run is left alone. Nothing here imports nnetmix.

The partition lets up to 4 jobs share a core (OverSubscribe=FORCE:4): a recipe nests jobs (the
DNN scheduler is a job that submits each epoch as a 2-task MPI job), which on a 2-core node
would otherwise wait for each other for ever; a real cluster has the cores.
"""
from __future__ import annotations

import atexit
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

PACKAGES = ("slurm-wlm", "munge")
BINARIES = ("munged", "munge", "slurmctld", "slurmd", "sbatch", "squeue", "sinfo", "scancel")


class SlurmUnavailable(Exception):
    """Why a one-node Slurm cannot run here (the message says what failed)."""


def install(root: Path) -> None:
    """Install slurm-wlm and munge from Debian when a binary is missing."""
    if all(shutil.which(b) for b in BINARIES):
        return
    p = subprocess.run([str(root / "utils" / "install_debian_deps.sh"), *PACKAGES],
                       capture_output=True, text=True)
    if p.returncode != 0 or not all(shutil.which(b) for b in BINARIES):
        raise SlurmUnavailable(f"could not install {' '.join(PACKAGES)}: "
                               f"{(p.stdout + p.stderr).strip()[-500:]}")


def _die_with_parent() -> None:
    """In the child: get SIGTERM when the test process dies, even by a signal (atexit then
    does not run), so that no daemon outlives the tests (Linux prctl PR_SET_PDEATHSIG)."""
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)
    except (OSError, AttributeError):
        pass


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _node_line(host: str) -> str:
    """This machine as Slurm sees it (``slurmd -C``), else its name and CPU count."""
    p = subprocess.run(["slurmd", "-C"], capture_output=True, text=True)
    first = p.stdout.splitlines()[0] if p.returncode == 0 and p.stdout else ""
    if first.startswith("NodeName="):
        return " ".join([f"NodeName={host}"] + first.split()[1:])
    return f"NodeName={host} CPUs={os.cpu_count() or 1}"


class SlurmCluster:
    """Start with :meth:`start`, point clients at it with :meth:`env`, end with :meth:`stop`."""

    def __init__(self):
        # munged wants every directory on its socket's path searchable by all, so not pytest's
        # 0700 tmp_path
        self.dir = Path(tempfile.mkdtemp(prefix="nnetmix-slurm-"))
        self.dir.chmod(0o755)
        self.conf = self.dir / "slurm.conf"
        self.host = socket.gethostname().split(".")[0]
        self.procs: dict[str, subprocess.Popen] = {}

    def env(self, base: dict | None = None) -> dict:
        env = dict(os.environ if base is None else base)
        env["SLURM_CONF"] = str(self.conf)
        return env

    def _spawn(self, name: str, argv: list[str]) -> None:
        log = open(self.dir / f"{name}.out", "w")
        self.procs[name] = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log,
                                            stderr=subprocess.STDOUT, start_new_session=True,
                                            env=self.env(), preexec_fn=_die_with_parent)
        log.close()

    def _tail(self, name: str) -> str:
        text = ""
        for f in (self.dir / f"{name}.out", self.dir / f"{name}.log"):
            if f.exists():
                text += f.read_text(errors="replace")
        return " | ".join(text.strip().splitlines()[-5:])

    def _check_alive(self) -> None:
        for name, p in self.procs.items():
            if p.poll() is not None:
                raise SlurmUnavailable(f"{name} exited with status {p.returncode}: "
                                       f"{self._tail(name)}")

    def write_config(self) -> None:
        d = self.dir
        for sub in ("munge", "state", "spool"):
            (d / sub).mkdir(exist_ok=True)
        (d / "munge").chmod(0o755)
        self.conf.write_text(f"""\
# one-node Slurm for the nnetmix tests (tests/cluster/slurm_cluster.py)
ClusterName=nnetmixtest
SlurmctldHost={self.host}(127.0.0.1)
SlurmctldPort={_free_port()}
SlurmdPort={_free_port()}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={d}/munge/munge.socket
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/slurmctld.log
SlurmdLogFile={d}/slurmd.log
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0
ReturnToService=2
KillWait=5
MinJobAge=300
{_node_line(self.host)} NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE OverSubscribe=FORCE:4 State=UP
""")
        key = d / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)

    def start(self, timeout: float = 60.0) -> None:
        """Start munged, slurmctld and slurmd; return once ``sinfo`` shows the node idle."""
        if os.geteuid() != 0:
            raise SlurmUnavailable("the Slurm daemons need root (slurmd starts jobs as their user)")
        self.write_config()
        m = self.dir / "munge"
        self._spawn("munged", ["munged", "-F", f"--key-file={m}/munge.key",
                               f"--socket={m}/munge.socket", f"--pid-file={m}/munged.pid",
                               f"--log-file={self.dir}/munged.log", f"--seed-file={m}/seed"])
        deadline = time.monotonic() + timeout
        while not (m / "munge.socket").exists():
            self._check_alive()
            if time.monotonic() > deadline:
                raise SlurmUnavailable(f"munged made no socket: {self._tail('munged')}")
            time.sleep(0.1)
        self._spawn("slurmctld", ["slurmctld", "-D", "-i", "-f", str(self.conf)])
        self._spawn("slurmd", ["slurmd", "-D", "-f", str(self.conf), "-N", self.host])
        state = ""
        while state != "idle":
            self._check_alive()
            if time.monotonic() > deadline:
                raise SlurmUnavailable(f"node not idle after {timeout:.0f} s (sinfo: {state!r}); "
                                       f"slurmctld: {self._tail('slurmctld')}; "
                                       f"slurmd: {self._tail('slurmd')}")
            time.sleep(0.3)
            p = subprocess.run(["sinfo", "-h", "-N", "-o", "%T"], capture_output=True,
                               text=True, env=self.env())
            state = p.stdout.strip()

    def stop(self) -> None:
        """Cancel every job, stop the daemons we started, remove the directory."""
        if "slurmctld" in self.procs and self.procs["slurmctld"].poll() is None:
            subprocess.run(["scancel", "--full", "-u", "root"], capture_output=True,
                           env=self.env(), timeout=30)
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline:
                p = subprocess.run(["squeue", "-h"], capture_output=True, text=True,
                                   env=self.env(), timeout=30)
                if p.returncode != 0 or not p.stdout.strip():
                    break
                time.sleep(0.3)
        for name in ("slurmd", "slurmctld", "munged"):
            p = self.procs.pop(name, None)
            if p is None or p.poll() is not None:
                continue
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


_SHARED: dict = {}


def shared_cluster(root: Path) -> SlurmCluster:
    """One cluster for the whole test process: started on first use (installing the packages
    when missing), stopped at exit. Raises SlurmUnavailable, the same reason on every call."""
    if "error" in _SHARED:
        raise _SHARED["error"]
    if "cluster" not in _SHARED:
        cluster = None
        try:
            install(root)
            cluster = SlurmCluster()
            cluster.start()
        except (SlurmUnavailable, OSError) as e:
            if cluster is not None:
                cluster.stop()
            _SHARED["error"] = e if isinstance(e, SlurmUnavailable) else SlurmUnavailable(str(e))
            raise _SHARED["error"] from None
        atexit.register(cluster.stop)
        _SHARED["cluster"] = cluster
    return _SHARED["cluster"]
