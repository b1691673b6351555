"""The class-path builder: clear errors without Maven or for an artifact Maven Central does not
have, and no Maven at all once a module's class path is cached."""

from __future__ import annotations

from pathlib import Path

import pytest

from realstack.maven import RealStackError, java_command, module_classpath

from .fixtures import skip_without_real_stack

TINY_POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>test</groupId><artifactId>{name}</artifactId><version>1</version>
  <dependencies><dependency>
    <groupId>org.apache.hbase</groupId><artifactId>hbase-common</artifactId>
    <version>${{hbase.version}}</version>
  </dependency></dependencies>
</project>
"""


def module(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "pom.xml").write_text(TINY_POM.format(name=name))
    return folder


def test_no_maven_is_one_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HBASE_MIGRATE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(RealStackError, match=r"Maven is required.*apt-get install maven"):
        module_classpath(module(tmp_path, "m"), {"hbase.version": "2.6.1"})


def test_no_module_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(RealStackError, match=r"no Maven module at .*pom\.xml"):
        module_classpath(tmp_path / "nowhere")


@pytest.mark.realstack
def test_unknown_artifact_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    skip_without_real_stack()
    monkeypatch.setenv("HBASE_MIGRATE_CACHE", str(tmp_path / "cache"))
    with pytest.raises(RealStackError, match=r"hbase-common:jar:0\.0\.404.*\(log .*maven\.log\)"):
        module_classpath(module(tmp_path, "m"), {"hbase.version": "0.0.404"})


@pytest.mark.realstack
def test_cached_classpath_needs_no_maven(tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Resolved once, the class path is read back with no mvn on PATH (offline)."""
    skip_without_real_stack()
    monkeypatch.setenv("HBASE_MIGRATE_CACHE", str(tmp_path / "cache"))
    folder = module(tmp_path, "m")
    first = module_classpath(folder, {"hbase.version": "2.6.1"})
    assert any(Path(p).name == "hbase-common-2.6.1.jar" for p in first)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert module_classpath(folder, {"hbase.version": "2.6.1"}) == first
    with pytest.raises(RealStackError, match="Maven is required"):
        module_classpath(folder, {"hbase.version": "2.6.0"})  # another key: not cached


def test_java_command_bounds_heap_and_opens_modules(monkeypatch: pytest.MonkeyPatch) -> None:
    skip_without_real_stack()
    command = java_command(["a.jar", "b"], "x.Main", ["--k", "v"], heap="300m",
                           system_properties={"p": "1"})
    assert "-Xmx300m" in command
    assert "--add-opens=java.base/java.nio=ALL-UNNAMED" in command
    assert command[-5:] == ["-cp", "a.jar:b", "x.Main", "--k", "v"]
    assert "-Dp=1" in command
    monkeypatch.setenv("HBASE_MIGRATE_JVM_OPTIONS", "-XX:TieredStopAtLevel=1 '-Da=b c'")
    added = java_command(["a.jar"], "x.Main", jvm_options=("-Dlast=1",))
    assert added.index("-XX:TieredStopAtLevel=1") < added.index("-Da=b c") < added.index(
        "-Dlast=1") < added.index("-cp")


def test_two_builds_at_once_resolve_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two processes (here threads, each its own lock handle) asking for the same module's
    class path at once: Maven runs once, and both get the class path it resolved. Before the
    lock, both ran Maven and compiled into the same folder, each removing the other's."""
    import threading

    jar = tmp_path / "dep.jar"
    jar.write_bytes(b"")
    calls = tmp_path / "calls"
    fake = tmp_path / "bin" / "mvn"  # writes the class path after a pause, counts its runs
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho run >> " + str(calls) + "\nsleep 0.5\n"
                    "for a in \"$@\"; do case \"$a\" in -Dmdep.outputFile=*) "
                    f"printf %s {jar} > \"${{a#-Dmdep.outputFile=}}\";; esac; done\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}:/usr/bin:/bin")
    monkeypatch.setenv("HBASE_MIGRATE_CACHE", str(tmp_path / "cache"))
    folder = module(tmp_path, "m")
    found: list[list[str]] = []
    threads = [threading.Thread(target=lambda: found.append(module_classpath(folder)))
               for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert found == [[str(jar)], [str(jar)]]
    assert calls.read_text().split() == ["run"]
