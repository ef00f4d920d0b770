"""The review screen end to end in a real browser: Debian's headless Chromium driven by Selenium
(chromium-driver), against uvicorn on loopback and the real database. Sign in, open the flagged
answer, see its claim marked unsupported with the reason, open the cited passage (an HTMX
request) with its quote marked, approve, and see the answer leave the queue. The run writes the
screenshots the README shows (docs/screenshots/)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest
from conftest import PROJECT_ROOT, cli_database
from helpers import query
from review_demo import PASSWORD, ReviewDemo, build, serving
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ready
from selenium.webdriver.support.ui import WebDriverWait

SCREENSHOTS = PROJECT_ROOT / "docs" / "screenshots"


@pytest.fixture(scope="module")
def world(pg_server_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ReviewDemo]:
    with cli_database(pg_server_url) as url:
        yield build(tmp_path_factory.mktemp("browser"), url)


@pytest.fixture
def browser(tmp_path) -> Iterator[webdriver.Chrome]:
    """Headless Chromium (scripts/setup.sh installs Debian's chromium and chromium-driver)."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_path = shutil.which("chromedriver")
    assert chromium and driver_path, "chromium and chromium-driver are needed: apt-get install chromium chromium-driver"
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     "--window-size=1400,1000", f"--user-data-dir={tmp_path / 'profile'}"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def test_sign_in_open_a_flagged_answer_approve_it_and_see_it_leave_the_queue(world: ReviewDemo, browser) -> None:
    wait = WebDriverWait(browser, 60)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with serving(world.url) as base:
        browser.get(base + "/")
        wait.until(ready.presence_of_element_located((By.ID, "sign-in")))
        browser.find_element(By.ID, "name").send_keys("rita")
        browser.find_element(By.ID, "password").send_keys(PASSWORD)
        browser.find_element(By.ID, "sign-in").click()
        row = wait.until(ready.presence_of_element_located((By.ID, f"answer-row-{world.flagged}")))
        assert "flagged" in row.text
        browser.save_screenshot(str(SCREENSHOTS / "review-queue.png"))

        row.find_element(By.LINK_TEXT, f"#{world.flagged}").click()
        claim = wait.until(ready.presence_of_element_located((By.ID, "claim-2")))
        assert "claim-unsupported" in claim.get_attribute("class").split()
        assert world.unsupported_claim in claim.text and "unsupported" in claim.text
        assert "does not state the claim" in claim.text and "195" in claim.text
        assert "claim-supported" in browser.find_element(By.ID, "claim-1").get_attribute("class").split()
        browser.find_element(By.ID, "cite-1-1").click()  # HTMX: the passage replaces the hint, in place
        quoted = wait.until(ready.presence_of_element_located((By.CSS_SELECTOR, "#passage-view mark#quoted")))
        assert " ".join(quoted.text.split()).lower() == "approved in advance by the head of department"
        assert browser.current_url.endswith(f"/answers/{world.flagged}")  # no navigation: a partial
        browser.save_screenshot(str(SCREENSHOTS / "review-answer.png"))

        browser.find_element(By.ID, "decision-approve").click()
        browser.find_element(By.ID, "comment").send_keys("checked against the rate table")
        browser.find_element(By.ID, "decide").click()
        wait.until(ready.presence_of_element_located((By.ID, "decided")))
        assert not browser.find_elements(By.ID, f"answer-row-{world.flagged}")
    assert query(world.url, "SELECT decision, reviewer, comment FROM review_decisions WHERE answer_id = %s",
                 world.flagged) == [("approve", "rita", "checked against the rate table")]
    assert (SCREENSHOTS / "review-queue.png").stat().st_size > 10_000
    assert (SCREENSHOTS / "review-answer.png").stat().st_size > 10_000
