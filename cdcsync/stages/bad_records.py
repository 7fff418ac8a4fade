"""What happens to a batch's bad records under [run] on_bad_record: fail the batch, skip them (counted), or
write them to the dead-letter table; and the run-wide max_bad_records budget."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cdcsync import columns as C
from cdcsync.errors import DecodeError
from cdcsync.sinks import dead_letter

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from cdcsync.config.model import Config
    from cdcsync.reporting import Reporter

_SHOWN = 3  # bad records named on stderr per batch; the dead-letter table has them all


class BadRecords:
    """The handler a batch calls with its bad rows: returns up to five samples for the summary."""

    def __init__(self, cfg: Config, reporter: Reporter, policy: str | None = None) -> None:
        self.cfg = cfg
        self.reporter = reporter
        self.policy = policy or cfg.run.on_bad_record

    def __call__(self, bad_df: DataFrame, batch_id: int, count: int) -> list[dict[str, Any]]:
        samples = first_samples(bad_df)
        if self.policy == "fail":
            raise bad_error(samples[0])
        if self.policy == "dead-letter":
            dead_letter.write(self.cfg, bad_df, batch_id)
        verb = "dead-lettered" if self.policy == "dead-letter" else "skipped"
        for s in samples[:_SHOWN]:
            self.reporter.warn(f"{verb} bad record {s['topic']}/{s['partition']}@{s['offset']}: {s['reason']}: "
                               f"{s['detail']}")
        return samples


def first_samples(bad_df: DataFrame, n: int = 5) -> list[dict[str, Any]]:
    from pyspark.sql import functions as F

    first = (bad_df.orderBy(C.PARTITION, C.OFFSET, C.POS).limit(n)
             .select(C.TOPIC, C.PARTITION, C.OFFSET, C.REASON, C.REASON_DETAIL,
                     F.substring(F.col(C.RAW_VALUE), 1, 200).alias("head")).collect())
    return [{"topic": r[0], "partition": r[1], "offset": r[2], "reason": r[3], "detail": r[4],
             "value_preview": bytes(r[5] or b"").decode("utf-8", "backslashreplace")} for r in first]


def bad_error(sample: dict[str, Any]) -> DecodeError:
    value = sample.get("value_preview", "")
    return DecodeError(
        f"bad record at {sample['topic']}/{sample['partition']} offset {sample['offset']}: "
        f"{sample['reason']}: {sample['detail']}\n  value (first 200 bytes): {value}",
        hint='fix the producer or the config; or set [run] on_bad_record = "dead-letter" to set such records '
        "aside and keep going",
        **sample,
    )


def check_budget(cfg: Config, bad_so_far: int, dead_lettered: bool) -> None:
    """Past run.max_bad_records, stop; `dead_lettered`: the bad records went to the dead-letter table (not skipped)."""
    limit = cfg.run.max_bad_records
    if limit is not None and bad_so_far > limit:
        where = "inspect them with 'cdcsync dead-letter list'" if dead_lettered else \
            "the warnings above name where the first ones were"
        raise DecodeError(
            f"{bad_so_far} bad records so far, more than run.max_bad_records = {limit}; "
            "stopped after committing the batch that crossed it",
            hint=f"{where}, fix the source, then run again",
        )
