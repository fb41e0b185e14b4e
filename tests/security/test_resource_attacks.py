"""Resource exhaustion: every attack ends within its limit, is classified `resource`, and
leaves no container behind (the `sandbox` fixture checks that on the way out)."""

from __future__ import annotations

import resource

from selfcorrect_action.choices import Runtime
from selfcorrect_action.evaluation.classify import classify_execution_failure
from selfcorrect_action.taxonomy import Category


def _category(result) -> Category:
    return classify_execution_failure(result, script_name="attack.py")[0]


def test_fork_bomb_is_stopped_by_the_pids_limit(run_script) -> None:
    result = run_script(
        """
        import os
        while True:
            os.fork()
        """,
        timeout_s=20,
    )
    assert result.exit_code != 0 or result.timed_out
    assert _category(result) is Category.RESOURCE


def test_thread_bomb_is_stopped(run_script, runtime: Runtime) -> None:
    """runc: the pids limit refuses new threads. runsc: gVisor's threads are not host tasks,
    so the pids cgroup does not see them and the memory limit stops the bomb instead."""
    result = run_script(
        """
        import threading, time
        while True:
            threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
        """,
        timeout_s=20,
    )
    assert result.exit_code != 0
    assert _category(result) is Category.RESOURCE
    if runtime == "runc":
        assert "thread" in result.stderr.text
    else:
        assert "thread" in result.stderr.text or result.oom_killed or result.timed_out


def test_memory_bomb_in_the_main_process_is_oom_killed(run_script) -> None:
    result = run_script(
        """
        chunks = []
        while True:
            chunks.append(bytearray(16 * 1024 * 1024))
        """,
        memory_mb=128,
    )
    assert result.oom_killed or "MemoryError" in result.stderr.text
    assert _category(result) is Category.RESOURCE


def test_memory_bomb_in_a_child_is_reported_as_oom(run_script) -> None:
    result = run_script(
        """
        import subprocess, sys
        code = "x = []\\nwhile True: x.append(bytearray(16 * 1024 * 1024))"
        child = subprocess.run([sys.executable, "-c", code])
        sys.exit(1 if child.returncode else 0)
        """,
        memory_mb=128,
    )
    assert result.exit_code != 0
    assert result.oom_killed or "MemoryError" in result.stderr.text
    assert _category(result) is Category.RESOURCE


def _fill(path: str) -> str:
    return f"""
        block = b"x" * (1024 * 1024)
        with open("{path}", "wb") as handle:
            while True:
                handle.write(block)
                handle.flush()
        """


def test_filling_the_work_dir_hits_its_size_limit(run_script) -> None:
    result = run_script(_fill("/work/fill.bin"), work_mb=16)
    assert result.exit_code != 0
    assert "No space left on device" in result.stderr.text
    assert _category(result) is Category.RESOURCE
    fill = next(a for a in result.artifacts if a.path == "fill.bin")
    assert fill.size <= 16 * 1024 * 1024


def test_filling_tmp_hits_its_size_limit(run_script) -> None:
    result = run_script(_fill("/tmp/fill.bin"), tmp_mb=8)
    assert "No space left on device" in result.stderr.text
    assert _category(result) is Category.RESOURCE


def test_filling_dev_shm_hits_its_size_limit(run_script) -> None:
    result = run_script(_fill("/dev/shm/fill.bin"), shm_mb=8)
    assert result.exit_code != 0
    assert _category(result) is Category.RESOURCE


def test_many_small_files_are_contained(run_script, runtime: Runtime) -> None:
    """runc: the tmpfs inode limit. runsc: gVisor's tmpfs has no inode limit, so the run
    goes on until the timeout; either way the report stays small."""
    result = run_script(
        """
        i = 0
        while True:
            open(f"f{i}", "w").close()
            i += 1
        """,
        work_inodes=500,
        timeout_s=5,
    )
    assert result.exit_code != 0
    if runtime == "runc":
        assert "No space left on device" in result.stderr.text
    else:
        assert result.timed_out or result.oom_killed or "No space" in result.stderr.text
    assert _category(result) is Category.RESOURCE
    # Artifacts come back capped, however many files the script made.
    assert len(result.artifacts) <= 256 + 100


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def test_output_flood_with_newlines_is_capped(run_script) -> None:
    before = _rss_mb()
    result = run_script(
        """
        import sys
        line = "y" * 99 + "\\n"
        for _ in range(300_000):
            sys.stdout.write(line)
        """,
        timeout_s=60,
    )
    assert result.exit_code == 0
    assert result.stdout.total_bytes == 30_000_000
    assert result.stdout.truncated
    assert len(result.stdout.text) < 256 * 1024
    assert _rss_mb() - before < 64


