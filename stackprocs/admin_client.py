"""A cluster's admin endpoint (the embedded cluster's, or a realstack HBase's) from a
client's side: :func:`call_admin` (what the ``minicluster`` commands, the demo, the soak,
``realstack.shell`` and the tests use to stop a server, move a region, roll a WAL...)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from stackprocs.process import EmbeddedStackError

_ADMIN_TIMEOUT = {"info": 60}


def call_admin(cluster_json: Path, op: str, args: dict[str, Any] | None = None) -> Any:
    """POST ``args`` to ``op`` (GET for ``info``) on the cluster's admin endpoint; errors are
    one line naming the cluster (EmbeddedStackError)."""
    try:
        described = json.loads(cluster_json.read_text(encoding="utf-8"))
    except OSError as exc:
        raise EmbeddedStackError(f"minicluster {op}: cannot read {cluster_json}: "
                                 f"{exc.strerror or exc}") from None
    except ValueError as exc:
        raise EmbeddedStackError(f"minicluster {op}: {cluster_json} is not a cluster.json "
                                 f"(not JSON: {exc})") from None
    url = described.get("admin") if isinstance(described, dict) else None
    if not url or not isinstance(url, str):
        raise EmbeddedStackError(f"minicluster {op}: {cluster_json} names no admin endpoint")
    data = None if op == "info" else json.dumps(args or {}).encode()
    request = urllib.request.Request(f"{url}/{op}", data=data,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=_ADMIN_TIMEOUT.get(op, 300)) as answer:
            return json.loads(answer.read())["result"]
    except urllib.error.HTTPError as exc:
        try:
            reason = json.loads(exc.read() or b"{}").get("error") or str(exc)
        except (ValueError, AttributeError):
            reason = str(exc)
        raise EmbeddedStackError(f"minicluster {op} ({cluster_json}): {_one_line(reason)}") \
            from None
    except OSError as exc:
        reason = getattr(exc, "reason", exc)
        raise EmbeddedStackError(f"minicluster {op}: the cluster of {cluster_json} does not "
                                 f"answer at {url} ({reason}): is the cluster running?") from None
    except (ValueError, KeyError, TypeError):
        raise EmbeddedStackError(f"minicluster {op}: {url} (from {cluster_json}) is not a "
                                 "minicluster admin endpoint") from None


def _one_line(text: str) -> str:
    return "; ".join(line.strip() for line in str(text).splitlines() if line.strip())
