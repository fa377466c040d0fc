"""Which browser the browser tests drive: Debian's chromium (``/usr/bin/chromium``, what scripts/test.sh
installs), never a browser Playwright downloads."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
HERE = Path(__file__).resolve().parent
LAUNCH = re.compile(r"\.chromium\.launch(?:_persistent_context)?\((?P<args>[^)]*)")


def test_every_browser_test_launches_debians_chromium() -> None:
    launches = 0
    for path in sorted(HERE.glob("test_*.py")):
        text = path.read_text(encoding="utf-8")
        for match in LAUNCH.finditer(text):
            launches += 1
            assert match.group("args").startswith("executable_path=str(CHROMIUM"), path.name
            defined = 'CHROMIUM = Path("/usr/bin/chromium")' in text
            imported = re.search(r"^from test_ui_browser import \([^)]*\bCHROMIUM,", text, re.M)
            assert defined or imported, path.name
    assert launches >= 8


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium")
def test_the_launched_browser_is_the_installed_one() -> None:
    from playwright.sync_api import sync_playwright

    installed = subprocess.run([CHROMIUM, "--version"], capture_output=True, text=True, timeout=60).stdout
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            version = browser.version
        finally:
            browser.close()
    assert version and version in installed, (version, installed)
