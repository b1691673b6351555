"""Streaming reader of protobuf WAL files (HBase 1.x-3.x), entry by entry, with offsets.

Framing, header and trailer are in ``header.py``, the WALKey in ``walkey.py``, cells in
``cells.py`` (``phoenix.py`` for Apache Phoenix's codec). The reader holds a window of the
file (``window.py``: read in 1 MiB chunks), never the whole file.

End of data (section 1.3/1.4 of the format notes): with a trailer (``... 00000000 LAWP``)
the edits end where the trailer starts; without one, a clean end at an entry boundary
("eof"), an entry cut short ("truncated") or a prefix of the trailer bytes
("partial_trailer") is the normal end of a file still being written or left by a crashed
writer. Anything else that does not parse raises ``WalCorruptError`` naming the file, the
byte offset and the entry index. ``end_offset`` is where a later read should resume.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from types import TracebackType

from hbase_migrate.errors import WalCorruptError
from hbase_migrate.wal import cells as C
from hbase_migrate.wal import hotloops
from hbase_migrate.wal.dictionary import (
    FAMILY_CAPACITY,
    REGION_CAPACITY,
    TABLE_CAPACITY,
    LruDictionary,
)
from hbase_migrate.wal.header import (
    EMPTY_TRAILER,
    check_header,
    find_trailer,
    read_header,
    value_algorithm,
)
from hbase_migrate.wal.keyprefix import key_prefix_problem
from hbase_migrate.wal.model import PHOENIX_CELL_CODEC, Entry, WalHeader, WalKey
from hbase_migrate.wal.phoenix import phoenix_cells_decoder
from hbase_migrate.wal.protobuf import ProtobufError, decode_varint32, varint_cut_off
from hbase_migrate.wal.walkey import KeyDictionaries, kv_count_only
from hbase_migrate.wal.window import CHUNK, Source, Window, open_wal, size_of

# The only bound HBase puts on a WALKey's length when reading is the Java int it is read
# into: ``CodedInputStream.readRawVarint32`` (1.x/2.4/2.5 ``ProtobufLogReader.readNext``,
# 2.6+ ``ProtobufUtil.parseDelimitedFrom`` via ``ProtobufWALStreamReader.next``); 2.6+
# ``ProtobufWALTailingReader.readWALKey`` reports a larger (negative) one as "malformed WAL
# file?". No lower cap applies: HBase lifts protobuf-java 2.5's 64 MiB default with
# ``ProtobufUtil.mergeFrom(builder, in, size)`` (hbase-client shaded/protobuf/ProtobufUtil),
# and protobuf-java 3's default size limit is Integer.MAX_VALUE. ``decode_varint32`` refuses
# more than this, as corruption.
MAX_KEY_LENGTH = 0x7FFFFFFF
# A longer declared WALKey (real ones hold a few hundred bytes) is loaded only after its
# first bytes were checked to begin a WALKey, so a damaged length does not load the file.
KEY_PROBE = 64 << 10
RECOVERED_EDITS_DIR = "recovered.edits"

_INT32 = C.INT32.unpack_from
_new_tuple = tuple.__new__


class WalReader:
    """Iterate the entries of one WAL file.

    ``source`` is a path, a ``webhdfs://host:port/path`` URL or a binary file object;
    ``name`` (default: the path as given) names the file in every error. ``start_offset``
    resumes at a saved ``end_offset``: a compressed file is decoded from its start without
    yielding to rebuild the dictionaries; an uncompressed one is walked quickly to count
    entries, or, when ``start_index`` (the index of the entry at ``start_offset``) is
    given, entered by a direct seek. ``recovered_edits=None`` decides from the name.
    With ``cell_blocks``, an uncompressed entry's cells may come as one compiled
    ``CellBlock`` (a sequence of the same Cells, read in place by the CDC stream). With
    ``markers_only``, an uncompressed entry's cells may be left out (an empty tuple) when
    none of them is a METAFAMILY marker (for a reader of the keys and markers alone).
    """

    def __init__(
        self,
        source: Source,
        *,
        name: str | None = None,
        start_offset: int = 0,
        recovered_edits: bool | None = None,
        start_index: int | None = None,
        cell_blocks: bool = False,
        markers_only: bool = False,
    ) -> None:
        self._fileobj, self._owned, default_name = open_wal(source)
        self.name = name if name is not None else default_name
        try:
            self._setup(start_offset, recovered_edits, start_index,
                        hotloops.marker_decoder() if markers_only
                        else hotloops.block_decoder() if cell_blocks
                        else hotloops.plain_decoder())
        except BaseException:
            self.close()
            raise

    def _setup(self, start_offset: int, recovered: bool | None, start_index: int | None,
               plain_cells: C.CellsDecoder) -> None:
        self.file_size: int | None = size_of(self._fileobj)
        self._window = Window(self._fileobj, 0, None)
        header, self._edits_start = read_header(self._window, self.name)
        self.header: WalHeader = header
        check_header(header, self.name)
        self._edits_end = find_trailer(self._window, self.file_size, self._edits_start)
        self.has_trailer = self._edits_end is not None
        if recovered is None:
            recovered = RECOVERED_EDITS_DIR in self.name
        capacity = 1 if recovered else REGION_CAPACITY
        self._key_dicts: KeyDictionaries | None = None
        self._cells: C.CompressionState | None = None
        self._decode_key = hotloops.key_decoder()
        self._decode_cells = plain_cells  # an uncompressed file's
        if self.header.has_compression:
            self._key_dicts = KeyDictionaries(
                LruDictionary(capacity),
                LruDictionary(1 if recovered else TABLE_CAPACITY),
                LruDictionary(FAMILY_CAPACITY),
            )
            self._cells = C.CompressionState.create(
                tags=self.header.has_tag_compression,
                value_algorithm=value_algorithm(self.header),
                writer=False,
            )
            self._cells = self._cells._replace(family=self._key_dicts.family)
            self._decode_cells = hotloops.compressed_decoder(self._cells)
        # Phoenix's codec: its own framing around the same cells; its files are decoded from
        # the start to resume (its cell lengths are not all plain KeyValue lengths)
        self._phoenix = self.header.cell_codec_cls_name == PHOENIX_CELL_CODEC
        if self._phoenix:
            self._decode_cells = phoenix_cells_decoder(
                self._decode_cells if self._cells is not None else None)
        if start_offset < 0:
            raise ValueError(f"start_offset must be >= 0, got {start_offset}")
        self._start_offset = max(start_offset, self._edits_start)
        if 0 < start_offset < self._edits_start:
            raise WalCorruptError(
                self.name, start_offset, 0, "start_offset lies inside the WAL header"
            )
        if self.file_size is not None and start_offset > self.file_size:
            raise WalCorruptError(
                self.name, start_offset, 0, f"start_offset beyond the file end {self.file_size}"
            )
        self._start_index = start_index
        self.end_offset = self._start_offset
        self.end_reason = ""
        self._iterator: Iterator[Entry] | None = None

    # --- iteration -------------------------------------------------------------------------

    def __iter__(self) -> Iterator[Entry]:
        if self._iterator is None:
            self._iterator = self._entries()
        return self._iterator

    def __enter__(self) -> WalReader:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the file if this reader opened it."""
        if self._owned:
            self._fileobj.close()

    def _corrupt(self, offset: int, index: int, reason: str) -> WalCorruptError:
        return WalCorruptError(self.name, offset, index, reason)

    def _start(self) -> tuple[int, int]:
        """Relative position and index of the first entry to decode."""
        window, target = self._window, self._start_offset
        pos = self._edits_start
        if target == pos or self._cells is not None or self._phoenix:
            return pos, 0
        if self._start_index is None:
            return self._walk_to(target)
        if target - window.base <= len(window.data):
            return target - window.base, self._start_index
        if self._fileobj.seekable():
            self._fileobj.seek(target)
            window.base, window.data = target, b""
            return 0, self._start_index
        window.drop(len(window.data))
        while window.base < target:  # a stream: read and forget
            data = window.ensure(min(CHUNK, target - window.base))
            if not data:
                raise self._corrupt(target, self._start_index, "start_offset beyond the end")
            window.drop(len(data))
        return 0, self._start_index

    def _entries(self) -> Iterator[Entry]:
        loop = hotloops.entries_loop()
        if loop is not None and self._key_dicts is None and not self._phoenix:  # uncompressed
            return loop(self, _End)
        return self._python_entries()

    def _python_entries(self) -> Iterator[Entry]:
        window = self._window
        pos, index = self._start()
        skip_until = self._start_offset
        decode = self._decode_entry
        while True:
            offset = window.base + pos
            try:
                entry, pos = decode(window, pos, index)
            except _End as end:
                self._ended(end, offset, index)
                return
            if offset >= skip_until:
                self.end_offset = offset + entry.size
                yield entry
            elif offset + entry.size > skip_until:
                raise self._not_a_boundary(offset, entry.size, index)
            index += 1
            if pos > CHUNK:
                window.drop(pos)
                pos = 0

    def _ended(self, end: _End, offset: int, index: int) -> None:
        """The edits ended normally at ``offset`` (raises when before ``start_offset``)."""
        self.end_reason = end.reason
        self.end_offset = offset
        if offset < self._start_offset:
            raise self._corrupt(
                self._start_offset, index, "start_offset lies beyond the end of the edits"
            ) from None

    def _not_a_boundary(self, offset: int, size: int, index: int) -> WalCorruptError:
        return self._corrupt(
            self._start_offset,
            index,
            f"start_offset is not an entry boundary (entry #{index} spans "
            f"{offset}..{offset + size})",
        )

    def _decode_entry(self, window: Window, pos: int, index: int) -> tuple[Entry, int]:
        """Decode the entry at relative ``pos``, or raise _End with the end reason."""
        offset = window.base + pos
        buf = window.data
        if pos + 10 > len(buf):
            buf = window.ensure(pos + 10)
            if pos >= len(buf):
                raise _End("trailer" if self._edits_end is not None else "eof")
        key_len = buf[pos]
        if key_len < 0x80:  # the usual one-byte length
            key_start = pos + 1
        else:
            try:
                key_len, key_start = decode_varint32(buf, pos)
            except ProtobufError as exc:
                reason = f"bad WALKey length: {exc}"
                raise self._stop_or_corrupt(window, pos, index, reason) from None
        key_end = key_start + key_len
        if key_end > len(buf):
            buf = self._load_key(window, pos, key_start, key_end, index)
        try:
            key, count = self._decode_key(buf, key_start, key_end, self._key_dicts)
        except (ValueError, IndexError) as exc:
            raise self._stop_or_corrupt(window, pos, index, f"bad WALKey: {exc}") from None
        try:
            cells, buf, end = self._decode_cells(buf, key_end, count, window.ensure)
        except (IndexError, struct.error) as exc:
            cut = window.exhausted
            raise self._stop_or_corrupt(window, pos, index, f"bad cell: {exc}", cut=cut) from None
        except ValueError as exc:
            raise self._corrupt(offset, index, f"bad cell: {exc}") from None
        return _new_tuple(Entry, (key, cells, offset, end - pos, index)), end

    def _load_key(
        self, window: Window, pos: int, key_start: int, key_end: int, index: int
    ) -> bytes:
        """The WALKey at relative ``pos`` is not all loaded (the rare path): load it, after
        checking that a long one begins like a WALKey; when the file ends inside it, tell a
        cut-off tail (the bytes there begin a WALKey) from a damaged length prefix (they
        cannot). Returns the window's data."""
        key_len = key_end - key_start
        if key_len > KEY_PROBE:
            head = window.ensure(key_start + KEY_PROBE)
            problem = key_prefix_problem(
                head, key_start, min(len(head), key_end), key_end, self._key_dicts
            )
            if problem is not None:
                past = " past the end of the file" if window.exhausted else ""
                raise self._damaged_length(window, pos, index, key_len, past, problem)
        buf = window.ensure(key_end)
        if key_end <= len(buf):
            return buf
        problem = key_prefix_problem(buf, key_start, len(buf), key_end, self._key_dicts)
        if problem is not None:
            raise self._damaged_length(
                window, pos, index, key_len, " past the end of the file", problem
            )
        raise self._stop_or_corrupt(window, pos, index, "WALKey cut off", cut=True)

    def _damaged_length(
        self, window: Window, pos: int, index: int, key_len: int, where: str, problem: str
    ) -> WalCorruptError:
        return self._corrupt(
            window.base + pos,
            index,
            f"the length prefix declares a {key_len}-byte WALKey{where}, but the bytes "
            f"after it are no beginning of one ({problem}): a damaged length, not a cut-off "
            "tail",
        )

    def _stop_or_corrupt(
        self, window: Window, pos: int, index: int, reason: str, *, cut: bool = False
    ) -> BaseException:
        """How the data at ``pos`` ends: a normal end (_End) or corruption."""
        rest = window.ensure(pos + 9)[pos:]
        trailer_known = self._edits_end is not None
        if window.exhausted and len(rest) <= 8 and not trailer_known:
            if rest == EMPTY_TRAILER:
                self.has_trailer = True
                return _End("trailer")
            if EMPTY_TRAILER.startswith(rest):
                return _End("partial_trailer")
        if cut or (window.exhausted and varint_cut_off(window.data, pos)):
            if trailer_known:
                return self._corrupt(
                    window.base + pos,
                    index,
                    f"{reason}: the entry runs into the trailer at offset {self._edits_end}",
                )
            return _End("truncated")
        return self._corrupt(window.base + pos, index, reason)

    def _walk_to(self, target: int) -> tuple[int, int]:
        """Walk the framing of an uncompressed file up to ``target``; return the relative
        position there and the index of the entry that starts there."""
        window = self._window
        pos, index = self._edits_start, 0
        while window.base + pos < target:
            try:
                pos = _skip_plain_entry(window, pos)
            except (IndexError, ValueError, struct.error) as exc:
                raise self._corrupt(
                    target,
                    index,
                    f"cannot reach start_offset: entry #{index} at {window.base + pos}: {exc}",
                ) from None
            index += 1
            if pos > CHUNK:
                window.drop(pos)
                pos = 0
        if window.base + pos != target:
            raise self._corrupt(target, index - 1, "start_offset is not an entry boundary")
        return pos, index


class _End(Exception):
    """The edits end here normally; ``reason`` is the reader's ``end_reason``."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _skip_plain_entry(window: Window, pos: int) -> int:
    buf = window.ensure(pos + 10)
    key_len, key_start = decode_varint32(buf, pos)
    key_end = key_start + key_len
    buf = window.ensure(key_end)
    if key_end > len(buf):
        raise IndexError("WALKey cut off")
    pos = key_end
    for _ in range(kv_count_only(buf, key_start, key_end)):
        buf = window.ensure(pos + 4)
        (total,) = _INT32(buf, pos)
        if total < 20:
            raise ValueError(f"cell length {total}")
        pos += 4 + total
    if pos > len(window.ensure(pos)):
        raise IndexError("cell cut off")
    return pos


def read_entries(source: Source, *, start_offset: int = 0) -> Iterator[Entry]:
    """Yield the entries of a WAL file (see ``WalReader``), closing it at the end."""
    with WalReader(source, start_offset=start_offset) as reader:
        yield from reader


__all__ = ["WalKey", "WalReader", "read_entries"]
