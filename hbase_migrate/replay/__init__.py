"""WAL replay: WAL entries -> exact mutations (WALPlayer semantics without its defects),
filters, targets (exact over the cluster's client: HBase's RPC or Thrift2; Thrift1 with a
fidelity policy) and the replay of one file
with offsets reported only once the target acknowledged them.

Modules: ``mutations`` (cells -> row mutations), ``filters`` (``ReplayFilter``),
``marker_log`` (METAFAMILY markers, bulk loads), ``apply`` (``ReplayTarget`` and what the
targets share), ``client_target`` (``ClientTarget``: exact writes over the cluster's client),
``thrift1_target`` (``Thrift1Target``), ``targets`` (``open_target``), ``coverage`` and
``retention`` (gaps and archived-WAL retention), ``watermark``,
``file_replay`` (``replay_file``, ``ReplaySpec``, ``FileProgress``, ``FileResult``),
``errors``; and the runs built on them: ``job`` (``ReplayJob``, per-file tasks and outcomes),
``discovery`` (WAL files vs the ledger: moves, gaps), ``plan`` (which files, from which
offset, and why), ``worker`` (one file), ``lock`` (one run per migration), ``run``
(``run_replay``, ``follow_replay``), ``spark`` (one Spark task per WAL chain).
"""
