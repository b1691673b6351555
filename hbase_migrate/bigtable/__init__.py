"""Google Cloud Bigtable as a migration target (docs/guides/bigtable.md).

The target's settings (:mod:`.settings`, a ``[target]`` with ``kind = "bigtable"``), its
schema from HBase descriptors (:mod:`.schema`), the limits checked before any write
(:mod:`.preflight`), HBase cells written with HBase's delete semantics (:mod:`.writer`,
:mod:`.masking`), the client the shared steps get for such a target (:mod:`.client`), what
its writes left out (:mod:`.losses`), the accepted losses left out of the validation's
source side (:mod:`.accepted`) and the local emulator (:mod:`.emulator`). The Google
client is imported only here, when a client is made.
"""
