"""One warm process per job that forks a fresh sandbox for each notebook.

Starting Python, NumPy, Matplotlib, IPython and the engine took about two seconds of every
notebook (more than most lessons' own cells). The zygote is started once per job, inside a
bubblewrap sandbox like the one :mod:`.sandbox` makes (same file system view, same allow-listed
environment, no network), imports all of that once and then, for each notebook, forks:

* the child ``C`` unshares new mount, PID, IPC, network and UTS namespaces and forks
* ``init`` (PID 1 of the new PID namespace), which mounts a fresh ``/proc`` (only this
  notebook's processes in it), a fresh empty ``/tmp`` (a ``tmpfs`` of its own, the only
  writable place: nothing a previous notebook wrote is there) and a fresh ``/dev/shm``, and
  forks
* the driver ``D`` (:func:`.driver.main`), which sets the limits, drops to the job's user id
  and every capability (:func:`.driver.drop_privileges`) and only then runs student code.

When the driver ends, ``init`` ends, and the kernel kills everything else in that PID
namespace (``setsid`` and double forks included) before the zygote hears that the notebook is
over. Only then does the grader send the next notebook. A notebook cannot reach the zygote:
the zygote's PID is not in its namespace, it runs as another user id (as root) or holds no
capabilities (without root), and its control socket is closed before any student code runs.
What a notebook does to its own copy of the imported modules dies with it.

Protocol on the control socket (a Unix socket pair; the grader holds the other end): the grader
sends ``b"run"`` with two file descriptors attached (``SCM_RIGHTS``): the read end of the job
pipe, which becomes the driver's standard input, and the write end of the result pipe, its
standard output; each notebook gets pipes of its own, so nothing one notebook writes can be
read as another's. The zygote answers ``b"exit <status> <cpu seconds>\\n"`` once everything of
that notebook has ended (status as :attr:`subprocess.Popen.returncode`: negative for a
signal). Before the
first notebook the zygote answers ``b"ready <error>\\n"``: empty when it could make a sandbox
of its own (a kernel or container may forbid the namespaces), and the grader then uses it.
"""
from __future__ import annotations

import contextlib
import ctypes
import importlib
import json
import os
import random
import signal
import socket
import sys
from typing import Any

__all__ = ["main", "WARM"]

#: What the zygote imports once, for every notebook of its job (missing ones are skipped).
#: Never the demos (their stand-in in the sandbox has no reference) nor a judge (absent there).
WARM = ("numpy", "matplotlib", "matplotlib.pyplot", "IPython.core.interactiveshell",
        "traitlets.config", "minigrad", "minigrad.functional", "minigrad.nn", "minigrad.optim",
        "minigrad.data", "minigrad.graph", "minigrad.gradcheck", "minigrad.course.scalar",
        "minigrad.course.byhand", "minigrad.course.checks",
        "minigrad.course.checks.lesson1", "minigrad.course.checks.lesson2",
        "minigrad.course.checks.lesson3", "minigrad.course.checks.lesson4",
        "minigrad.course.widgets", "minigrad.course.grading.driver",
        "minigrad.course.grading.protocol")

_CLONE_NEWNS, _CLONE_NEWUTS, _CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
_CLONE_NEWPID, _CLONE_NEWNET = 0x20000000, 0x40000000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 32, 4096, 16384, 1 << 18
_libc = ctypes.CDLL(None, use_errno=True)


