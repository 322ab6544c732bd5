"""A seccomp filter for a notebook's process: no kernel keys, no user namespaces.

The driver (:mod:`.driver`) installs it after giving up its capabilities and before any
student code runs; every process and thread the notebook starts inherits it, and nothing can
remove it. It refuses

* ``add_key``, ``request_key`` and ``keyctl`` (``EPERM``): the kernel's keyrings are per user
  id, not per namespace, so a key one notebook stored could be read by the next notebook of
  the same user id, and outlive the grader; a fresh session keyring would not hide the per-uid
  user keyring;
* ``unshare`` and ``clone`` with ``CLONE_NEWUSER`` (``EPERM``): a user namespace would give
  the notebook capabilities inside it (mounts of its own, more namespaces). bubblewrap's
  ``--disable-userns`` does the same only together with ``--unshare-user``, whose uid map
  would break the per-job user id the grader drops to as root;
* ``clone3`` outright (``ENOSYS``): its flags are in memory, out of a filter's reach; the C
  library then falls back to ``clone``, which the filter can read;
* any system call of another architecture's table (the x32 ABI, 32-bit calls on a 64-bit
  kernel: ``ENOSYS``), which would name these calls by other numbers.

x86-64 and AArch64 are known; elsewhere :func:`install` does nothing and says so.
"""
from __future__ import annotations

import ctypes
import errno
import platform
import struct

__all__ = ["install", "SYSCALLS"]

#: (audit architecture, {name: number}) of the machines the filter knows.
SYSCALLS = {
    "x86_64": (0xC000003E, {"add_key": 248, "request_key": 249, "keyctl": 250,
                            "unshare": 272, "clone": 56, "clone3": 435, "seccomp": 317}),
    "aarch64": (0xC00000B7, {"add_key": 217, "request_key": 218, "keyctl": 219,
                             "unshare": 97, "clone": 220, "clone3": 435, "seccomp": 277}),
}

_CLONE_NEWUSER = 0x10000000
_X32_BIT = 0x40000000
_LD_W_ABS, _JEQ_K, _JGE_K, _JSET_K, _RET_K = 0x20, 0x15, 0x35, 0x45, 0x06
_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000


def _instruction(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("HBBI", code, jt, jf, k)


def program(machine: str) -> bytes:
    """The filter's BPF program for ``machine`` (``platform.machine()``), as bytes."""
    arch, numbers = SYSCALLS[machine]
    eperm, enosys = _ERRNO | errno.EPERM, _ERRNO | errno.ENOSYS
    code = [
        (_LD_W_ABS, 0, 0, 4),                       # the architecture
        (_JEQ_K, 1, 0, arch),
        (_RET_K, 0, 0, enosys),                     # another table: refused
        (_LD_W_ABS, 0, 0, 0),                       # the system call's number
    ]
    if machine == "x86_64":
        code += [(_JGE_K, 0, 1, _X32_BIT), (_RET_K, 0, 0, enosys)]
    refused = [numbers["add_key"], numbers["request_key"], numbers["keyctl"]]
    for number in refused:
        code += [(_JEQ_K, 0, 1, number), (_RET_K, 0, 0, eperm)]
    code += [(_JEQ_K, 0, 1, numbers["clone3"]), (_RET_K, 0, 0, enosys)]
    # unshare(flags) and clone(flags, ...): the flags are the first argument (its low word)
    code += [(_JEQ_K, 1, 0, numbers["unshare"]), (_JEQ_K, 0, 3, numbers["clone"]),
             (_LD_W_ABS, 0, 0, 16),
             (_JSET_K, 0, 1, _CLONE_NEWUSER), (_RET_K, 0, 0, eperm),
             (_RET_K, 0, 0, _ALLOW)]
    return b"".join(_instruction(*step) for step in code)


def install() -> str:
    """Install the filter in this process (all its threads); return "" or why it could not.

    Needs ``no_new_privs`` (set by :func:`.driver.drop_privileges`) unless the process holds
    ``CAP_SYS_ADMIN``.
    """
    machine = platform.machine()
    if machine not in SYSCALLS:
        return f"no seccomp filter for a {machine} machine"
    code = program(machine)

    class Filter(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]

    prog = Filter(len(code) // 8, code)
    libc = ctypes.CDLL(None, use_errno=True)
    set_mode_filter, tsync = 1, 1
    result = libc.syscall(ctypes.c_long(SYSCALLS[machine][1]["seccomp"]),
                          ctypes.c_uint(set_mode_filter), ctypes.c_uint(tsync),
                          ctypes.byref(prog))
    if result != 0:
        return f"seccomp: {errno.errorcode.get(ctypes.get_errno(), ctypes.get_errno())}"
    return ""
