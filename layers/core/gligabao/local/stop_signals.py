"""SIGTERM and SIGINT stop a local server (`gligabao serve`, `gligabao explore`) as Ctrl-C does."""

from __future__ import annotations

import signal
import threading


def stop_on_signals() -> None:
    """SIGTERM (`kill`, a service manager) and SIGINT raise KeyboardInterrupt in the main thread."""

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    if threading.current_thread() is threading.main_thread():  # signals reach the main thread only
        signal.signal(signal.SIGTERM, interrupt)
        # Ctrl-C too, even where it was ignored at start (a shell's background job `make serve &`
        # inherits SIGINT ignored, and Python then never raises KeyboardInterrupt).
        signal.signal(signal.SIGINT, interrupt)
