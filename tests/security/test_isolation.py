"""Artifacts that try to reach outside, and executions that try to reach each other."""

from __future__ import annotations

import threading
import uuid
from pathlib import Path
from typing import Any

from selfcorrect_action.choices import Runtime
from selfcorrect_action.sandbox.client import Sandbox
from selfcorrect_action.sandbox.models import ExecutionRequest, InputFile


def test_symlink_artifacts_are_reported_and_never_followed(run_script, tmp_path: Path) -> None:
    result = run_script(
        """
        import os
        os.symlink("/etc/passwd", "chart.png")
        os.symlink("/etc", "etcdir")
        os.symlink("../../../../etc/shadow", "report.csv")
        os.mkdir("sub")
        os.symlink("/proc/self/environ", "sub/env.txt")
        open("real.txt", "w").write("ok")
        """
    )
    assert result.exit_code == 0
    by_path = {a.path: a for a in result.artifacts}
    for name in ("chart.png", "etcdir", "report.csv", "sub/env.txt"):
        assert by_path[name].host_path is None
        assert "link" in (by_path[name].rejected or "")
    assert by_path["real.txt"].host_path is not None
    assert by_path["real.txt"].host_path.read_text() == "ok"
    copied = [p for p in tmp_path.rglob("*") if p.is_symlink()]
    assert copied == []
    assert not any("root:" in p.read_text(errors="ignore") for p in tmp_path.rglob("*")
                   if p.is_file())


def test_fifo_and_oversized_artifacts_are_rejected(run_script) -> None:
    result = run_script(
        """
        import os
        os.mkfifo("pipe")
        with open("big.bin", "wb") as f:
            f.truncate(40 * 1024 * 1024)
        """,
        work_mb=64,
    )
    by_path = {a.path: a for a in result.artifacts}
    assert by_path["pipe"].rejected == "not a regular file"
    assert by_path["big.bin"].rejected == "file too large"
    assert by_path["big.bin"].host_path is None


def test_a_file_left_by_one_execution_is_absent_from_the_next(run_script) -> None:
    marker = uuid.uuid4().hex
    first = run_script(
        f"""
        for path in ("/work/leak", "/tmp/leak", "/dev/shm/leak"):
            open(path, "w").write("{marker}")
        """
    )
    assert first.exit_code == 0
    second = run_script(
        """
        import os
        print([p for p in ("/work/leak", "/tmp/leak", "/dev/shm/leak") if os.path.exists(p)])
        """
    )
    assert second.stdout.text.strip() == "[]"


def test_pooled_containers_do_not_leak_between_executions(
    docker_engine, sandbox_image: str, runtime: Runtime, tmp_path: Path
) -> None:
    with Sandbox(docker_engine, sandbox_image, pool_size=2) as box:
        outputs = []
        for i in range(4):
            code = (
                "import glob\n"
                "print(sorted(glob.glob('/work/*') + glob.glob('/tmp/left-*')))\n"
                f"open('/work/left-{i}', 'w').write('x'); open('/tmp/left-{i}', 'w').write('x')\n"
            )
            request = ExecutionRequest(
                argv=["python3", "s.py"], files=[InputFile(path="s.py", data=code.encode())],
                runtime=runtime,
            )
            outputs.append(box.run(request, tmp_path / str(i)).stdout.text.strip())
    assert outputs == ["['/work/s.py']"] * 4


def test_concurrent_executions_do_not_see_each_other(
    sandbox, runtime: Runtime, tmp_path: Path
) -> None:
    tokens = [uuid.uuid4().hex for _ in range(4)]
    results: dict[str, object] = {}

    def one(token: str) -> None:
        code = (
            "import os, time\n"
            f"open('token.txt', 'w').write('{token}')\n"
            "time.sleep(0.5)\n"
            "print(open('token.txt').read(), sorted(os.listdir('.')))\n"
        )
        request = ExecutionRequest(
            argv=["python3", "s.py"], files=[InputFile(path="s.py", data=code.encode())],
            runtime=runtime,
        )
        results[token] = sandbox.run(request, tmp_path / token)

    threads = [threading.Thread(target=one, args=(t,)) for t in tokens]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for token in tokens:
        result = results[token]
        assert result.stdout.text.strip() == f"{token} ['s.py', 'token.txt']"  # type: ignore[attr-defined]
        artifact = (tmp_path / token / "token.txt").read_text()
        assert artifact == token


