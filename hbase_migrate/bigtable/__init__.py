"""Google Cloud Bigtable as a migration target (docs/guides/bigtable.md).

The target's settings (:mod:`.settings`), its schema from HBase descriptors (:mod:`.schema`),
the limits checked before any write (:mod:`.preflight`), HBase cells written with HBase's
delete semantics (:mod:`.writer`), reads with the families' GC rules applied (:mod:`.reader`),
the steps (:mod:`.steps`) and the local emulator (:mod:`.emulator`). The Google client is
imported only here, never by the shared steps.
"""
