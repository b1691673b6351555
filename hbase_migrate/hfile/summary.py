"""What ``hfile info`` prints of an opened HFile: its trailer and the file info a store file
carries (see ``trailer.py`` and ``fileinfo.py`` for where each field comes from), its first
and last key, and the whole file info map as HBase's ``HFilePrettyPrinter -m`` prints it
(``infoprint.py``)."""

from __future__ import annotations

from typing import Any

from hbase_migrate.hfile.fileinfo import int_value, time_range
from hbase_migrate.hfile.infoprint import LAST_KEY, key_string, printed_file_info
from hbase_migrate.hfile.reader import HFileReader
from hbase_migrate.hfile.trailer import comparator_class
from hbase_migrate.wal.codecs import algorithm_label


def file_summary(reader: HFileReader) -> dict[str, Any]:
    """The trailer's fields and the file info's store-file keys, JSON-ready."""
    t, info = reader.trailer, reader.file_info
    span = time_range(info)
    # the first block's index key is its first cell's (HFileWriterImpl: no midpoint before it)
    first = key_string(reader.root_index[0].key) if reader.root_index else None
    last = info.get(LAST_KEY)
    return {
        "file": reader.name,
        "major_version": t.major_version,
        "minor_version": t.minor_version,
        "entries": t.entry_count,
        "compression": algorithm_label(t.compression),
        "data_block_encoding": info.get(b"DATA_BLOCK_ENCODING", b"NONE").decode(errors="replace"),
        "comparator": comparator_class(t.comparator),
        "tags": reader.tags,
        "tags_compressed": reader.compressed_tags,
        "mvcc": reader.mvcc,
        "first_key": first,
        "last_key": None if last is None else key_string(last),
        "bloom_type": info.get(b"BLOOM_FILTER_TYPE", b"NONE").decode(errors="replace"),
        "earliest_put_ts": int_value(info, b"EARLIEST_PUT_TS"),
        "max_seq_id": int_value(info, b"MAX_SEQ_ID_KEY"),
        "max_memstore_ts": int_value(info, b"MAX_MEMSTORE_TS_KEY"),
        "time_range": None if span is None else list(span),
        "data_index_levels": t.data_index_levels,
        "data_index_count": t.data_index_count,
        "first_data_block_offset": t.first_data_block_offset,
        "last_data_block_offset": t.last_data_block_offset,
        "load_on_open_offset": t.load_on_open_offset,
        "file_info_offset": t.file_info_offset,
        "total_uncompressed_bytes": t.total_uncompressed_bytes,
        "file_info": printed_file_info(info),
    }
