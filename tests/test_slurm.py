"""Real Slurm jobs: starts a one-node Slurm cluster on this machine (munged
with a generated key, slurmctld and slurmd on localhost, a generated
slurm.conf, state, spool and logs all in one temporary directory), submits
jobs/hta-mpi.sbatch, jobs/hta-mpi-array.sbatch and
jobs/submit-with-dependency.sh with sbatch exactly as a user would, waits
for the jobs (bounded) and checks the HDF5 files they wrote next to the
traces.  The daemons are stopped by PID at the end, and get SIGTERM if this
script dies first (PR_SET_PDEATHSIG).

Exits 77 (SKIP for ctest) only when the Slurm or munge programs are missing
or slurmctld cannot start at all; a cluster that starts but then fails any
check is a failure."""
import ctypes
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time

import h5py

from common import (HTA_MPI, MPI_ENV, TRACEGEN, Skip, analyse, main, table, tmpdir)

SKIP = 77  # ctest's SKIP_RETURN_CODE
JOBS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "jobs")
DAEMONS = ["munged", "slurmctld", "slurmd"]
CLIENTS = ["sbatch", "squeue", "scontrol", "sinfo", "srun"]
FINISHED = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY",
            "BOOT_FAIL", "DEADLINE", "PREEMPTED"}
JOB_TIMEOUT_S = 240
CPUS = len(os.sched_getaffinity(0))  # what nproc prints
TASKS = min(2, CPUS)  # MPI processes per job: 2 proves a real MPI launch


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def die_with_parent():
    """Runs in the daemon's child process: SIGTERM when this test dies."""
    ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def memory_mb():
    out = subprocess.run(["free", "-m"], capture_output=True, text=True, check=True).stdout
    return int(next(l for l in out.splitlines() if l.startswith("Mem:")).split()[1])


def slurm_conf(root, munge_socket):
    return f"""ClusterName=htatest
SlurmctldHost={socket.gethostname().split('.')[0]}(127.0.0.1)
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={munge_socket}
StateSaveLocation={root}/state
SlurmdSpoolDir={root}/spool
SlurmctldPidFile={root}/run/slurmctld.pid
SlurmdPidFile={root}/run/slurmd.pid
SlurmctldLogFile={root}/log/slurmctld.log
SlurmdLogFile={root}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
SwitchType=switch/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MailProg=/bin/true
ReturnToService=2
MinJobAge=3600
SlurmdParameters=config_overrides
NodeName=localhost NodeAddr=127.0.0.1 CPUs={CPUS} RealMemory={memory_mb()} State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
"""


