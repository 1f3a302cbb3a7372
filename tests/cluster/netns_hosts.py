"""Two "hosts" on this machine for real multi-host MPI runs: Linux network namespaces made by
the test, joined by one veth pair, each rank started with its own hostname.

What it builds (as root; :class:`NetnsUnavailable` with the reason otherwise):

- namespaces ``nnetmix<pid>-<host>``, each with ``lo`` and one end of a veth pair renamed
  ``nm0``, addressed ``169.254.77.1/24`` and ``.2``: link-local addresses that exist only
  inside these namespaces (nothing else is ever addressed);
- ``/etc/netns/<namespace>/hosts`` naming both hosts (``ip netns exec`` mounts it over
  /etc/hosts inside the namespace), so Open MPI resolves ``--host`` names to those addresses;
- an rsh agent script (``--prtemca plm_ssh_agent``: PRRTE's launcher is ``plm/ssh``, and the
  Open MPI 4 name ``plm_rsh_agent`` is not read) that starts Open MPI's daemon on a host by
  ``ip netns exec <namespace> unshare --uts`` and ``hostname <host>`` instead of ssh.

:meth:`NetnsHosts.mpiexec` is the command line: mpiexec itself runs in the first host's
namespace under its hostname, ``--host a:N,b:N``, the out-of-band and MPI traffic over TCP on
the veth only (``oob_tcp_if_include``, ``btl tcp,self`` and ``btl_tcp_if_include``: no shared
memory transport, even between the ranks of one host). :meth:`NetnsHosts.close` (and the context
manager, so also on failure) kills what still runs in the namespaces and removes them, the veth
and the /etc/netns entries; namespaces left by a killed test run (their pid gone) are removed
the next time. Nothing here imports nnetmix.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

PACKAGES = ("iproute2", "util-linux")   #: what provides ip, unshare (utils/install_debian_deps.sh)
PREFIX = "nnetmix"
SUBNET = "169.254.77.0/24"
IFACE = "nm0"

AGENT = """#!/bin/sh
# rsh agent of tests/cluster/netns_hosts.py: "$1" is a host name, the rest the command line
# Open MPI would run there through ssh; it runs in that host's namespace under its hostname.
host=$1; shift
case "$host" in
{cases}
  *) echo "$0: unknown host $host" >&2; exit 255 ;;
esac
exec ip netns exec "$ns" unshare --uts sh -c 'hostname "$0" && exec sh -c "$1"' "$host" "$*"
"""


class NetnsUnavailable(Exception):
    """Namespaces cannot be made here (the reason is the message)."""


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], text=True, capture_output=True, check=check)


def _remove_stale() -> None:
    """Namespaces of earlier runs whose process is gone (a killed pytest)."""
    out = _ip("netns", "list", check=False).stdout
    for line in out.splitlines():
        name = line.split()[0] if line.split() else ""
        pid = name[len(PREFIX):].split("-")[0] if name.startswith(PREFIX) else ""
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            _kill_all(name)
            _ip("netns", "del", name, check=False)
            shutil.rmtree(f"/etc/netns/{name}", ignore_errors=True)


def _kill_all(ns: str) -> None:
    for pid in _ip("netns", "pids", ns, check=False).stdout.split():
        try:
            os.kill(int(pid), signal.SIGKILL)
        except (ProcessLookupError, ValueError):
            pass


class NetnsHosts:
    """Two namespace hosts (module docstring); use as a context manager."""

    def __init__(self, hosts: tuple[str, str] = ("hosta", "hostb")):
        if os.geteuid() != 0:
            raise NetnsUnavailable("not root: ip netns needs root")
        for tool in ("ip", "unshare", "hostname"):
            if shutil.which(tool) is None:
                raise NetnsUnavailable(f"no {tool} (Debian: {' '.join(PACKAGES)}; "
                                       "utils/install_debian_deps.sh)")
        self.hosts = hosts
        self.ns = {h: f"{PREFIX}{os.getpid()}-{h}" for h in hosts}
        self.addr = {h: f"169.254.77.{i + 1}" for i, h in enumerate(hosts)}
        self.dir = Path(tempfile.mkdtemp(prefix="nnetmix-netns-"))
        self.agent = self.dir / "netns-agent.sh"
        self._made: list[str] = []
        try:
            _remove_stale()
            self._build()
        except (subprocess.CalledProcessError, OSError) as e:
            err = getattr(e, "stderr", "") or str(e)
            self.close()
            raise NetnsUnavailable(f"could not make network namespaces: {err.strip()}") from e

    def _build(self) -> None:
        a, b = self.hosts
        for h in self.hosts:
            _ip("netns", "add", self.ns[h])
            self._made.append(self.ns[h])
        tmp = {h: f"nmx{os.getpid() % 100000}{h[-1]}"[:15] for h in self.hosts}
        _ip("link", "add", tmp[a], "type", "veth", "peer", "name", tmp[b])
        for h in self.hosts:
            ns = self.ns[h]
            _ip("link", "set", tmp[h], "netns", ns)
            _ip("-n", ns, "link", "set", tmp[h], "name", IFACE)
            _ip("-n", ns, "addr", "add", f"{self.addr[h]}/24", "dev", IFACE)
            _ip("-n", ns, "link", "set", "lo", "up")
            _ip("-n", ns, "link", "set", IFACE, "up")
            etc = Path("/etc/netns") / ns
            etc.mkdir(parents=True, exist_ok=True)
            (etc / "hosts").write_text("127.0.0.1 localhost\n" + "".join(
                f"{self.addr[x]} {x}\n" for x in self.hosts))
        cases = "\n".join(f"  {h}) ns={self.ns[h]} ;;" for h in self.hosts)
        self.agent.write_text(AGENT.format(cases=cases))
        self.agent.chmod(0o755)

    def run_in(self, host: str, argv: list[str]) -> list[str]:
        """``argv`` as a command run on ``host`` (its namespace, its hostname)."""
        return ["ip", "netns", "exec", self.ns[host], "unshare", "--uts", "sh", "-c",
                'hostname "$0" && exec "$@"', host, *argv]

    def mpiexec(self, mpiexec: str, per_host: int, argv: list[str],
                extra: tuple[str, ...] = ()) -> list[str]:
        """mpiexec of ``argv`` on ``per_host`` ranks per host, ranks 0.. on the first host."""
        hosts = ",".join(f"{h}:{per_host}" for h in self.hosts)
        return self.run_in(self.hosts[0], [
            mpiexec, "-n", str(per_host * len(self.hosts)), "--host", hosts,
            "--map-by", "slot", "--bind-to", "none",
            "--prtemca", "plm_ssh_agent", str(self.agent),
            "--prtemca", "oob_tcp_if_include", SUBNET,
            "--mca", "btl", "tcp,self", "--mca", "btl_tcp_if_include", SUBNET, *extra, *argv])

    def pids(self, host: str) -> list[int]:
        """The processes in ``host``'s namespace (its daemon, agent shells and ranks)."""
        return [int(p) for p in _ip("netns", "pids", self.ns[host], check=False).stdout.split()]

    def close(self) -> None:
        for ns in self._made:
            _kill_all(ns)
        for ns in self._made:
            _ip("netns", "del", ns, check=False)
            shutil.rmtree(f"/etc/netns/{ns}", ignore_errors=True)
        self._made = []
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> "NetnsHosts":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
