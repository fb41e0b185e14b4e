"""Debian's Chromium driven by Selenium through Debian's chromedriver: nothing downloaded at
run time (Selenium Manager is never asked: both paths are given). The flags keep a headless
Chromium, run as root on a machine without network, from reaching for Google's hosts."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from selenium.webdriver.chrome.webdriver import WebDriver

CHROMIUM = "chromium"
CHROMEDRIVER = "chromedriver"
INSTALL_HINT = "apt-get install chromium chromium-driver (.ci/browser-up does it)"
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--force-device-scale-factor=1")


def missing() -> str | None:
    """Why no browser can be started here, or None."""
    for program in (CHROMIUM, CHROMEDRIVER):
        if shutil.which(program) is None:
            return f"{program} is not installed ({INSTALL_HINT})"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (it comes with the test extra)"
    return None


@contextmanager
def chrome(*, width: int = 1200, height: int = 1000, javascript: bool = True
           ) -> Iterator[WebDriver]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    os.environ.setdefault("SE_OFFLINE", "true")  # Selenium Manager: never reach out
    with tempfile.TemporaryDirectory(prefix="selfcorrect-chromium-") as profile:
        options = webdriver.ChromeOptions()
        options.binary_location = shutil.which(CHROMIUM) or CHROMIUM
        for flag in (*FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}"):
            options.add_argument(flag)
        if not javascript:
            options.add_experimental_option(
                "prefs", {"profile.managed_default_content_settings.javascript": 2})
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        driver = webdriver.Chrome(options=options, service=Service(
            shutil.which(CHROMEDRIVER) or CHROMEDRIVER))
        try:
            yield driver
        finally:
            driver.quit()
