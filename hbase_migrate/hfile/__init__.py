"""HBase HFile format (v3, and v2 where identical): trailer, blocks, file info, cells. Every
module is named here once (``tests/test_package_docs.py`` keeps the list true).

Reading: ``reader`` streams a file's cells block by block; ``trailer`` the fixed trailer,
``block`` block headers, checksums and decompression, ``checksum`` CRC32C, ``fileinfo`` the
file info and the block index, ``keyvalue`` the cells of a data block (``prefix``, ``diff``,
``fastdiff``, ``rowindex`` the encoded ones, over the read position of ``cursor``;
``tagcompression`` their compressed tags), ``decoders`` the compiled copies of the decoders
or those references; ``summary`` and ``infoprint`` what ``hfile info`` and ``hfile dump``
print.

A region's files: ``reference`` the half files a split leaves and HFileLink names, ``merge``
a region's store files merged into scan order, ``visible`` the cells a normal scan returns
of them, ``region`` a region's cells read from its store files alone, ``mob`` MOB reference
cells resolved to their MOB files' cells.

Writing: ``writer`` writes HFiles as HBase 2.6's ``StoreFileWriter`` does (``encoders`` the
data blocks, ``blockwriter`` blocks and checksums, ``indexwriter`` the block index,
``bloomwriter`` the Bloom filters, ``metadata`` the file info of a flush or a bulk load).

This package reads ``wal/`` primitives (protobuf, KeyValue tags, the tag dictionary, the
codecs, the WebHDFS opener); ``wal/`` never imports it.
"""
