"""A small seccomp filter for the worker: refuse the system calls whose objects outlive a call.

Kernel keyrings are not namespaced: a key added to the user keyring of the call's uid would
still be there for the next call that gets the same uid. The worker therefore loses
``add_key``, ``request_key`` and ``keyctl`` (``EPERM``). When the call has no IPC namespace
of its own, System V IPC and POSIX message queues are refused as well; when it has no memory
cgroup, so do the ways to hold memory outside ``RLIMIT_AS`` that nothing else caps
(``memfd_create``, ``memfd_secret``).

Always refused, because they only widen the kernel's attack surface and no snippet needs
them: new user namespaces (inside one the code would hold ``CAP_NET_ADMIN`` and
``CAP_SYS_ADMIN`` over namespaces of its own, which is how most unprivileged kernel exploits
reach netfilter, mounts and the like; also, their tmpfs mounts are unsized), io_uring,
``userfaultfd`` (a classic tool to win kernel races), ``bpf`` and ``perf_event_open``.

The filter is plain classic BPF built here (no libseccomp); other architectures and x32
calls get ``ENOSYS``.
"""

from __future__ import annotations

import ctypes
import errno
import platform
import struct

from engine.sandbox import syscalls as sc

KEYRINGS = ("add_key", "request_key", "keyctl")
SYSV_IPC = ("shmget", "semget", "msgget", "mq_open")
UNCAPPED_MEMORY = ("memfd_create", "memfd_secret")
KERNEL_SURFACE = (
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "userfaultfd",
    "bpf",
    "perf_event_open",
)
"""Refused in every call: kernel attack surface that no snippet needs."""
CLONE_NEWUSER = 0x10000000

_NUMBERS = {
    "x86_64": {
        "add_key": 248,
        "request_key": 249,
        "keyctl": 250,
        "shmget": 29,
        "semget": 64,
        "msgget": 68,
        "mq_open": 240,
        "memfd_create": 319,
        "memfd_secret": 447,
        "unshare": 272,
        "clone": 56,
        "clone3": 435,
        "io_uring_setup": 425,
        "io_uring_enter": 426,
        "io_uring_register": 427,
        "userfaultfd": 323,
        "bpf": 321,
        "perf_event_open": 298,
    },
    "aarch64": {
        "add_key": 217,
        "request_key": 218,
        "keyctl": 219,
        "shmget": 194,
        "semget": 190,
        "msgget": 186,
        "mq_open": 180,
        "memfd_create": 279,
        "memfd_secret": 447,
        "unshare": 97,
        "clone": 220,
        "clone3": 435,
        "io_uring_setup": 425,
        "io_uring_enter": 426,
        "io_uring_register": 427,
        "userfaultfd": 282,
        "bpf": 280,
        "perf_event_open": 241,
    },
}
_AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
_X32_BIT = 0x40000000

# classic BPF opcodes
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_JSET_K = 0x45
_RET_K = 0x06
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
_OFF_NR, _OFF_ARCH, _OFF_ARG0 = 0, 4, 16

PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def build(machine: str, refused: tuple[str, ...], refuse_user_namespaces: bool) -> bytes:
    """The filter program (instructions, packed) for ``machine``."""
    numbers = _NUMBERS[machine]
    deny = _op(_RET_K, _RET_ERRNO | errno.EPERM)
    nosys = _op(_RET_K, _RET_ERRNO | errno.ENOSYS)
    allow = _op(_RET_K, _RET_ALLOW)
    body: list[bytes] = []
    for name in refused:
        body += [_op(_JEQ_K, numbers[name], jt=0, jf=1), deny]
    if refuse_user_namespaces:
        body.append(_op(_JEQ_K, numbers["clone3"], jt=0, jf=1))  # flags not inspectable
        body.append(nosys)  # the C library then falls back to clone()
        for name in ("unshare", "clone"):
            body.append(_op(_JEQ_K, numbers[name], jt=0, jf=3))
            body.append(_op(_LD_W_ABS, _OFF_ARG0))
            body.append(_op(_JSET_K, CLONE_NEWUSER, jt=0, jf=1))
            body.append(deny)
            body.append(_op(_LD_W_ABS, _OFF_NR))  # restore the number for the next test
    head = [
        _op(_LD_W_ABS, _OFF_ARCH),
        _op(_JEQ_K, _AUDIT_ARCH[machine], jt=1, jf=0),
        nosys,
        _op(_LD_W_ABS, _OFF_NR),
    ]
    if machine == "x86_64":
        head += [_op(_JGE_K, _X32_BIT, jt=0, jf=1), nosys]
    return b"".join([*head, *body, allow])


def install(refused: tuple[str, ...], refuse_user_namespaces: bool = True) -> bool | str:
    """Load the filter into this process (needs no_new_privs); True, or why not."""
    machine = platform.machine()
    if machine not in _NUMBERS:
        return f"unavailable: no syscall table for {machine}"
    program = build(machine, refused, refuse_user_namespaces)
    count = len(program) // 8
    buffer = ctypes.create_string_buffer(program, len(program))

    class _Prog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    prog = _Prog(count, ctypes.cast(buffer, ctypes.c_void_p))
    libc = sc.libc()
    result = libc.prctl(PR_SET_SECCOMP, ctypes.c_ulong(SECCOMP_MODE_FILTER), ctypes.byref(prog), 0, 0)
    if result != 0:
        return f"failed: {errno.errorcode.get(ctypes.get_errno(), ctypes.get_errno())}"
    return True
