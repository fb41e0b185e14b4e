"""What the browser tests read from the page: the console's errors, and axe-core's serious
violations (axe injected into the page under test, run there, its result returned)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from selenium.webdriver.chrome.webdriver import WebDriver

SERIOUS = ("serious", "critical")


def errors(driver: WebDriver) -> list[str]:
    return [entry["message"] for entry in console(driver) if entry["level"] == "SEVERE"]


def console(driver: WebDriver) -> list[dict[str, Any]]:
    """The browser's console since the last call (chromedriver's log; selenium leaves the
    call untyped)."""
    entries: list[dict[str, Any]] = driver.get_log("browser")  # type: ignore[no-untyped-call]
    return entries


def serious_violations(driver: WebDriver, axe_source: str) -> list[str]:
    driver.execute_script(axe_source)
    result: dict[str, Any] = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "axe.run(document, {resultTypes: ['violations']})"
        ".then(done, e => done({error: String(e)}));")
    assert "error" not in result, result
    return [f"{v['id']} ({v['impact']}): {v['help']}: "
            f"{[node['target'] for node in v['nodes']][:3]}"
            for v in result["violations"] if v["impact"] in SERIOUS]
