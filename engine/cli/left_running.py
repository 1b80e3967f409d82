"""What a command that waits on its run says when it is interrupted first: the run is not
stopped by the command's end, so the user is told where it goes on and how to end it."""

from __future__ import annotations

import sys


def say_left_running(command: str, run_id: str, *, engine_running: bool) -> None:
    """One line on stderr naming the run, who goes on with it, and `apollo cancel`."""
    if engine_running:
        where = "goes on in the running engine (`apollo show {id}` shows how far it got)"
    else:
        where = ("is left unfinished: `apollo runs` lists it as running, and workers started later "
                 "(`apollo up`, another solve or run here) go on with it")
    print(f"apollo {command}: run {run_id} {where.format(id=run_id)}; "
          f"`apollo cancel {run_id} --reason TEXT` ends it", file=sys.stderr, flush=True)
