"""The Admin calls of everyday operations (issue 58), by HBase 2.6.1's own Java client
(``AdminCalls`` of ``tests/minihbase/javaclient``), against real Apache HBase 2.6.1 (the
session's ``real_hbase``) and the embedded cluster, held to the same expectations written
here by hand: the balancer's switch (on at start), a balance while it is off and on, a region
moved to the server holding it, a split at a row (three regions, every row still read), a
family added, written, modified and deleted (its cells gone with it; adding it twice,
deleting it twice and deleting the last family refused), a table attribute set with
ModifyTable, a disable and an enable."""

from __future__ import annotations

from typing import Any

import pytest

from tests.rpc.java_programs import run_program
from tests.rpc.two_stacks import described

__all__ = ["described"]  # the module's stacks: the embedded cluster and real HBase

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.realstack]

INVALID_FAMILY = "refused InvalidFamilyOperationException"
EXPECTED = [
    "balancer_was true", "balancer_enabled false", "balance_off false", "balancer_was false",
    "moved_in_place true",
    "regions ,m,t",
    # HBase's blocking Admin refuses a split at a region's start key before sending it
    "split_at_start refused IOException",
    "rows a,n,t",
    "with_h 2", f"add_again {INVALID_FAMILY}", "f_versions 5", "families f", "without_h 1",
    f"delete_again {INVALID_FAMILY}", f"delete_last {INVALID_FAMILY}",
    "note kept",
    "balance_on true",  # the balancer ran (on again, nothing in transition)
    "disabled true", "enabled true",
]


def test_admin_calls_as_hbase_answers_them(described: dict[str, Any]) -> None:
    assert run_program(described, "AdminCalls") == EXPECTED, described["stack"]
