"""The UI in a real headless browser: Debian's Chromium driven by Playwright.

The app runs as `rag ui` in a subprocess over a copy of the sample index. The test types a
question, waits for the streamed answer, checks the citation and the highlighted sentence in the
sources panel, clicks the marker, asks a follow-up, then applies a filter that excludes
everything. A screenshot is saved to artifacts/ui.png."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT, free_port, wait_for_http

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARTIFACTS = ROOT / "artifacts"


@pytest.fixture
def ui_url(sample_home: Path, tmp_path: Path) -> Iterator[str]:
    home = tmp_path / "ui-home"
    shutil.copytree(sample_home, home)
    port = free_port()
    log = (tmp_path / "ui.log").open("w")  # read it when the server fails to start
    proc = subprocess.Popen([sys.executable, "-m", "rag.cli", "ui", "--port", str(port)], cwd=ROOT,
                            env={**os.environ, "RAG_HOME": str(home)}, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/"
    wait_for_http(url, proc, timeout=90)
    yield url
    proc.terminate()
    proc.wait(timeout=30)


def test_chat_in_a_real_browser(ui_url: str) -> None:
    if not os.path.exists(CHROMIUM):
        if os.environ.get("RAG_REQUIRE_BROWSER"):
            pytest.fail(f"{CHROMIUM} is missing: `apt-get install chromium` (.ci/run does this)")
        pytest.skip(f"{CHROMIUM} is missing: install Debian's chromium to run the browser test")
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM, headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync"],
        )
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(ui_url)
        expect(page.locator("#status-line")).to_contain_text("96 papers indexed", timeout=30000)
        question = page.locator("#question textarea")
        question.fill("Which paper introduced PersuasionBench?")
        page.locator("#ask").click()
        expect(page.locator("#chat a.cite").first).to_be_visible(timeout=60000)
        expect(page.locator("#chat")).to_contain_text("PersuasionBench")
        card = page.locator("#sources .source-card").first
        expect(card).to_contain_text("PersuasionBench")
        expect(card.locator("mark")).to_contain_text("introduce")
        page.locator("#chat a.cite").first.click()
        expect(page.locator("#sources .source-card.selected")).to_have_count(1)

        question.fill("How often does GPT-4o lose to the best human persuader?")
        page.locator("#ask").click()
        expect(page.locator("#sources mark")).to_contain_text("36%", timeout=60000)
        expect(page.locator("#chat")).to_contain_text("36%")
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "ui.png"), full_page=True)

        page.locator("#filters").click()
        page.locator("#f-author textarea, #f-author input").first.fill("Nobody Atall")
        question.fill("Which paper introduced PersuasionBench?")
        page.locator("#ask").click()
        expect(page.locator("#sources")).to_contain_text("Nothing found", timeout=60000)
        expect(page.locator("#chat")).to_contain_text("Nothing found")
        page.screenshot(path=str(ARTIFACTS / "ui-filtered.png"), full_page=True)
        browser.close()
