"""Value codecs of WAL value compression (2.5+, HBASE-25869), one per ``Compression.Algorithm``.

HBase compresses each value through one stream per file that it finishes and resets after
every value (``CompressionContext.ValueCompressor``,
``Compression.FinishOnFlushCompressionStream``), so each value is a complete unit of the
stream format of the codec class HBase uses by default for the algorithm
(``Compression.*_CODEC_CLASS_DEFAULT``):

* GZ: one gzip member (``ReusableStreamGzipCodec``).
* SNAPPY, LZ4 (Hadoop's ``SnappyCodec``, ``Lz4Codec`` and HBase's own), ZSTD (HBase's
  ``aircompressor.ZstdCodec`` and ``zstd.ZstdCodec``), LZMA, BROTLI (HBase's ``xz.LzmaCodec``,
  ``brotli.BrotliCodec``): Hadoop's ``BlockCompressorStream`` framing, all int32 big-endian::

      uncompressed length | (compressed length | chunk)+    per block
      a value longer than the stream's MAX_INPUT_SIZE is one block of several chunks (one per
      MAX_INPUT_SIZE bytes, each compressed on its own), followed by an empty block ``0``
      (the 4 trailing bytes of HBASE-28390); an empty value is the empty block alone

  A chunk is a raw Snappy block, a raw LZ4 block, a zstd frame, an LZMA ("lzma alone") stream,
  or a Brotli stream. MAX_INPUT_SIZE = buffer size (256 KiB by default) less the codec's
  overhead.
* ZSTD with Hadoop's ``ZStandardCodec`` (``Compression``'s default class, native only; a plain
  ``CompressorStream``): one bare zstd frame. The header names the algorithm, not the class, so
  the reader tells the two ZSTD forms apart by the frame's magic number; the writer writes the
  block form of HBase's ZSTD codecs, which real HBase 2.6 clusters use.
* BZIP2 (Hadoop's ``BZip2Codec``): one whole bzip2 stream, ``BZh9`` header included.
* LZO (``com.hadoop.compression.lzo.LzoCodec``, GPL, outside HBase and Hadoop): refused.

Every compressed form of an empty value is non-empty; HBase skips it unread (HBASE-27637).
Decoders raise ``ValueError`` (or cramjam's ``DecompressionError``) on bad bytes; the cell
decoder turns these into ``CellCorruptError``.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass

import cramjam

from hbase_migrate.errors import HBaseMigrateError

# Compression.Algorithm ordinals (hbase-common io/compress/Compression.java)
ALGORITHMS = ("LZO", "GZ", "NONE", "SNAPPY", "LZ4", "BZIP2", "ZSTD", "LZMA", "BROTLI")
ALGO_LZO = 0
ALGO_GZ = 1
ALGO_NONE = 2

_INT32 = struct.Struct(">i")
_TWO_INT32 = struct.Struct(">ii")
_EMPTY_BLOCK = b"\x00\x00\x00\x00"

DecompressionErrors = (ValueError, cramjam.DecompressionError)


class ValueDecodeError(HBaseMigrateError, ValueError):
    """Compressed value bytes that do not decode to the value length the cell announces."""


@dataclass(frozen=True)
class ValueCodec:
    """One algorithm: ``compress(value)`` gives what HBase writes for the value,
    ``decompress(data, length)`` the value back (exactly ``length`` bytes, or an error)."""

    name: str
    ordinal: int
    codec_class: str
    compress: Callable[[bytes], bytes]
    decompress: Callable[[bytes, int], bytes]


# --- GZ -------------------------------------------------------------------------------------

GZIP_HEADER = bytes.fromhex("1f8b08000000000000ff")
_DEFLATE_MAX_RATIO = 1032  # deflate cannot expand data by more than this


def gzip_member(value: bytes) -> bytes:
    """One gzip member as HBase's GZ value compressor writes it for one value: the fixed
    GZIPOutputStream header (mtime 0, no flags, OS byte 0xFF on JDK 16+), deflate at the
    default level, CRC32 and ISIZE little-endian."""
    deflater = zlib.compressobj(zlib.Z_DEFAULT_COMPRESSION, zlib.DEFLATED, -zlib.MAX_WBITS)
    body = deflater.compress(value) + deflater.flush()
    trailer = struct.pack("<II", zlib.crc32(value), len(value) & 0xFFFFFFFF)
    return GZIP_HEADER + body + trailer


def gunzip_value(data: bytes, expected: int) -> bytes:
    """Decompress one value compressed as gzip (members may follow one another)."""
    if expected > len(data) * _DEFLATE_MAX_RATIO + 64:
        raise ValueDecodeError(f"{len(data)} compressed bytes cannot hold {expected} bytes")
    out = b""
    rest = data
    try:
        while rest:
            inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
            out += inflater.decompress(rest, expected + 1 - len(out))
            if not inflater.eof or len(out) > expected:
                raise ValueDecodeError("compressed value does not match its length")
            rest = inflater.unused_data
    except zlib.error as exc:
        raise ValueDecodeError(f"compressed value does not decompress: {exc}") from exc
    return out


# --- Hadoop's BlockCompressorStream framing -------------------------------------------------

Chunk = Callable[[bytes, int], bytes]  # (chunk, at most this many bytes) -> bytes


def _block_compressor(max_input: int, chunk: Callable[[bytes], bytes]) -> Callable[[bytes], bytes]:
    def compress(value: bytes) -> bytes:
        if not value:  # finish() of a block without input: length 0, no chunk
            return _EMPTY_BLOCK
        if len(value) <= max_input:
            data = chunk(value)
            return _TWO_INT32.pack(len(value), len(data)) + data
        out = [_INT32.pack(len(value))]
        for start in range(0, len(value), max_input):
            data = chunk(value[start : start + max_input])
            out += (_INT32.pack(len(data)), data)
        out.append(_EMPTY_BLOCK)  # the finish() after the segments (HBASE-28390)
        return b"".join(out)

    return compress


def _block_decompressor(chunk: Chunk) -> Callable[[bytes, int], bytes]:
    def decompress(data: bytes, expected: int) -> bytes:
        if len(data) > 8:  # the usual value: one block of one chunk filling the data
            total, size = _TWO_INT32.unpack_from(data)
            if total == expected and size == len(data) - 8:
                return chunk(data[8:], expected)  # the caller checks the length
        parts = []
        produced = 0
        pos = 0
        end = len(data)
        while produced < expected:
            if pos + 8 > end:
                raise ValueDecodeError(f"block header cut off at byte {pos} of {end}")
            (total,) = _INT32.unpack_from(data, pos)
            pos += 4
            if total <= 0 or total > expected - produced:
                raise ValueDecodeError(
                    f"block of {total} bytes at byte {pos - 4}: {expected - produced} expected"
                )
            got = 0
            while got < total:
                (size,) = _INT32.unpack_from(data, pos) if pos + 4 <= end else (-1,)
                if size <= 0 or pos + 4 + size > end:
                    raise ValueDecodeError(f"compressed chunk length {size} at byte {pos}")
                piece = chunk(data[pos + 4 : pos + 4 + size], total - got)
                pos += 4 + size
                got += len(piece)
                parts.append(piece)
            if got != total:
                raise ValueDecodeError(f"block decompressed to {got} bytes, expected {total}")
            produced += got
        if pos != end and data[pos:] != _EMPTY_BLOCK:
            raise ValueDecodeError(f"{end - pos} bytes after the value's blocks")
        return parts[0] if len(parts) == 1 else b"".join(parts)

    return decompress


def _bounded(data: bytes, limit: int) -> bytes:
    if len(data) > limit:
        raise ValueDecodeError(f"chunk decompressed to {len(data)} bytes, at most {limit} fit")
    return data


def _snappy_chunk(data: bytes, limit: int) -> bytes:
    if cramjam.snappy.decompress_raw_len(data) > limit:
        raise ValueDecodeError("snappy chunk is longer than its block")
    return bytes(cramjam.snappy.decompress_raw(data))


_LZ4_MAX_RATIO = 255  # an LZ4 sequence cannot expand by more than this


def _lz4_chunk(data: bytes, limit: int) -> bytes:
    out = bytearray(min(limit, len(data) * _LZ4_MAX_RATIO + 16))
    size = cramjam.lz4.decompress_block_into(data, out)
    del out[size:]
    return bytes(out)


def _lzma_chunk(data: bytes, limit: int) -> bytes:
    if not data or data[0] > 224:  # an "lzma alone" header starts with its properties byte
        raise ValueDecodeError("chunk is not an LZMA stream")
    return _bounded(bytes(cramjam.xz.decompress(data)), limit)


def _brotli_chunk(data: bytes, limit: int) -> bytes:
    return _bounded(bytes(cramjam.brotli.decompress(data)), limit)


_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def _zstd_chunk(data: bytes, limit: int) -> bytes:
    if data[:4] != _ZSTD_MAGIC:
        raise ValueDecodeError("chunk is not a zstd frame")
    return _bounded(bytes(cramjam.zstd.decompress(data)), limit)


_zstd_blocks = _block_decompressor(_zstd_chunk)


def _zstd_value(data: bytes, expected: int) -> bytes:
    # A block-framed value starts with its length; 0x28B52FFD bytes is beyond any cell value
    if data[:4] == _ZSTD_MAGIC and expected != 0x28B52FFD:  # Hadoop's ZStandardCodec
        return _bounded(bytes(cramjam.zstd.decompress(data)), expected)
    return _zstd_blocks(data, expected)


def _whole(decode: Callable[[bytes], cramjam.Buffer]) -> Callable[[bytes, int], bytes]:
    def decompress(data: bytes, expected: int) -> bytes:
        return bytes(decode(data))

    return decompress


def _lzma_alone(value: bytes) -> bytes:
    # Preset 6 as LzmaCodec's default level; liblzma writes the "unknown size" form with an
    # end marker where Java's LZMAOutputStream writes the size: LZMAInputStream reads both.
    return bytes(cramjam.xz.compress(value, preset=6, format=cramjam.xz.Format.ALONE))


_BUFFER = 256 * 1024  # io.compression.codec.{snappy,lz4}.buffersize, hbase.io.compress.*.buffersize
_SIXTH = _BUFFER - (_BUFFER // 6 + 32)  # SnappyCodec, CompressionUtil.compressionOverhead


CODECS: dict[int, ValueCodec] = {
    codec.ordinal: codec
    for codec in (
        ValueCodec("GZ", 1, "org.apache.hadoop.hbase.io.compress.ReusableStreamGzipCodec",
                   gzip_member, gunzip_value),
        ValueCodec("NONE", 2, "(none)", bytes, lambda data, _expected: data),
        ValueCodec(
            "SNAPPY", 3, "org.apache.hadoop.io.compress.SnappyCodec",
            _block_compressor(_SIXTH, lambda v: bytes(cramjam.snappy.compress_raw(v))),
            _block_decompressor(_snappy_chunk),
        ),
        ValueCodec(
            "LZ4", 4, "org.apache.hadoop.io.compress.Lz4Codec",
            _block_compressor(
                _BUFFER - (_BUFFER // 255 + 16),  # Lz4Codec's overhead
                lambda v: bytes(cramjam.lz4.compress_block(v, store_size=False)),
            ),
            _block_decompressor(_lz4_chunk),
        ),
        ValueCodec(
            "BZIP2", 5, "org.apache.hadoop.io.compress.BZip2Codec",
            lambda v: bytes(cramjam.bzip2.compress(v, level=9)),  # CBZip2OutputStream: 900k
            _whole(cramjam.bzip2.decompress),
        ),
        ValueCodec(
            "ZSTD", 6, "org.apache.hadoop.hbase.io.compress.aircompressor.ZstdCodec",
            _block_compressor(  # io.compression.codec.zstd.level 3
                _SIXTH, lambda v: bytes(cramjam.zstd.compress(v, level=3))
            ),
            _zstd_value,
        ),
        ValueCodec(
            "LZMA", 7, "org.apache.hadoop.hbase.io.compress.xz.LzmaCodec",
            _block_compressor(_SIXTH, _lzma_alone),
            _block_decompressor(_lzma_chunk),
        ),
        ValueCodec(
            "BROTLI", 8, "org.apache.hadoop.hbase.io.compress.brotli.BrotliCodec",
            _block_compressor(_SIXTH, lambda v: bytes(cramjam.brotli.compress(v, level=6))),
            _block_decompressor(_brotli_chunk),
        ),
    )
}
BY_NAME = {codec.name: codec for codec in CODECS.values()}
LZO_REFUSAL = (
    "LZO (com.hadoop.compression.lzo.LzoCodec, GPL, shipped outside HBase and Hadoop) "
    "is not supported: no maintained library decodes it here"
)


def algorithm_label(ordinal: int) -> str:
    """The algorithm's name, or ``#N`` for an ordinal HBase does not define."""
    return ALGORITHMS[ordinal] if 0 <= ordinal < len(ALGORITHMS) else f"#{ordinal}"