def test_artifact_names_too_long_to_transfer_are_reported(run_script) -> None:
    result = run_script(
        """
        open("a" * 95 + ".txt", "w").write("fits")
        open("b" * 150 + ".txt", "w").write("too long for one ustar name field")
        import os
        os.makedirs("c" * 60 + "/" + "d" * 60, exist_ok=True)
        open("c" * 60 + "/" + "d" * 60 + "/e.txt", "w").write("splits at a slash")
        """
    )
    by_path = {a.path: a for a in result.artifacts}
    assert by_path["a" * 95 + ".txt"].host_path is not None
    assert by_path["c" * 60 + "/" + "d" * 60 + "/e.txt"].host_path is not None
    assert "too long" in (by_path["b" * 150 + ".txt"].rejected or "")


def _run(sandbox: Sandbox, runtime: Runtime, tmp_path: Path, code: str, **extra: Any):
    request = ExecutionRequest(argv=["python3", "s.py"], runtime=runtime,
                               files=[InputFile(path="s.py", data=code.encode())], **extra)
    return sandbox.run(request, tmp_path / uuid.uuid4().hex)


def test_the_contracts_files_are_taken_before_a_flood_of_others(
    sandbox: Sandbox, runtime: Runtime, tmp_path: Path
) -> None:
    """Past the file cap, the walk's order would decide which files come back: the ones the
    contract names are collected first, whatever their names and folders."""
    code = (
        "import os\nos.makedirs('out/deep', exist_ok=True)\n"
        "for i in range(3000): open(f'junk{i:04}.txt', 'w').write('x')\n"
        "open('AAA_result.json', 'w').write('{}')\n"
        "open('out/deep/zzz.csv', 'w').write('a\\n1\\n')\n"
    )
    result = _run(sandbox, runtime, tmp_path, code,
                  artifact_paths=["AAA_result.json", "out/deep/zzz.csv", "missing.png"])
    by_path = {a.path: a for a in result.artifacts}
    assert by_path["AAA_result.json"].host_path is not None
    assert by_path["out/deep/zzz.csv"].host_path is not None
    assert by_path["out/deep/zzz.csv"].host_path.read_text() == "a\n1\n"
    assert "missing.png" not in by_path
    assert sum(1 for a in result.artifacts if a.host_path) <= 256  # the cap still holds


def test_a_wanted_path_through_a_linked_folder_is_not_followed(
    sandbox: Sandbox, runtime: Runtime, tmp_path: Path
) -> None:
    result = _run(sandbox, runtime, tmp_path, "import os\nos.symlink('/etc', 'conf')\n",
                  artifact_paths=["conf/passwd"])
    by_path = {a.path: a for a in result.artifacts}
    assert "conf/passwd" not in by_path
    assert "link" in (by_path["conf"].rejected or "")


def test_unreadable_files_and_folders_are_named_not_dropped(
    sandbox: Sandbox, runtime: Runtime, tmp_path: Path
) -> None:
    code = (
        "import os\nopen('secret.txt', 'w').write('x')\nos.chmod('secret.txt', 0)\n"
        "os.mkdir('locked')\nopen('locked/in.txt', 'w').write('x')\nos.chmod('locked', 0)\n"
    )
    result = _run(sandbox, runtime, tmp_path, code, artifact_paths=["secret.txt"])
    by_path = {a.path: a for a in result.artifacts}
    assert by_path["secret.txt"].rejected == "cannot be read (its permissions refuse it)"
    assert by_path["locked/"].rejected == "folder cannot be read (its permissions refuse it)"


def test_unchanged_inputs_are_named_apart(
    sandbox: Sandbox, runtime: Runtime, tmp_path: Path
) -> None:
    files = [InputFile(path="s.py", data=b"open('b.csv', 'a').write('2')\n"),
             InputFile(path="a.csv", data=b"1"), InputFile(path="b.csv", data=b"1")]
    request = ExecutionRequest(argv=["python3", "s.py"], runtime=runtime,
                               files=files)
    result = sandbox.run(request, tmp_path / "unchanged")
    assert sorted(result.unchanged_inputs) == ["a.csv", "s.py"]
    assert [a.path for a in result.artifacts if a.host_path] == ["b.csv"]