def _call(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def _mount(source: str | None, target: str, kind: str | None, flags: int,
           data: str | None = None) -> None:
    def enc(text: str | None) -> bytes | None:
        return text.encode() if text is not None else None

    _call(_libc.mount(enc(source), enc(target), enc(kind), flags, enc(data)), f"mount {target}")


def _isolate(config: dict[str, Any]) -> int:
    """In the child: new namespaces; fork init; return init's exit status (never returns in
    init)."""
    _call(_libc.unshare(_CLONE_NEWNS | _CLONE_NEWPID | _CLONE_NEWIPC | _CLONE_NEWNET
                        | _CLONE_NEWUTS), "unshare")
    _mount(None, "/", None, _MS_REC | _MS_PRIVATE)   # nothing mounted here leaks out
    pid = os.fork()
    if pid == 0:
        try:
            code = _init(config)
        except BaseException:  # noqa: BLE001 - a setup failure is an exit status
            code = 120
        os._exit(code)
    return _status(os.waitpid(pid, 0)[1])


def _status(wait_status: int) -> int:
    """An exit status as a number 0-255 (128 + n for a signal, as a shell says it)."""
    if os.WIFSIGNALED(wait_status):
        return 128 + os.WTERMSIG(wait_status)
    return os.WEXITSTATUS(wait_status) if os.WIFEXITED(wait_status) else 120


def _fresh_file_system(config: dict[str, Any]) -> None:
    """In init: this PID namespace's /proc, an empty /tmp of its own, an empty /dev/shm."""
    _mount("proc", "/proc", "proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)
    # Read-only folders that live under /tmp (a checkout or virtual environment there) are
    # opened before the new /tmp covers them, and bound again on top of it.
    keep = {path: os.open(path, os.O_PATH | os.O_DIRECTORY) for path in config["under_tmp"]}
    flags = _MS_NOSUID | _MS_NODEV
    _mount("tmpfs", "/tmp", "tmpfs", flags, f"mode=1777,size={int(config['tmp_bytes'])}")
    for path, fd in keep.items():
        os.makedirs(path, mode=0o755, exist_ok=True)
        _mount(f"/proc/self/fd/{fd}", path, None, _MS_BIND | _MS_REC)
        _mount(None, path, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | flags)
        os.close(fd)
    if os.path.isdir("/dev/shm"):
        _mount("tmpfs", "/dev/shm", "tmpfs", flags, "mode=1777,size=67108864")
    for folder in (".matplotlib", ".ipython"):   # (no capability to chown: open to this
        os.mkdir(f"/tmp/{folder}")                   # notebook's processes, the only ones)
        os.chmod(f"/tmp/{folder}", 0o777)


def _init(config: dict[str, Any]) -> int:
    """PID 1 of the notebook's namespace: set it up, fork the driver, reap until it ends."""
    _fresh_file_system(config)
    if config.get("probe"):
        return 0
    driver = os.fork()
    if driver == 0:
        try:
            _driver(config)
        finally:
            os._exit(121)
    while True:   # reap orphans (they are reparented to PID 1) until the driver has ended
        try:
            pid, wait_status = os.wait()
        except ChildProcessError:
            return 120
        if pid == driver:
            return _status(wait_status)   # leaving kills the rest of the namespace


def _driver(config: dict[str, Any]) -> None:
    """The notebook's process: its pipes as standard input and output, then the driver."""
    os.dup2(config["job_fd"], 0)
    os.dup2(config["out_fd"], 1)
    os.closerange(3, 1 << 16)   # the control socket, the zygote's files: none of them
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    random.seed()               # a fresh process draws its own; a fork would share them
    with contextlib.suppress(Exception):
        import numpy
        numpy.random.seed()
    from minigrad.course.grading import driver
    driver.main()


def _warm() -> None:
    for name in WARM:
        with contextlib.suppress(Exception):
            importlib.import_module(name)


def _receive(control: socket.socket) -> tuple[bytes, list[int]]:
    message, fds, _, _ = socket.recv_fds(control, 64, 2)
    return message, list(fds)


def main() -> None:
    """Serve the grader on the control socket (standard input) until it closes it."""
    control = socket.socket(fileno=os.dup(0))
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    config = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    _warm()
    # can this sandbox make sandboxes of its own? (a kernel or container may forbid it)
    error = ""
    child = os.fork()
    if child == 0:
        try:
            code = _isolate({**config, "probe": True})
        except BaseException as exc:  # noqa: BLE001
            os.write(2, str(exc).encode())
            code = 122
        os._exit(code)
    status = _status(os.waitpid(child, 0)[1])
    if status != 0:
        error = f"a notebook's namespaces could not be made inside the sandbox (status {status})"
    control.sendall(f"ready {error}\n".encode())
    if error:
        return
    while True:
        try:
            message, fds = _receive(control)
        except OSError:
            return
        if message != b"run" or len(fds) != 2:
            for fd in fds:
                os.close(fd)
            return   # the grader closed the socket, or sent something else: stop
        child = os.fork()
        if child == 0:
            try:
                control.close()
                code = _isolate({**config, "job_fd": fds[0], "out_fd": fds[1]})
            except BaseException:  # noqa: BLE001
                code = 122
            os._exit(code)
        for fd in fds:
            os.close(fd)
        _, wait_status, usage = os.wait4(child, 0)
        status = _status(wait_status)
        code = -(status - 128) if status > 128 and status - 128 in signal.valid_signals() \
            else status
        try:   # with the CPU time the notebook's processes used (they have all been reaped)
            control.sendall(f"exit {code} {usage.ru_utime + usage.ru_stime:.3f}\n".encode())
        except OSError:
            return


if __name__ == "__main__":
    main()


# ---------------------------------------------------------------------------------------------
# The grader's end


class ZygoteError(RuntimeError):
    """A zygote could not start, or cannot make a sandbox of its own for a notebook."""


class Zygote:
    """The grader's end of one zygote: start it, run notebooks through it one at a time, end it.

    Parameters
    ----------
    argv, env, cwd
        How to start it (:func:`.sandbox.command` with ``zygote=...``).
    timeout : float
        Seconds it may take to import everything and say it is ready.
    on_close : callable, optional
        Called once when it has ended (to give back its user id and folder).
    """

    def __init__(self, argv: list[str], env: dict[str, str], cwd: str, timeout: float,
                 on_close: Any = None, key: Any = None) -> None:
        import subprocess

        self.key, self._on_close, self._buffer, self._closed = key, on_close, b"", False
        #: The user id its notebooks run as (as root; None otherwise), set by the runner.
        self.uid: int | None = None
        #: The cgroup that counts its notebooks' memory, processes and CPU (None: none).
        self.cgroup: Any = None
        ours, theirs = socket.socketpair()
        try:
            self.process = subprocess.Popen(argv, stdin=theirs.fileno(),
                                            stdout=subprocess.DEVNULL,
                                            stderr=subprocess.DEVNULL, env=env, cwd=cwd,
                                            start_new_session=True)
        except OSError as exc:
            ours.close()
            self._finish()
            raise ZygoteError(f"{type(exc).__name__}: {exc.strerror or exc}") from exc
        finally:
            theirs.close()
        self.control = ours
        line = self.line(timeout)
        if line is None or not line.startswith("ready"):
            self.kill()
            raise ZygoteError("the zygote did not start within "
                              f"{timeout:g} s (exit status {self.process.poll()})")
        if line[len("ready"):].strip():
            self.kill()
            raise ZygoteError(line[len("ready"):].strip())

    def line(self, timeout: float | None) -> str | None:
        """The zygote's next line; None at its end, or when ``timeout`` seconds pass first."""
        import select
        import time

        deadline = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self._buffer:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            if self._closed or not select.select([self.control], [], [], wait)[0]:
                return None
            try:
                data = self.control.recv(4096)
            except OSError:
                data = b""
            if not data:
                return None
            self._buffer += data
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode("ascii", "replace")

    def alive(self) -> bool:
        """Whether it is running and can take a notebook."""
        return not self._closed and self.process.poll() is None

    def run(self) -> "Run":
        """Start a notebook's sandbox; write its job to ``.stdin``, read results from
        ``.stdout``."""
        job_r, job_w = os.pipe()
        out_r, out_w = os.pipe()
        try:
            socket.send_fds(self.control, [b"run"], [job_r, out_w])
        except OSError as exc:
            for fd in (job_r, job_w, out_r, out_w):
                os.close(fd)
            self.kill()
            raise ZygoteError(f"the zygote has ended ({exc})") from exc
        os.close(job_r)
        os.close(out_w)
        return Run(self, job_w, out_r)

    def kill(self) -> None:
        """End it and everything it started, now."""
        import subprocess

        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=10)
        self._finish()

    def close(self) -> None:
        """Let it end (it stops when its control socket closes); kill it if it lingers."""
        import subprocess

        if not self._closed:
            with contextlib.suppress(OSError):
                self.control.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=5)
        self.kill()

    def _finish(self) -> None:
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(AttributeError, OSError):
            self.control.close()
        if self._on_close is not None:
            self._on_close()


