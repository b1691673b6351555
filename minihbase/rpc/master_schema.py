"""Schema changes of the embedded master, as HBase 2.6's ``MasterRpcServices`` answers
``AddColumn``, ``ModifyColumn``, ``DeleteColumn`` (``Admin.addColumnFamily``,
``modifyColumnFamily``, ``deleteColumnFamily``), ``ModifyTable`` and
``GetSchemaAlterStatus`` (every region up to date): each change a procedure run
before the reply (its id's result reads FINISHED); what HBase's procedure refuses before
it starts is the call's exception (``InvalidFamilyOperationException``, a missing table);
a deleted family's cells go with it. The table may be enabled (an online schema change)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.cluster.schema import decode_family, decode_table_schema, table_from_message
from hbase_migrate.rpc.master_calls import Nonce
from hbase_migrate.wal.protobuf import Message, varint_field
from minihbase.cluster import Cluster
from minihbase.rpc.listener import DO_NOT_RETRY, CallContext, H, Handler, ServiceError

INVALID_FAMILY = H + "InvalidFamilyOperationException"
Procedure = Callable[[Nonce | None, Callable[[], object]], tuple[bytes, bytes]]


def _nonce(m: Message, first: int) -> Nonce | None:
    group, nonce = m.opt_int(first), m.opt_int(first + 1)
    return None if not nonce else Nonce(group or 0, nonce)


def _family_name(name: bytes) -> str:
    return name.decode("utf-8", "replace")


class MasterSchema:
    """The schema calls over ``cluster``; ``procedure`` runs one and replies with its id."""

    def __init__(self, cluster: Cluster, procedure: Procedure) -> None:
        self.cluster = cluster
        self.procedure = procedure

    def handlers(self) -> dict[str, Handler]:
        return {"AddColumn": self.add_column, "ModifyColumn": self.modify_column,
                "DeleteColumn": self.delete_column, "ModifyTable": self.modify_table,
                "GetSchemaAlterStatus": self.alter_status}

    def alter_status(self, ctx: CallContext) -> tuple[bytes, bytes]:
        """Every region has the new schema (a change is done before its reply): HBase's
        blocking Admin waits for this after each schema change."""
        m = Message(ctx.call.request, "GetSchemaAlterStatusRequest")
        table = table_from_message(m.req_bytes(1, "table_name"))
        regions = len(self.cluster.regions(table))  # TableNotFoundException when missing
        return varint_field(1, 0) + varint_field(2, regions), b""

    def _call(self, ctx: CallContext, what: str,
              change: Callable[[TableDescriptor, Message], TableDescriptor]
              ) -> tuple[bytes, bytes]:
        m = Message(ctx.call.request, what)
        table = table_from_message(m.req_bytes(1, "table_name"))
        # a missing table or a refused change fails the call, before its procedure
        desc = change(self.cluster.table(table).descriptor, m)
        return self.procedure(_nonce(m, 3), lambda: self.cluster.store.set_descriptor(desc))

    def add_column(self, ctx: CallContext) -> tuple[bytes, bytes]:
        def change(desc: TableDescriptor, m: Message) -> TableDescriptor:
            family = decode_family(m.req_bytes(2, "column_families"))
            if desc.family(family.name) is not None:
                raise ServiceError(INVALID_FAMILY, f"Column family '{_family_name(family.name)}'"
                                   f" in table '{desc.name}' already exists so cannot be added",
                                   do_not_retry=True)
            return replace(desc, families=(*desc.families, family))
        return self._call(ctx, "AddColumnRequest", change)

    def modify_column(self, ctx: CallContext) -> tuple[bytes, bytes]:
        def change(desc: TableDescriptor, m: Message) -> TableDescriptor:
            family = decode_family(m.req_bytes(2, "column_families"))
            _must_have(desc, family.name, "modified")
            return replace(desc, families=tuple(family if f.name == family.name else f
                                                for f in desc.families))
        return self._call(ctx, "ModifyColumnRequest", change)

    def delete_column(self, ctx: CallContext) -> tuple[bytes, bytes]:
        def change(desc: TableDescriptor, m: Message) -> TableDescriptor:
            name = m.req_bytes(2, "column_name")
            _must_have(desc, name, "deleted")
            if len(desc.families) == 1:
                raise ServiceError(INVALID_FAMILY, f"Family '{_family_name(name)}' is the only "
                                   "column family in the table, so it cannot be deleted",
                                   do_not_retry=True)
            return replace(desc, families=tuple(f for f in desc.families if f.name != name))
        return self._call(ctx, "DeleteColumnRequest", change)

    def modify_table(self, ctx: CallContext) -> tuple[bytes, bytes]:
        """The table's new descriptor as sent: families added, changed or deleted, its
        attributes replaced; a descriptor without families is refused as HBase does."""
        def change(desc: TableDescriptor, m: Message) -> TableDescriptor:
            new = decode_table_schema(m.req_bytes(2, "table_schema"))
            if new.name != desc.name:
                raise ServiceError(DO_NOT_RETRY, f"the descriptor of {new.name}"
                                   f" cannot modify table {desc.name}", do_not_retry=True)
            if not new.families:
                raise ServiceError(DO_NOT_RETRY, f"Table {desc.name} should have at least "
                                   "one column family.", do_not_retry=True)
            return new
        return self._call(ctx, "ModifyTableRequest", change)


def _must_have(desc: TableDescriptor, name: bytes, done: str) -> FamilyDescriptor:
    family = desc.family(name)
    if family is None:
        raise ServiceError(INVALID_FAMILY, f"Family '{_family_name(name)}' does not exist, so "
                           f"it cannot be {done}", do_not_retry=True)
    return family
