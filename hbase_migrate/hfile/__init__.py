"""HBase HFile format (v3, and v2 where identical): trailer, blocks, file info, cells.

``reader.py`` streams a file's cells block by block; ``trailer.py`` the fixed trailer,
``block.py`` block headers, checksums and decompression, ``checksum.py`` CRC32C,
``fileinfo.py`` the file info and the block index, ``keyvalue.py`` the cells of a data block
(``prefix.py``, ``diff.py``, ``fastdiff.py``, ``rowindex.py`` the encoded ones,
``tagcompression.py`` their compressed tags), ``summary.py`` and ``infoprint.py`` what
``hfile info`` and ``hfile dump`` print. This package reads ``wal/`` primitives (protobuf,
KeyValue tags, the tag dictionary, GZ, the WebHDFS opener); ``wal/`` never imports it.
"""