def test_output_flood_without_newlines_on_both_streams_is_capped(run_script) -> None:
    before = _rss_mb()
    result = run_script(
        """
        import os
        block = b"z" * 65536
        for _ in range(1500):
            os.write(1, block)
            os.write(2, block)
        """,
        timeout_s=60,
    )
    assert result.exit_code == 0
    assert result.stdout.total_bytes == result.stderr.total_bytes == 1500 * 65536
    assert len(result.stdout.text) < 256 * 1024 and len(result.stderr.text) < 256 * 1024
    assert _rss_mb() - before < 64


def test_busy_loops_on_several_threads_are_stopped_by_the_timeout(run_script) -> None:
    result = run_script(
        """
        import multiprocessing
        def spin():
            while True:
                pass
        for _ in range(4):
            multiprocessing.Process(target=spin).start()
        spin()
        """,
        timeout_s=3,
    )
    assert result.timed_out
    assert _category(result) is Category.RESOURCE
    assert 2500 <= result.duration_ms < 8000


def test_sleeping_forever_is_stopped_by_the_timeout(run_script) -> None:
    result = run_script("import time\nprint('going to sleep', flush=True)\ntime.sleep(10**6)",
                        timeout_s=2)
    assert result.timed_out
    assert "going to sleep" in result.stdout.text
    assert _category(result) is Category.RESOURCE


def test_setsid_grandchild_that_ignores_sigterm_does_not_outlive_the_run(run_script) -> None:
    result = run_script(
        """
        import os, signal, time
        if os.fork() == 0:
            os.setsid()
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            if os.fork() == 0:
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
                while True:
                    with open("/work/heartbeat", "a") as f:
                        f.write(".")
                    time.sleep(0.01)
            time.sleep(10**6)
        print("parent done")
        """,
        timeout_s=10,
    )
    # The parent exits at once; the escaped grandchildren are killed, not waited for.
    assert result.exit_code == 0
    assert result.duration_ms < 3000


def test_closing_its_output_and_sleeping_still_meets_the_deadline(run_script) -> None:
    result = run_script("import os, time\nprint('bye', flush=True)\nos.close(1)\nos.close(2)\n"
                        "time.sleep(600)\n", timeout_s=2)
    assert result.timed_out
    assert result.sandbox_note is None  # reported by the runner, not by killing the container
    assert "bye" in result.stdout.text


def test_growing_an_input_to_a_terabyte_is_not_hashed(run_script) -> None:
    result = run_script("import os, sys\nos.truncate(__file__, 1 << 40)\nsys.exit(2)\n")
    assert result.exit_code == 2 and not result.timed_out
    grown = next(a for a in result.artifacts if a.path == "attack.py")
    assert grown.rejected == "file too large"


def test_deeply_nested_folders_do_not_break_the_report(run_script) -> None:
    result = run_script(
        """
        import os
        path = "/work"
        for i in range(1200):
            path = os.path.join(path, "d")
            os.mkdir(path)
        open(os.path.join(path, "deep.txt"), "w").write("x")
        open("/work/shallow.txt", "w").write("y")
        """
    )
    assert result.exit_code == 0 and result.sandbox_note is None
    paths = {a.path: a for a in result.artifacts}
    assert paths["shallow.txt"].host_path is not None
    assert any("nested too deeply" in (a.rejected or "") for a in result.artifacts)


def test_hundreds_of_zombies_are_reaped(run_script) -> None:
    result = run_script(
        """
        import os, time
        for _ in range(100):
            child = os.fork()
            if child == 0:
                if os.fork() == 0:
                    time.sleep(0.05)
                    os._exit(0)      # orphaned grandchild: reparented to PID 1, the runner
                os._exit(0)
            os.waitpid(child, 0)
        time.sleep(1)
        pids = [p for p in os.listdir("/proc") if p.isdigit()]
        print(len(pids))
        """,
        # 200 forks under gVisor take seconds on a busy CI machine, more with numpy's
        # mappings preloaded: this test is about reaping, not speed.
        timeout_s=30,
    )
    assert result.exit_code == 0, result.stderr.text
    assert int(result.stdout.text.split()[-1]) < 20
