"""What a warm interpreter preloads (sandbox/preload.py): the latest script's imports among
the image's big libraries, a default before the first, nothing for what it would not serve."""

from __future__ import annotations

from selfcorrect_action.sandbox import preload
from selfcorrect_action.sandbox.models import (
    Boundary,
    ExecutionRequest,
    InputFile,
    Limits,
    script_argv,
)


def _request(source: str, **more: object) -> ExecutionRequest:
    return ExecutionRequest.model_validate({
        "argv": script_argv("task.py"), "files": [InputFile(path="task.py", data=source.encode())],
        **more})


def test_imports_are_found_anywhere_with_their_parents_and_from_names_once() -> None:
    source = ("import os, matplotlib.pyplot as plt\nfrom PIL import Image\n"
              "def later():\n    import pandas, os\nfrom . import sibling\nfrom x import *\n")
    assert sorted(preload.imports_of(source)) == sorted([
        "os", "matplotlib", "matplotlib.pyplot", "PIL", "PIL.Image", "pandas", "x"])
    assert preload.imports_of("def broken(:") == []


def test_only_the_images_big_libraries_are_preloaded_in_the_scripts_order() -> None:
    chosen = preload.next_preload(_request(
        "import json\nimport pandas as pd\nfrom matplotlib import pyplot\nimport numpyx\n"))
    assert chosen == ("pandas", "matplotlib", "matplotlib.pyplot")


def test_what_a_warm_interpreter_would_not_serve_preloads_nothing_and_tests_change_nothing(
        ) -> None:
    assert preload.next_preload(_request("import pandas", warm=False)) == ()
    tests_command = ExecutionRequest(argv=["python3", "-m", "pytest", "-q"])
    assert preload.next_preload(tests_command) == ()
    boundary = _request("import pandas", boundary=Boundary(
        candidate="task.py", module="task", tests=["test_task.py"]))
    assert preload.next_preload(boundary) is None
    # An answer that does not parse says nothing about what its fix will import.
    assert preload.next_preload(_request("import pandas\ndef (")) is None


def test_the_script_is_found_behind_the_double_dash_or_without_it() -> None:
    plain = ExecutionRequest(argv=["python3", "task.py"],
                             files=[InputFile(path="task.py", data=b"import numpy")])
    assert preload.script_source(plain) == "import numpy"
    assert preload.script_source(_request("import numpy")) == "import numpy"
    assert preload.script_source(ExecutionRequest(argv=["python3", "-c", "1"])) is None
    assert preload.script_source(ExecutionRequest(argv=["bash", "task.py"])) is None


def test_a_small_memory_limit_preloads_nothing() -> None:
    wanted = ("numpy", "pandas")
    assert preload.for_limits(wanted, Limits(memory_mb=preload.MIN_MEMORY_MB)) == wanted
    assert preload.for_limits(wanted, Limits(memory_mb=preload.MIN_MEMORY_MB - 1)) == ()


def test_unused_preloads_are_the_ones_the_script_does_not_import_itself() -> None:
    assert preload.unused(["numpy", "pandas", "matplotlib.pyplot"], "import pandas\n") == [
        "numpy", "matplotlib.pyplot"]


def test_a_preload_is_waited_for_only_when_the_script_imports_some_of_it() -> None:
    data = ("numpy", "pandas", "matplotlib")
    assert preload.worth_waiting_for(data, "import pandas as pd\n")
    assert preload.worth_waiting_for(data, "def f():\n    from matplotlib import pyplot\n")
    assert not preload.worth_waiting_for(data, "import json\nprint(1)\n")
    assert not preload.worth_waiting_for(data, "")
    assert preload.worth_waiting_for(data, "def broken(:\n"), "a fix may import them"
    assert preload.worth_waiting_for((), "print(1)"), "a bare interpreter: nothing to wait"
    assert preload.worth_waiting_for(data, None), "not a script: not ours to judge"


def test_a_tasks_text_names_its_libraries_by_import_name_or_common_name() -> None:
    assert preload.named_in("Complete this function.\n```python\nfrom typing import List\n"
                            "def has_close_elements(numbers: List[float]) -> bool:\n```") == ()
    assert preload.named_in("import numpy as np\ndef f(a: np.ndarray): ...") == ("numpy",)
    assert preload.named_in("Use Pandas, then draw it with pyplot") == (
        "pandas", "matplotlib", "matplotlib.pyplot")
    assert preload.named_in("resize it with Pillow; parse with BeautifulSoup") == (
        "PIL", "PIL.Image", "bs4")
    # Whole names only: not a prefix, a suffix or an attribute of something else.
    assert preload.named_in("numpyish, my_pandas, x.scipy, scipyx") == ()
