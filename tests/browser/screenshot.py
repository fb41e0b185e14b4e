"""The README's picture of the attempt viewer: the bar-chart example replayed (its recorded
answers, the real loop and sandbox), its page written by `selfcorrect view` and opened in
Chromium, the first screen saved as docs/viewer-bar-chart.png. The browser test of the
example (tests/browser/test_bar_chart_example.py) takes the same steps.

    python -m tests.browser.screenshot    # needs Docker with the sandbox image, and Chromium
"""

from __future__ import annotations

import json
import sys
import tempfile
from contextlib import chdir, redirect_stdout
from io import StringIO
from pathlib import Path
from typing import TYPE_CHECKING

from selfcorrect_action.cli import main as selfcorrect

if TYPE_CHECKING:
    from selenium.webdriver.chrome.webdriver import WebDriver

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOT = ROOT / "docs" / "viewer-bar-chart.png"
WIDTH, HEIGHT = 1200, 1000


def example_page(work: Path) -> tuple[str, Path]:
    """Run the bar-chart example into a history under `work`; its run id and page."""
    history = str(work / "history")
    with chdir(ROOT):  # the page names the spec and the recording as a user types them
        code = selfcorrect(["run", "examples/tasks/bar_chart.yml", "--replay",
                            "examples/replays/bar_chart.jsonl", "--out", str(work / "out"),
                            "--history", history])
    if code != 0:
        raise RuntimeError(f"the bar-chart example ended with exit code {code}")
    listed = StringIO()
    with redirect_stdout(listed):
        selfcorrect(["history", "--history", history, "--json"])
    (run,) = json.loads(listed.getvalue())["runs"]
    page = work / "page.html"
    with redirect_stdout(StringIO()):
        selfcorrect(["view", run["run_id"], "--no-open", "--history", history, "--out",
                     str(page)])
    return run["run_id"], page


def capture(driver: WebDriver, page: Path, out: Path) -> None:
    """The page's first WIDTH x HEIGHT pixels (the viewport set exactly, whatever room the
    window's frame takes)."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": False})
    try:
        driver.get(page.resolve().as_uri())
        if not driver.save_screenshot(str(out)):
            raise RuntimeError(f"Chromium did not save {out}")
    finally:
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def main() -> int:
    from tests.browser.chrome import chrome

    with tempfile.TemporaryDirectory(prefix="selfcorrect-screenshot-") as work:
        _, page = example_page(Path(work))
        with chrome(width=WIDTH, height=HEIGHT) as driver:
            capture(driver, page, SCREENSHOT)
    print(SCREENSHOT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
