"""The file info entries HBase adds to a store file besides the writer's own (``writer.py``):
those of a flush or compaction (``StoreFileWriter.appendMetadata``) and those of a bulk load's
file (``HFileOutputFormat2``'s writer close), in branch-2.6. ``TIMERANGE``,
``EARLIEST_PUT_TS`` and ``HISTORICAL`` the writer adds itself, as both do.

A bulk-loaded file carries no ``MAX_SEQ_ID_KEY``: the region gives it a sequence id when it
loads it (``BULKLOAD_TIMESTAMP`` marks it as such).
"""

from __future__ import annotations

import struct
import time

MAX_SEQ_ID_KEY = b"MAX_SEQ_ID_KEY"
MAJOR_COMPACTION_KEY = b"MAJOR_COMPACTION_KEY"
COMPACTION_EVENT_KEY = b"COMPACTION_EVENT_KEY"
EXCLUDE_FROM_MINOR_COMPACTION_KEY = b"EXCLUDE_FROM_MINOR_COMPACTION"
BULKLOAD_TIME_KEY = b"BULKLOAD_TIMESTAMP"
BULKLOAD_TASK_KEY = b"BULKLOAD_SOURCE_TASK"
_TRUE, _FALSE = b"\xff", b"\x00"  # Bytes.toBytes(boolean)


def flush_metadata(max_seq_id: int, *, major_compaction: bool = False) -> dict[bytes, bytes]:
    """A flush's entries: the largest sequence id, not a major compaction, no compacted
    files (``COMPACTION_EVENT_KEY``: the protobuf magic and an empty tracker)."""
    return {MAX_SEQ_ID_KEY: struct.pack(">q", max_seq_id),
            MAJOR_COMPACTION_KEY: _TRUE if major_compaction else _FALSE,
            COMPACTION_EVENT_KEY: b"PBUF"}


def bulk_load_metadata(task: str, *, loaded_at: int | None = None,
                       exclude_from_minor_compaction: bool = False) -> dict[bytes, bytes]:
    """A bulk load file's entries as ``HFileOutputFormat2`` writes them: the time (ms), the
    task that wrote it, marked as a major compaction's output, and whether minor
    compactions leave it out (``hbase.mapreduce.hfileoutputformat.compaction.exclude``)."""
    when = loaded_at if loaded_at is not None else int(time.time() * 1000)
    return {BULKLOAD_TIME_KEY: struct.pack(">q", when),
            BULKLOAD_TASK_KEY: task.encode(),
            MAJOR_COMPACTION_KEY: _TRUE,
            EXCLUDE_FROM_MINOR_COMPACTION_KEY: _TRUE if exclude_from_minor_compaction else _FALSE}
