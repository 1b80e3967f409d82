"""What a command that waits on its run says when it is interrupted first: the run is not
stopped by the command's end, so the user is told where it goes on and how to end it."""

from __future__ import annotations

import sys

from engine.errors import EngineError


def say_left_running(command: str, run_id: str, *, engine_running: bool) -> None:
    """One line on stderr naming the run, who goes on with it, and `apollo cancel`."""
    print(f"apollo {command}: run {run_id} {left_words(run_id, engine_running=engine_running)}", file=sys.stderr,
          flush=True)


def left_words(run_id: str, *, engine_running: bool) -> str:
    """Where a run the command stops waiting for goes on, and how to end it."""
    if engine_running:
        where = f"goes on in the running engine (`apollo show {run_id}` shows how far it got)"
    else:
        where = ("is left unfinished: `apollo runs` lists it as running, and workers started later "
                 "(`apollo up`, another solve or run here) go on with it")
    return f"{where}; `apollo cancel {run_id} --reason TEXT` ends it"


def timed_out(exc: TimeoutError, run_id: str, *, engine_running: bool) -> EngineError:
    """The one line of a command whose ``--timeout`` passed: the run is not stopped by that either."""
    return EngineError(f"{exc}: the run {left_words(run_id, engine_running=engine_running)}")


def say_left_unfinished(command: str, run_ids: list[str], *, engine_running: bool) -> None:
    """One line on stderr: the runs an interrupted `apollo run` or `rollouts` leaves, where they go on,
    and how to take them up again (the same command resumes them) or end them."""
    where = ("go on in the running engine" if engine_running else
             "are left unfinished: `apollo runs` lists them as running, and workers started later go on with them")
    shown = ", ".join(run_ids[:3]) + (f" and {len(run_ids) - 3} more" if len(run_ids) > 3 else "")
    print(f"apollo {command}: {len(run_ids)} run(s) submitted and not ended ({shown}) {where}; the same command "
          "resumes them and reports the rest, `apollo cancel RUN` ends one", file=sys.stderr, flush=True)
