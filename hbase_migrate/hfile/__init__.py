"""HBase HFile format (v3, and v2 where identical): trailer, blocks, file info, cells.

``reader.py`` streams a file's cells block by block; ``trailer.py`` the fixed trailer,
``block.py`` block headers, checksums and decompression, ``checksum.py`` CRC32C,
``fileinfo.py`` the file info and the block index, ``keyvalue.py`` the cells of a data block
(``prefix.py``, ``diff.py``, ``fastdiff.py``, ``rowindex.py`` the encoded ones,
``tagcompression.py`` their compressed tags), ``summary.py`` and ``infoprint.py`` what
``hfile info`` and ``hfile dump`` print. ``writer.py`` writes HFiles as HBase 2.6's
``StoreFileWriter`` does (``encoders.py`` the data blocks, ``blockwriter.py`` blocks and
checksums, ``indexwriter.py`` the block index, ``bloomwriter.py`` the Bloom filters,
``metadata.py`` the file info of a flush or a bulk load). This package reads ``wal/``
primitives (protobuf, KeyValue tags, the tag dictionary, the codecs, the WebHDFS opener);
``wal/`` never imports it.
"""
