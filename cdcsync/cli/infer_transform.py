"""Which transform `cdcsync infer-schema` shows a source table through: the one the run applies to it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cdcsync.config.model import Config
    from cdcsync.transform.sql import Transform


def transform_for(name: str, cfg: Config | None, flag: Transform | None, warn: Callable[[str], None]
                  ) -> Transform | None:
    """The transform the run applies to source table `name`: None for none (a table no route takes is skipped)."""
    if flag is not None or cfg is None:
        return flag
    if not cfg.routes or (cfg.transform is None and not any(r.transform for r in cfg.routes)):
        return cfg.transform
    import re

    unread = False
    for i, r in enumerate(cfg.routes):
        try:
            if re.fullmatch(r.source_table, name):
                return r.transform
        except re.error:
            unread = True
            warn(f"route[{i}].source_table = {r.source_table!r} is Java regex syntax Python's re does not read: "
                 f"infer-schema cannot tell whether it routes {name} (shown without that route's transform)")
    if cfg.sink.unrouted == "default":
        return cfg.transform
    if not unread:
        warn(f"no [[route]] takes {name} and sink.unrouted = 'skip': the run skips its changes (shown untransformed)")
    return None
