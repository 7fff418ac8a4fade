"""Message formats parsed in Python (no JVM): one decoder per envelope behind `Decoder.parse`."""

from cdcsync.formats.base import FORMATS, BadRecord, Change, Coord, Decoder, get_decoder
from cdcsync.formats.state import final_state

__all__ = ["FORMATS", "BadRecord", "Change", "Coord", "Decoder", "get_decoder", "final_state"]
