"""Debian's headless Chromium for the explorer's browser tests (Playwright's own browser download
is not used: `make test` installs the chromium package)."""

from __future__ import annotations

import os
from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ROOT = Path(__file__).resolve().parent.parent


def launch_chromium(playwright):
    return playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)


def screenshot_path() -> Path:
    """Where the screenshot test writes the explorer's picture: var/ (ignored by git) unless
    EXPLORER_SCREENSHOT names a path (`make explorer-screenshot` gives docs/explorer.png)."""
    chosen = os.environ.get("EXPLORER_SCREENSHOT")
    return (ROOT / chosen) if chosen else ROOT / "var" / "explorer.png"
