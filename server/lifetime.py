"""Child processes that end with their parent.

A server's solver workers and `--workers N` server processes are children of one process. When
that process ends without stopping them (killed with SIGKILL, or crashed), they would live on as
orphans: solver workers idle for ever on their queue (each holds its end of the queue's pipe, so
it never reads end-of-file), server workers still holding the port and database connections.
`exit_with_parent` ends a child once its parent is gone: POSIX re-parents an orphan, so its
parent id changes.
"""

from __future__ import annotations

import os
import threading
import time

CHECK_S = 1.0


def exit_with_parent(parent: int) -> None:
    """Ends this process (without clean-up: there is nobody left to answer) within CHECK_S of
    `parent` ending; the check runs in a daemon thread."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(CHECK_S)
        os._exit(0)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def start_worker(niceness: int, parent: int) -> None:
    """The initializer of a solver worker: a lower priority than the server's, and an end with
    the server's process."""
    os.nice(niceness)
    exit_with_parent(parent)
