"""nnetmix/utils/rankstatus.py: the line that names the rank that ended an MPI job, from
mpiexec's banner and the ranks' records (real killed ranks: tests/faults/test_mpi_failure.py)."""
import time

from nnetmix.utils.rankstatus import (RankRecord, launcher_report, status_path,
                                      summarise_mpi_failure, write_record)

BANNER = ("--------------------------------------------------------------------------\n"
          "mpiexec noticed that process rank 1 with PID {pid} on node vm exited on signal 9\n"
          "(Killed).\n"
          "--------------------------------------------------------------------------\n")


def _job(tmp_path, banner_pid: int, record_pid: int):
    job_log = tmp_path / "iter02.tr.log"
    job_log.write_text("# nnet-train-mpi.py ...\n" + BANNER.format(pid=banner_pid))
    for rank, pid in ((0, 4100), (1, record_pid)):
        log = str(tmp_path / f"iter02.tr.rank{rank}.log")
        write_record(status_path(log), RankRecord(rank, 2, "vm", pid, log, time.time()))
    return str(job_log)


def test_a_killed_rank_is_named_with_its_record(tmp_path):
    job_log = _job(tmp_path, 4242, 4242)
    f = summarise_mpi_failure(job_log, 137)
    assert f.rank == 1 and f.line.startswith(
        "MPI rank 1 on host vm (pid 4242) was killed by signal 9 (SIGKILL); see "
        f"{tmp_path}/iter02.tr.rank1.log")


def test_pid_0_in_the_banner_keeps_the_rank_s_record(tmp_path):
    """mpiexec says "with PID 0" when it did not learn the pid (piped features under the
    scheduler): the record gives the real pid and the rank's log."""
    assert launcher_report(BANNER.format(pid=0)).pid is None
    f = summarise_mpi_failure(_job(tmp_path, 0, 4242), 137)
    assert "MPI rank 1 on host vm (pid 4242) was killed by signal 9" in f.line
    assert f"see {tmp_path}/iter02.tr.rank1.log" in f.line


def test_a_banner_about_another_run_s_process_leaves_the_record_out(tmp_path):
    f = summarise_mpi_failure(_job(tmp_path, 999, 4242), 137)
    assert "(pid 999)" in f.line and "rank1.log" not in f.line
