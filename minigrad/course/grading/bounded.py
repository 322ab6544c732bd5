"""Running a piece of the grader's own work on a submission's data under a time limit.

A judge (:class:`minigrad.course.checks.Split`'s ``judge``) and the error-hint helpers of the
report read what a notebook sent back. Their work is bounded by the probes' sizes, but a
mistake there must not let one notebook stall the batch: each runs here, in a *fork* of the
grader, and is killed when it runs past its limit (the judge's 5 s, a hint's 2 s). A thread
cannot be stopped from the outside; a forked process can, and it sees the judge exactly as the
grader does (the same objects, nothing to pickle on the way in).

The child sends back only a small JSON document (the outcome's kind and text) and leaves with
``os._exit``: nothing of the grader's (buffers, ``atexit`` hooks, other threads' locks) is
touched. The parent polls in short slices, so that a cancelled batch (Ctrl-C) stops waiting
within a tenth of a second.
"""
from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, NoReturn

__all__ = ["Bounded", "bounded"]

#: The most a bounded call may send back (a message is cut far below this).
_MAX_REPLY = 1 << 20


@dataclass
class Bounded:
    """What a bounded call came to.

    Attributes
    ----------
    kind : str
        ``"returned"`` (``value`` is what the function returned, as text), ``"raised"``
        (``error_type`` and ``value``, the exception's message), ``"timeout"`` (it ran past
        its limit and was killed), ``"cancelled"`` (the batch was stopped) or ``"crashed"``
        (the process ended without an answer: ``value`` says how).
    """

    kind: str
    value: Any = None
    error_type: str = ""
    failed: bool = False     # the exception is (a subclass of) the ``failure`` type given


def bounded(fn: Callable[..., Any], args: tuple[Any, ...], timeout: float,
            failure: type[BaseException] | None = None,
            cancelled: threading.Event | None = None) -> Bounded:
    """Call ``fn(*args)`` in a fork of this process; kill it after ``timeout`` seconds.

    ``fn`` must return something JSON can write (a string, a bool, None...). An exception it
    raises comes back as its type's name and message; ``failed`` says whether it is an
    instance of ``failure`` (a check's ``CheckFailed``). Where ``os.fork`` does not exist the
    call runs here, without a limit.
    """
    if not hasattr(os, "fork"):   # pragma: no cover - not Linux: no limit, same outcome
        return _outcome(fn, args, failure)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:   # the child: compute, answer, leave at once
        _child(fn, args, failure, read, write)
    os.close(write)
    kind, chunks, status = _wait(pid, read, timeout, cancelled)
    if kind == "timeout":
        return Bounded("timeout", f"it ran past its {timeout:g} s limit and was stopped")
    if kind == "cancelled":
        return Bounded("cancelled", "the batch was stopped")
    try:
        reply = json.loads(b"".join(chunks))
        return Bounded(str(reply["kind"]), reply["value"], str(reply["error_type"]),
                       bool(reply["failed"]))
    except (ValueError, KeyError, TypeError):
        how = (f"signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status)
               else f"exit status {os.WEXITSTATUS(status)}")
        return Bounded("crashed", f"its process ended without an answer ({how})")


def _child(fn: Callable[..., Any], args: tuple[Any, ...], failure: type[BaseException] | None,
           read: int, write: int) -> NoReturn:
    """In the fork: call ``fn``, write its outcome as JSON (at most ``_MAX_REPLY`` bytes) to
    ``write``, and leave at once, whatever happens."""
    code = 0
    try:
        os.close(read)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        outcome = _outcome(fn, args, failure)
        data = json.dumps({"kind": outcome.kind, "value": outcome.value,
                           "error_type": outcome.error_type,
                           "failed": outcome.failed}).encode("utf-8")[:_MAX_REPLY]
        view = memoryview(data)
        while view:
            view = view[os.write(write, view):]
    except BaseException:  # noqa: BLE001 - whatever happens, the child leaves now
        code = 1
    finally:
        os._exit(code)


def _wait(pid: int, read: int, timeout: float, cancelled: threading.Event | None
          ) -> tuple[str, list[bytes], int]:
    """Read the fork's answer from ``read`` until it closes, ``timeout`` passes ("timeout")
    or ``cancelled`` is set ("cancelled"; the fork is then killed); ``(kind, chunks,
    status)``, kind "" when the answer came. The fork is always waited for."""
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    kind = ""
    try:
        while True:
            if cancelled is not None and cancelled.is_set():
                kind = "cancelled"
                break
            left = deadline - time.monotonic()
            if left <= 0:
                kind = "timeout"
                break
            if select.select([read], [], [], min(0.1, left))[0]:
                chunk = os.read(read, 65536)
                if not chunk:
                    break
                chunks.append(chunk)
    finally:
        os.close(read)
        if kind:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
    return kind, chunks, status


def _outcome(fn: Callable[..., Any], args: tuple[Any, ...],
             failure: type[BaseException] | None) -> Bounded:
    try:
        value = fn(*args)
    except BaseException as exc:  # noqa: BLE001 - reported to the caller, never raised
        return Bounded("raised", str(exc), type(exc).__name__,
                       failure is not None and isinstance(exc, failure))
    return Bounded("returned", value)
