"""graphshim from Python: the state of libgraphshim.so in this process.

graphshim works on unmodified programs; this module is for a program that wants
to know whether it runs under graphshim, read its counters, or keep a region of
its work out of graphs.  It calls the library's public API (include/graphshim.h)
through ctypes, in the symbols of the running process, so the library must have
been preloaded: run the program with the ``graphshim`` command
(``graphshim run -- python train.py``) or ``LD_PRELOAD=<library_path()>``.

Where the library is not loaded, ``pause()``, ``resume()`` and ``counters()``
raise ``NotLoadedError``, ``active()`` returns False, and ``paused()`` does
nothing.

The engine starts at the process's first CUDA call: before it, ``active()`` is
False and ``counters()`` all zero.
"""
import contextlib
import ctypes
import functools
import os

from ._version import __version__

__all__ = ["NotLoadedError", "active", "counters", "library_path", "pause", "paused", "resume",
           "__version__"]

_HERE = os.path.dirname(os.path.abspath(__file__))


class NotLoadedError(RuntimeError):
    """libgraphshim.so is not loaded in this process."""


class _Stats(ctypes.Structure):
    # struct gs_stats of include/graphshim.h, member for member.
    _fields_ = [
        ("ops", ctypes.c_ulonglong),
        ("ops_held", ctypes.c_ulonglong),
        ("ops_replayed", ctypes.c_ulonglong),
        ("replays", ctypes.c_ulonglong),
        ("graphs", ctypes.c_ulonglong),
        ("hit_rate", ctypes.c_double),
    ]


class _Api:
    """The library's gs_* functions, or None where it is not loaded."""

    def __init__(self, process):
        self.stats = process.gs_stats
        self.stats.argtypes = [ctypes.POINTER(_Stats)]
        self.stats.restype = ctypes.c_int
        self.pause = process.gs_pause
        self.pause.argtypes = []
        self.pause.restype = None
        self.resume = process.gs_resume
        self.resume.argtypes = []
        self.resume.restype = None


@functools.lru_cache(maxsize=None)
def _lookup():
    """The _Api of the process, or None; looked up once (a preload cannot
    appear later)."""
    try:
        return _Api(ctypes.CDLL(None))
    except (OSError, AttributeError):
        return None


def _api():
    api = _lookup()
    if api is None:
        raise NotLoadedError(
            "graphshim: libgraphshim.so is not loaded in this process; run the program under it: "
            "graphshim run -- PROGRAM [ARGS...], or LD_PRELOAD=" + library_path())
    return api


def library_path():
    """The absolute path of the libgraphshim.so this package carries, for
    LD_PRELOAD (use it first in the list)."""
    return os.path.join(_HERE, "libgraphshim.so")


def active():
    """True where libgraphshim.so is loaded in this process and its engine runs:
    after the first CUDA call, unless it is off (GRAPHSHIM=0, or a CUDA driver
    older than 12.4, which it says on stderr)."""
    api = _lookup()
    return api is not None and api.stats(ctypes.byref(_Stats())) == 0


def counters():
    """The engine's totals since the process started, summed over streams, as a
    dict: ops (ops the engine saw, not counting those issued while paused),
    ops_held, ops_replayed (run as part of a graph), replays (graph launches),
    graphs (captured) and hit_rate (ops_replayed / ops).  All zero while the
    engine does not run (see active()).  Raises NotLoadedError where the library
    is not loaded."""
    st = _Stats()
    _api().stats(ctypes.byref(st))
    return {name: getattr(st, name) for name, _ in _Stats._fields_}


def pause():
    """Issues everything held, in order, and holds nothing until resume().
    Calls nest: work is held again once each pause() has had its resume().
    Raises NotLoadedError where the library is not loaded."""
    _api().pause()


def resume():
    """Ends one pause().  Raises NotLoadedError where the library is not
    loaded."""
    _api().resume()


@contextlib.contextmanager
def paused():
    """pause() on entry and resume() on exit, exceptions included.  Where the
    library is not loaded it does nothing: the work in the block runs eagerly
    either way."""
    api = _lookup()
    if api is None:
        yield
        return
    api.pause()
    try:
        yield
    finally:
        api.resume()
