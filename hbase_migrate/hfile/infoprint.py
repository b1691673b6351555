"""An HFile's file info, keys and cells as HBase's ``HFilePrettyPrinter -p -v -m`` prints
them (``printMeta``, ``printKV`` in branch-2.6): every file info entry in key order (a
``TreeMap`` on unsigned bytes), the value rendered by its key; keys as
``KeyValue.keyToString`` renders them; a cell on one line, its key, value and tags."""

from __future__ import annotations

import struct

from hbase_migrate.bytesutil import to_string_binary
from hbase_migrate.hfile.fileinfo import time_range
from hbase_migrate.wal.model import Cell, type_name
from hbase_migrate.wal.protobuf import ProtobufError

# how printMeta renders a value, by key (``HStoreFile``, ``HFileInfo``, ``HFileWriterImpl``)
LONGS = frozenset({b"MAX_SEQ_ID_KEY", b"DELETE_FAMILY_COUNT", b"EARLIEST_PUT_TS",
                   b"MAX_MEMSTORE_TS_KEY", b"hfile.CREATE_TIME_TS", b"BULKLOAD_TIMESTAMP"})
INTS = frozenset({b"hfile.AVG_KEY_LEN", b"hfile.AVG_VALUE_LEN", b"KEY_VALUE_VERSION",
                  b"hfile.MAX_TAGS_LEN"})
BOOLEANS = frozenset({b"MAJOR_COMPACTION_KEY", b"hfile.TAGS_COMPRESSED",
                      b"EXCLUDE_FROM_MINOR_COMPACTION", b"HISTORICAL"})
LAST_KEY = b"hfile.LASTKEY"
LATEST_TIMESTAMP = (1 << 63) - 1
OLDEST_TIMESTAMP = -(1 << 63)
_KEY_END = struct.Struct(">qB")


def key_string(key: bytes) -> str:
    """A KeyValue key as ``KeyValue.keyToString``: ``row/family:qualifier/timestamp/type``
    (bytes as ``Bytes.toStringBinary``); a key too short to hold its parts is printed as
    bytes."""
    if len(key) < 12:
        return to_string_binary(key)
    row_len = int.from_bytes(key[:2], "big")
    fam_at = 2 + row_len
    if fam_at + 10 > len(key) or fam_at + 1 + key[fam_at] > len(key) - 9:
        return to_string_binary(key)
    qual_at = fam_at + 1 + key[fam_at]
    timestamp, code = _KEY_END.unpack_from(key, len(key) - 9)
    return cell_key_string(key[2:fam_at], key[fam_at + 1 : qual_at], key[qual_at:-9],
                           timestamp, code)


def cell_key_string(row: bytes, family: bytes, qualifier: bytes, timestamp: int,
                    code: int) -> str:
    """A cell's key as ``KeyValue.keyToString`` renders it."""
    shown = to_string_binary(family)
    stamp = {LATEST_TIMESTAMP: "LATEST_TIMESTAMP", OLDEST_TIMESTAMP: "OLDEST_TIMESTAMP"}.get(
        timestamp, str(timestamp))
    kind = {0: "Minimum", 255: "Maximum"}.get(code) or type_name(code)
    return (f"{to_string_binary(row)}/{shown}{':' if shown else ''}"
            f"{to_string_binary(qualifier)}/{stamp}/{kind}")


def cell_line(cell: Cell, seqid: int) -> str:
    """A cell as ``HFilePrettyPrinter -p -v`` prints it (``printKV``): ``K: <key>/vlen=<value
    length>/seqid=<mvcc> V: <value>``, then `` T[i]: [Tag type : t, value : v]`` per tag."""
    tags = "".join(f" T[{i}]: [Tag type : {t.type}, value : {to_string_binary(t.value)}]"
                   for i, t in enumerate(cell.tags))
    key = cell_key_string(cell.row, cell.family, cell.qualifier, cell.timestamp, cell.type)
    return f"K: {key}/vlen={len(cell.value)}/seqid={seqid} V: {to_string_binary(cell.value)}{tags}"


def value_string(key: bytes, value: bytes) -> str:
    """One file info value as printMeta prints it; one it could not decode as bytes."""
    if key in LONGS and len(value) == 8:
        return str(int.from_bytes(value, "big", signed=True))
    if key in INTS and len(value) == 4:
        return str(int.from_bytes(value, "big", signed=True))
    if key in BOOLEANS and len(value) == 1:
        return "true" if value != b"\x00" else "false"
    if key == b"TIMERANGE":
        try:
            span = time_range({key: value})
        except ProtobufError:
            span = None
        if span is not None:
            return f"{span[0]}....{span[1]}"
    if key == LAST_KEY:
        return f"{key_string(value)}/vlen=0/mvcc=0" if value else "empty"
    return to_string_binary(value)


def printed_file_info(info: dict[bytes, bytes]) -> dict[str, str]:
    """The file info in HBase's order, keys as text and values as printMeta prints them."""
    return {key.decode("utf-8", "replace"): value_string(key, info[key]) for key in sorted(info)}
