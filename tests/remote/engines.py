"""Real engines for the wrapper tests, started in a temp dir and stopped afterwards (loopback only).

- `Sshd`: Debian's openssh-server on a free 127.0.0.1 port, a throwaway host key and client key, and an ssh
  client config naming it `owed-test` (strict host key checking against the throwaway key, batch mode).
- `Slurm`: munged + slurmctld + slurmd of Debian's slurm-wlm as one node on 127.0.0.1, `proctrack/linuxproc`,
  `task/none`, no accounting and no cgroups; `SLURM_CONF` names its config.

`start()` raises `Unavailable` with the exact reason (binary missing, daemon exited, never became ready, with
the tail of its log) so a test can skip saying why. Every daemon runs in its own session; `stop()` ends each by
its process group, then reaps it.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

SBIN = ("/usr/sbin", "/usr/bin", "/sbin", "/bin")


class Unavailable(Exception):
    pass


def which(name: str) -> str:
    found = shutil.which(name) or next((f"{d}/{name}" for d in SBIN if os.access(f"{d}/{name}", os.X_OK)), None)
    if found is None:
        raise Unavailable(f"{name} is not installed (scripts/test installs it with apt-get when run as root)")
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tail(path: Path, n: int = 8) -> str:
    try:
        return " | ".join(path.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return "(no log)"


class Daemons:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.procs: list[tuple[str, subprocess.Popen, Path]] = []

    def spawn(self, name: str, argv: list[str], env: dict | None = None) -> subprocess.Popen:
        log = self.root / f"{name}.out"
        with open(log, "ab") as out:
            p = subprocess.Popen(argv, cwd=self.root, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                 start_new_session=True, env=env)
        self.procs.append((name, p, log))
        return p

    def check_alive(self) -> None:
        for name, p, log in self.procs:
            if p.poll() is not None:
                raise Unavailable(f"{name} exited with {p.returncode}: {tail(log)}")

    def wait(self, ready, what: str, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            self.check_alive()
            if ready():
                return
            if time.monotonic() > deadline:
                logs = "; ".join(f"{name}: {tail(log, 4)}" for name, _, log in self.procs)
                raise Unavailable(f"{what} not ready after {timeout:.0f}s ({logs})")
            time.sleep(0.1)

    def stop(self) -> None:
        for _, p, _ in reversed(self.procs):
            if p.poll() is None:
                with _quiet():
                    os.killpg(p.pid, signal.SIGTERM)
        for _, p, _ in reversed(self.procs):
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                with _quiet():
                    os.killpg(p.pid, signal.SIGKILL)
                p.wait(timeout=5)
        self.procs.clear()


class _quiet:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return exc[0] in (ProcessLookupError, PermissionError)


# --- sshd ------------------------------------------------------------------------------------------------


class Sshd(Daemons):
    HOST = "owed-test"

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.port = free_port()
        self.config = root / "ssh_config"

    def argv(self) -> list[str]:
        """The ssh options that reach this server (for the wrapper and for rsync's ssh)."""
        return ["-F", str(self.config), self.HOST]

    def start(self) -> "Sshd":
        sshd, keygen = which("sshd"), which("ssh-keygen")
        which("ssh"), which("rsync")
        if os.geteuid() != 0:
            raise Unavailable("sshd with a throwaway config needs root here (privilege separation directory)")
        r = self.root
        for key in ("host_key", "client_key"):
            subprocess.run([keygen, "-q", "-t", "ed25519", "-N", "", "-f", str(r / key)], check=True)
        shutil.copy(r / "client_key.pub", r / "authorized_keys")
        (r / "sshd_config").write_text(
            f"Port {self.port}\nListenAddress 127.0.0.1\nHostKey {r}/host_key\n"
            f"AuthorizedKeysFile {r}/authorized_keys\nPidFile {r}/sshd.pid\nPasswordAuthentication no\n"
            "KbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\nStrictModes no\nUsePAM no\n"
            "MaxStartups 50\nMaxSessions 50\n")
        (r / "known_hosts").write_text(f"[127.0.0.1]:{self.port} {(r / 'host_key.pub').read_text()}")
        self.config.write_text(
            f"Host {self.HOST}\n  HostName 127.0.0.1\n  Port {self.port}\n  User root\n"
            f"  IdentityFile {r}/client_key\n  IdentitiesOnly yes\n  UserKnownHostsFile {r}/known_hosts\n"
            "  StrictHostKeyChecking yes\n  BatchMode yes\n  ConnectTimeout 5\n  LogLevel ERROR\n")
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # sshd's privilege separation directory
        self.spawn("sshd", [sshd, "-D", "-e", "-f", str(r / "sshd_config")])

        def ready() -> bool:
            return subprocess.run(["ssh", *self.argv(), "true"], stdin=subprocess.DEVNULL,
                                  capture_output=True, timeout=10).returncode == 0

        self.wait(ready, f"sshd on 127.0.0.1:{self.port}")
        return self


# --- Slurm -----------------------------------------------------------------------------------------------


class Slurm(Daemons):
    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.conf = root / "slurm.conf"

    @property
    def env(self) -> dict[str, str]:
        return {**os.environ, "SLURM_CONF": str(self.conf)}

    def run(self, *argv: str) -> subprocess.CompletedProcess:
        return subprocess.run(list(argv), env=self.env, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                              timeout=20)

    def jobs(self) -> str:
        """squeue's jobs (pending, running, completing), one line each; "" when none."""
        return self.run("squeue", "-h", "-o", "%i %T %j").stdout.strip()

    def steps(self) -> str:
        return self.run("squeue", "-h", "-s", "-o", "%i %j").stdout.strip()

    def start(self) -> "Slurm":
        munged, ctld, slurmd = which("munged"), which("slurmctld"), which("slurmd")
        for tool in ("srun", "salloc", "squeue", "scancel", "sinfo"):
            which(tool)
        if os.geteuid() != 0:
            raise Unavailable("this single-node Slurm runs its daemons as root (SlurmUser=root)")
        r = self.root
        for d in ("munge", "state", "spool"):
            (r / d).mkdir(mode=0o700)
        key = r / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        sock = r / "munge" / "sock"
        self.spawn("munged", [munged, "-F", "-f", f"--key-file={key}", f"--socket={sock}",
                              f"--pid-file={r}/munge/pid", f"--log-file={r}/munge/log", f"--seed-file={r}/munge/seed"])
        self.wait(sock.exists, "munged")
        host = socket.gethostname().split(".")[0]
        cpus = os.cpu_count() or 1
        self.conf.write_text("\n".join([
            "ClusterName=owedtest", f"SlurmctldHost={host}(127.0.0.1)",
            f"SlurmctldPort={free_port()}", f"SlurmdPort={free_port()}",
            "AuthType=auth/munge", f"AuthInfo=socket={sock}", "CredType=cred/munge",
            "SlurmUser=root", "SlurmdUser=root",
            f"StateSaveLocation={r}/state", f"SlurmdSpoolDir={r}/spool",
            f"SlurmctldPidFile={r}/slurmctld.pid", f"SlurmdPidFile={r}/slurmd.pid",
            f"SlurmctldLogFile={r}/slurmctld.log", f"SlurmdLogFile={r}/slurmd.log",
            "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none", "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none", "JobCompType=jobcomp/none", "MpiDefault=none",
            "SelectType=select/cons_tres", "SelectTypeParameters=CR_Core", "ReturnToService=2",
            "MinJobAge=2", "KillWait=2", "MailProg=/bin/true",
            f"NodeName={host} NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN",
            f"PartitionName=debug Nodes={host} Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:8",
            f"PartitionName=held Nodes={host} MaxTime=INFINITE State=DOWN",  # takes jobs, never runs them
            ""]))
        self.spawn("slurmctld", [ctld, "-D", "-i"], env=self.env)
        self.spawn("slurmd", [slurmd, "-D", "-N", host], env=self.env)
        self.wait(lambda: self.run("sinfo", "-h", "-o", "%t").stdout.strip() == "idle", "the Slurm node")
        return self