class Cluster:
    """A one-node Slurm cluster under a temporary directory."""

    def __init__(self):
        missing = [p for p in DAEMONS + CLIENTS + ["munge"] if not shutil.which(p)
                   and not os.path.exists(f"/usr/sbin/{p}")]
        if missing:
            raise Skip(f"not installed: {', '.join(missing)} "
                       "(scripts/install-deps.sh --test installs slurm-wlm and munge)")
        self.root = tmpdir()
        self.procs = {}
        # munged insists that everyone can traverse the socket's directory
        # and that nobody else can read the key's.
        os.chmod(self.root, 0o755)
        for d in ("key", "run", "state", "spool", "log", "work"):
            os.mkdir(os.path.join(self.root, d), 0o700 if d == "key" else 0o755)
        self.munge_socket = os.path.join(self.root, "run", "munge.socket")
        self.conf = os.path.join(self.root, "slurm.conf")
        self.env = dict(MPI_ENV, SLURM_CONF=self.conf, HTA_MPI=HTA_MPI)
        self.env.pop("OMPI_MCA_rmaps_base_oversubscribe", None)

    def path(self, *parts):
        return os.path.join(self.root, *parts)

    def daemon(self, name, args):
        log = open(self.path("log", name + ".out"), "w")
        self.procs[name] = subprocess.Popen(
            [shutil.which(name) or f"/usr/sbin/{name}"] + args, stdout=log,
            stderr=subprocess.STDOUT, env=self.env, preexec_fn=die_with_parent)

    def log_tail(self, name, lines=15):
        text = ""
        for f in (name + ".out", name + ".log"):
            if os.path.exists(self.path("log", f)):
                text += open(self.path("log", f)).read()
        return "\n".join(text.splitlines()[-lines:])

    def start(self):
        with open(self.path("key", "munge.key"), "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(self.path("key", "munge.key"), 0o400)
        self.daemon("munged", ["--foreground", "--key-file", self.path("key", "munge.key"),
                               "--socket", self.munge_socket,
                               "--pid-file", self.path("run", "munged.pid"),
                               "--seed-file", self.path("key", "munged.seed"),
                               "--log-file", self.path("log", "munged.log")])
        if not self.wait_for(lambda: os.path.exists(self.munge_socket), "munged", 20):
            raise Skip("munged did not start:\n" + self.log_tail("munged"))
        with open(self.conf, "w") as f:
            f.write(slurm_conf(self.root, self.munge_socket))
        self.daemon("slurmctld", ["-D", "-f", self.conf])
        if not self.wait_for(lambda: "UP" in self.client(["scontrol", "ping"], check=False),
                             "slurmctld", 30):
            raise Skip("slurmctld cannot start here:\n" + self.log_tail("slurmctld"))
        self.daemon("slurmd", ["-D", "-f", self.conf, "-N", "localhost"])
        idle = lambda: self.client(["sinfo", "-h", "-n", "localhost", "-o", "%T"],
                                   check=False).strip() == "idle"
        assert self.wait_for(idle, "slurmd", 60), \
            "slurmd did not register as idle:\n" + self.log_tail("slurmd")

    def wait_for(self, ready, name, seconds):
        end = time.time() + seconds
        while time.time() < end:
            if self.procs[name].poll() is not None:
                return False
            if ready():
                return True
            time.sleep(0.2)
        return False

    def client(self, args, check=True, **kw):
        p = subprocess.run(args, env=kw.pop("env", self.env), capture_output=True, text=True,
                           timeout=60, cwd=kw.pop("cwd", self.path("work")), **kw)
        if check and p.returncode != 0:
            raise AssertionError(f"{' '.join(args)} exited {p.returncode}:\n{p.stdout}{p.stderr}")
        return p.stdout + (p.stderr if not check else "")

    def sbatch(self, args, **kw):
        return self.client(["sbatch", "--parsable"] + args, **kw).strip().split(";")[0]

    def jobs(self, job_id):
        """{job or array task id: fields} from scontrol's one-line records."""
        out = self.client(["scontrol", "show", "job", "-o", job_id])
        records = {}
        for line in out.splitlines():
            fields = dict(re.findall(r"(\w+)=(\S*)", line))
            task = fields.get("ArrayTaskId")
            key = f"{fields['ArrayJobId']}_{task}" if task and task.isdigit() else fields["JobId"]
            records[key] = fields
        return records

    def wait(self, job_id, timeout=JOB_TIMEOUT_S):
        """Waits until every job (or array task) of job_id has finished."""
        end = time.time() + timeout
        while time.time() < end:
            records = self.jobs(job_id)
            if records and all(r["JobState"] in FINISHED for r in records.values()):
                return records
            time.sleep(0.5)
        raise AssertionError(f"job {job_id} not finished after {timeout} s: "
                             f"{ {k: r['JobState'] for k, r in self.jobs(job_id).items()} }\n"
                             + self.log_tail("slurmctld") + "\n" + self.log_tail("slurmd"))

    def stop(self):
        if "slurmctld" in self.procs and self.procs["slurmctld"].poll() is None:
            self.client(["scancel", "--full", "-u", "root"], check=False)
        for name in reversed(DAEMONS):
            p = self.procs.get(name)
            if p and p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()


def pmix_available(cluster):
    return "pmix" in cluster.client(["srun", "--mpi=list"], check=False)


def traces(ranks, straggler=None):
    d = tmpdir()
    args = [TRACEGEN, "-o", d, "--ranks", str(ranks), "--size-mb", "0.3", "--gzip"]
    subprocess.run(args + (["--straggler", f"{straggler}:1.3"] if straggler is not None else []),
                   check=True)
    return d


def job_output(cluster, name):
    return open(cluster.path("work", name)).read()


def assert_completed(record, what):
    assert record["JobState"] == "COMPLETED" and record["ExitCode"] == "0:0", \
        f"{what}: state {record['JobState']}, exit {record['ExitCode']}"


def assert_results(trace_dir, n_ranks, n_processes):
    out = os.path.join(trace_dir, "hta-results.h5")
    assert os.path.exists(out), f"no {out}: {os.listdir(trace_dir)}"
    with h5py.File(out, "r") as f:
        assert f.attrs["n_ranks"] == n_ranks and f.attrs["n_failed"] == 0, dict(f.attrs)
        # One MPI job of TASKS processes, not TASKS singletons writing alike.
        assert f.attrs["n_processes"] == n_processes, f.attrs["n_processes"]
    ranks = table(out, "/ranks")
    assert list(ranks["rank"]) == list(range(n_ranks)) and set(ranks["status"]) == {"ok"}, ranks
    return out


def test_single_job_with_each_launcher():
    launchers = ["auto", "mpirun"] + (["srun"] if pmix_available(CLUSTER) else [])
    if len(launchers) == 2:
        print("note: srun has no PMIx plugin here; only mpirun runs inside the jobs")
    d = traces(8, straggler=5)
    reference, _ = analyse(d, processes=2)
    for launcher in launchers:
        if os.path.exists(os.path.join(d, "hta-results.h5")):
            os.remove(os.path.join(d, "hta-results.h5"))
        env = dict(CLUSTER.env, HTA_LAUNCHER=launcher)
        job = CLUSTER.sbatch([f"--ntasks={TASKS}", os.path.join(JOBS, "hta-mpi.sbatch"), d],
                             env=env)
        assert_completed(CLUSTER.wait(job)[job], f"hta-mpi.sbatch with HTA_LAUNCHER={launcher}")
        log = job_output(CLUSTER, f"hta-mpi-{job}.out")
        used = "srun --mpi=pmix" if launcher == "srun" or (launcher == "auto" and
                                                           pmix_available(CLUSTER)) else "mpirun"
        assert f"hta-mpi job {job}: {used}, {TASKS} tasks on localhost" in log, log
        assert "Results: " + os.path.join(d, "hta-results.h5") in log, log
        out = assert_results(d, 8, TASKS)
        flagged = table(out, "/outliers")
        assert list(flagged[flagged.metric == "compute_time_us"]["rank"]) == [5], flagged
        got, want = table(out, "/temporal_breakdown"), table(reference, "/temporal_breakdown")
        assert got.equals(want), f"{launcher}: job result differs from mpirun outside Slurm"
        print(f"     {launcher}: job {job} ran '{used}' and wrote {out}")


def test_array_job_one_task_per_directory():
    dirs = [traces(n) for n in (2, 3, 4)]
    listing = CLUSTER.path("work", "dirs.txt")
    with open(listing, "w") as f:
        f.write("# trace directories, one per line\n" + "\n".join(dirs) + "\n\n")
    count = subprocess.run(["grep", "-c", "^[^#]", listing], capture_output=True,
                           text=True).stdout.strip()
    assert count == "3", count  # the README's way of sizing --array
    job = CLUSTER.sbatch([f"--array=1-{count}", f"--ntasks={TASKS}",
                          os.path.join(JOBS, "hta-mpi-array.sbatch"), listing, "--bins", "12"])
    records = CLUSTER.wait(job)
    assert sorted(records) == [f"{job}_{i}" for i in (1, 2, 3)], sorted(records)
    for i, d in enumerate(dirs, start=1):
        assert_completed(records[f"{job}_{i}"], f"array task {i}")
        assert f"traces {d}" in job_output(CLUSTER, f"hta-mpi-{job}_{i}.out")
        out = assert_results(d, i + 1, TASKS)
        with h5py.File(out, "r") as f:
            assert f["/timeline"].shape == (i + 1, 12, 4), f["/timeline"].shape


def training_script(trace_dir, fail=False):
    """A stand-in training job: runs a while, then writes the traces."""
    path = CLUSTER.path("work", "train-fail.sbatch" if fail else "train.sbatch")
    with open(path, "w") as f:
        f.write("#!/bin/sh\n#SBATCH --job-name=train\n#SBATCH --ntasks=1\n"
                "#SBATCH --output=train-%j.out\nsleep 3\n" +
                ("exit 1\n" if fail else
                 f"{TRACEGEN} -o {trace_dir} --ranks 4 --size-mb 0.3 --gzip\n"))
    return path


def submit_with_dependency(train, trace_dir):
    out = CLUSTER.client([os.path.join(JOBS, "submit-with-dependency.sh"), train, trace_dir],
                         env=dict(CLUSTER.env, HTA_SBATCH_ARGS=f"--ntasks={TASKS}"))
    ids = re.findall(r"^(?:training|analysis) job (\d+)", out, re.M)
    assert len(ids) == 2, out
    return ids


def test_analysis_waits_for_training():
    d = os.path.join(tmpdir(), "traces")  # the training job creates it
    train, analysis = submit_with_dependency(training_script(d), d)
    pending = CLUSTER.jobs(analysis)[analysis]
    assert pending["JobState"] == "PENDING" and pending["Reason"] == "Dependency", pending
    assert pending["Dependency"].startswith(f"afterok:{train}"), pending["Dependency"]
    records = {**CLUSTER.wait(train), **CLUSTER.wait(analysis)}
    assert_completed(records[train], "training job")
    assert_completed(records[analysis], "analysis job")
    assert records[analysis]["StartTime"] >= records[train]["EndTime"], records
    assert_results(d, 4, TASKS)


def test_failed_training_cancels_analysis():
    d = tmpdir()
    train, analysis = submit_with_dependency(training_script(d, fail=True), d)
    records = {**CLUSTER.wait(train), **CLUSTER.wait(analysis)}
    assert records[train]["JobState"] == "FAILED", records[train]
    assert records[analysis]["JobState"] == "CANCELLED", records[analysis]
    assert records[analysis]["StartTime"] in ("Unknown", "None") or \
        records[analysis]["RunTime"] == "00:00:00", records[analysis]
    assert not os.path.exists(os.path.join(d, "hta-results.h5"))


def run_against_a_new_cluster():
    global CLUSTER
    try:
        CLUSTER = Cluster()
    except Skip as why:
        print(f"SKIP: {why}")
        sys.exit(SKIP)
    try:
        CLUSTER.start()
        print(f"cluster in {CLUSTER.root}:\n{CLUSTER.client(['sinfo']).strip()}")
        main([test_single_job_with_each_launcher, test_array_job_one_task_per_directory,
              test_analysis_waits_for_training, test_failed_training_cancels_analysis])
    except Skip as why:
        print(f"SKIP: {why}")
        sys.exit(SKIP)
    finally:
        CLUSTER.stop()


if __name__ == "__main__":
    run_against_a_new_cluster()
