"""JVM failures, classified from the Java exception chain (class names and error classes), never from the text
PySpark renders: py4j hands us the Java exception itself (`Py4JJavaError.java_exception`, or `_origin` on the
exceptions PySpark converts), and its `getCause()` chain says which layer failed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

_MAX_DEPTH = 32  # a cause chain is short; a cycle in a broken one must not hang us


@dataclass(frozen=True)
class JavaCause:
    class_name: str
    message: str
    error_class: str | None = None  # Spark's error class, when the exception has one
    thrown_in: str = ""  # the class whose code threw it (the top stack frame)

    def line(self) -> str:
        return f"{self.class_name}: {self.message}"[:400]


def java_exception(e: BaseException) -> Any:
    """The Java exception behind a py4j or PySpark exception, or None for a Python-side failure."""
    for name in ("java_exception", "_origin"):
        j = getattr(e, name, None)
        if j is not None:
            return j
    return None


def chain(e: BaseException) -> list[JavaCause]:
    """The Java exception and its causes, outermost first ([] when `e` did not come from the JVM)."""
    j = java_exception(e)
    out: list[JavaCause] = []
    try:
        while j is not None and len(out) < _MAX_DEPTH:
            err_class = None
            if hasattr(j, "getErrorClass"):
                try:
                    err_class = j.getErrorClass()
                except Exception:  # not every Throwable has one
                    err_class = None
            frames = j.getStackTrace()
            out.append(JavaCause(j.getClass().getName(), str(j.getMessage() or "").strip().split("\n")[0],
                                 err_class, frames[0].getClassName() if len(frames) else ""))
            nxt = j.getCause()
            j = None if nxt is None or nxt.equals(j) else nxt
    except Exception:  # the JVM went away while we read the chain: what we have is all there is
        pass
    return out


def caused_by(e: BaseException, *prefixes: str) -> JavaCause | None:
    """The first exception in the chain of a class, or thrown by code of a class, named with one of `prefixes`."""
    return next((c for c in chain(e) if c.class_name.startswith(prefixes) or c.thrown_in.startswith(prefixes)),
                None)


def summary(e: BaseException) -> str:
    """One line naming the failure: the outermost Java exception and its root cause, else the Python exception."""
    causes = chain(e)
    if causes:
        head, root = causes[0], causes[-1]
        return head.line() if root is head else f"{head.line()[:300]} (caused by {root.line()[:300]})"
    text = str(e).strip().splitlines()
    return (text[0] if text else repr(e))[:400]