class Run:
    """One notebook running in a zygote's fork, with the parts of :class:`subprocess.Popen`
    the runner uses: ``stdin``, ``stdout``, ``pid`` (the zygote's), ``poll``, ``wait``, ``kill``.

    ``returncode`` is set when the zygote says that everything of the notebook has ended;
    :meth:`kill` ends the whole zygote (a notebook that does not answer cannot be trusted to
    leave its zygote fit for the next one).
    """

    def __init__(self, zygote: Zygote, job_w: int, out_r: int) -> None:
        self.zygote, self.pid = zygote, zygote.process.pid
        self.stdin = os.fdopen(job_w, "wb")
        self.stdout = os.fdopen(out_r, "rb")
        self.returncode: int | None = None
        #: CPU seconds the notebook's processes used, once it has ended (as the zygote saw it)
        self.cpu_seconds: float | None = None

    def _take(self, timeout: float | None) -> int | None:
        if self.returncode is None:
            line = self.zygote.line(timeout)
            if line is not None and line.startswith("exit "):
                try:
                    self.returncode = int(line.split()[1])
                    self.cpu_seconds = float(line.split()[2])
                except (IndexError, ValueError):
                    self.returncode = 1 if self.returncode is None else self.returncode
            elif line is None and not self.zygote.alive():
                self.returncode = self.zygote.process.poll() or -signal.SIGKILL
        return self.returncode

    def poll(self) -> int | None:
        """The notebook's exit status, or None while it runs."""
        return self._take(0)

    def wait(self, timeout: float | None = None) -> int:
        """Wait for the notebook to end; :class:`subprocess.TimeoutExpired` after ``timeout``."""
        import subprocess

        code = self._take(timeout)
        if code is None:
            raise subprocess.TimeoutExpired("zygote", timeout or 0)
        return code

    def kill(self) -> None:
        """End the notebook, with its zygote."""
        self.zygote.kill()
        if self.returncode is None:
            self.returncode = -signal.SIGKILL
