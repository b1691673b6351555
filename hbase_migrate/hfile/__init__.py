"""HBase HFile format (v3, and v2 where identical): trailer, blocks, file info, cells.

``reader.py`` streams a file's cells block by block; ``trailer.py`` the fixed trailer,
``block.py`` block headers, checksums and decompression, ``checksum.py`` CRC32C,
``fileinfo.py`` the file info and the block index, ``keyvalue.py`` the cells of a data block.
This package reads ``wal/`` primitives (protobuf, KeyValue tags, GZ); ``wal/`` never imports it.
"""
