"""What a Java client program's stderr says of its failure: the lines naming an exception
(the cause chain), not the frames of its stack."""

from __future__ import annotations


def failure(stderr: str, lines: int = 12) -> str:
    named = [line for line in stderr.splitlines()
             if "Exception" in line and not line.lstrip().startswith("at ")]
    return "\n".join(named[:lines]) or stderr[-3000:]
