"""Make the golden HFiles of ``tests/data/real-hfile/``: HBase's own ``StoreFileWriter``
writes them and HBase's ``HFilePrettyPrinter -p -v -m`` prints each (the ``hbase`` module's
``WriteGoldenHFiles``, one short JVM). ``python -m tests.realstack.hfile_golden OUT
[--hbase-version V]`` (``make golden-hfiles``); see the folder's README."""

from __future__ import annotations

import argparse
import shutil
import subprocess
from pathlib import Path
from tempfile import TemporaryDirectory

from realstack.hbase import DEFAULT_VERSION, hbase_classpath
from realstack.maven import RealStackError, java_command

MAIN_CLASS = "hbasemigrate.realstack.WriteGoldenHFiles"
PRINTOUT = ".hbase.txt"


def generate(out: Path, version: str = DEFAULT_VERSION) -> list[Path]:
    """Write the golden files and their printouts into ``out``; the files written."""
    out.mkdir(parents=True, exist_ok=True)
    with TemporaryDirectory(prefix="realhfile-") as tmp:
        command = java_command(_classpath(version), MAIN_CLASS, [tmp], heap="256m")
        done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
        if done.returncode != 0:
            raise RealStackError(f"WriteGoldenHFiles (HBase {version}) failed with code "
                                 f"{done.returncode}:\n{done.stderr[-2000:]}")
        written = []
        for source in sorted(Path(tmp).iterdir()):
            target = out / source.name
            if source.name.endswith(PRINTOUT):
                # the printer names the file by its temporary path: keep the name only
                text = source.read_text(encoding="utf-8")
                text = text.replace(f"file:{tmp}/", "").replace(f"{tmp}/", "")
                target.write_text(text, encoding="utf-8")
            elif not source.name.startswith("."):
                shutil.copyfile(source, target)
            written.append(target)
    return written


def _classpath(version: str) -> list[str]:
    """The stack's class path less Hadoop's old ``com.codahale`` metrics-core 3.0, whose
    ``MetricRegistry`` shadows the 3.2 one HFilePrettyPrinter's statistics need."""
    return [e for e in hbase_classpath(version) if "/com/codahale/metrics/" not in e]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", type=Path)
    parser.add_argument("--hbase-version", default=DEFAULT_VERSION)
    args = parser.parse_args()
    for path in generate(args.out, args.hbase_version):
        print(path)


if __name__ == "__main__":
    main()
