"""The browser tier: Debian's Chromium and chromedriver, Selenium from the test extra, axe-core
from npm. Missing, these tests skip locally and fail under CI=true (as Docker's do): a CI run
that silently skipped the browser would prove nothing about the pages."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from tests.browser import axe, chrome
from tests.browser.checks import console

if TYPE_CHECKING:
    from selenium.webdriver.chrome.webdriver import WebDriver


def _unavailable(reason: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true but {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/browser/" in item.nodeid:
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def browser() -> Iterator[WebDriver]:
    """One Chromium for the session (starting one takes a second or two)."""
    reason = chrome.missing()
    if reason is not None:
        _unavailable(reason)
    with chrome.chrome() as driver:
        yield driver


@pytest.fixture
def page(browser: WebDriver) -> Iterator[WebDriver]:
    """The session's browser with its console log emptied before and after each test."""
    console(browser)
    yield browser
    console(browser)


@pytest.fixture(scope="session")
def axe_source() -> str:
    try:
        return axe.axe_source()
    except axe.AxeUnavailable as exc:
        _unavailable(str(exc))
        raise
