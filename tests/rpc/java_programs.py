"""Running a program of HBase 2.6.1's Java client (module ``tests/minihbase/javaclient``)
against a stack a test describes, and what its stderr says of a failure."""

from __future__ import annotations

import subprocess
import uuid
from pathlib import Path
from typing import Any

from hbase_migrate.jvm.maven import java_command, module_classpath
from tests.realstack.fixtures import skip_without_real_stack

# the Maven module of the Java programs (test_rpc_java_client runs it on the embedded cluster)
MODULE = Path(__file__).parents[1] / "minihbase" / "javaclient"


def failure(stderr: str, lines: int = 12) -> str:
    """The lines naming an exception (the cause chain), not the frames of its stack."""
    named = [line for line in stderr.splitlines()
             if "Exception" in line and not line.lstrip().startswith("at ")]
    return "\n".join(named[:lines]) or stderr[-3000:]


def run_program(described: dict[str, Any], program: str, timeout: float = 180) -> list[str]:
    """The lines ``hbasemigrate.check.<program>`` prints, run on a table of its own
    through the stack's ZooKeeper; a failure or a hang fails the test, saying where."""
    skip_without_real_stack()  # Java 17 and Maven
    classpath = module_classpath(MODULE, {"hbase.version": "2.6.1"})
    table = f"{program.lower()}_{uuid.uuid4().hex[:8]}"
    command = java_command(classpath, f"hbasemigrate.check.{program}",
                           [described["zookeeper"], described["znode_parent"], table],
                           heap="256m")
    stack = described["stack"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                              check=False)
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"{program} on {stack} hangs after {exc.stdout!r}") from None
    assert done.returncode == 0, f"{program} on {stack}: {failure(done.stderr)}"
    return done.stdout.splitlines()
