"""What a shell needs for Airflow's own CLI on a stack (``hbase-migrate airflow env``), and
what ``airflow up`` prints of it, without starting Airflow: a stack's environment written
and read back through bash."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from hbase_migrate.airflow_shell import SHELL_FILE, exports, write_shell_env
from hbase_migrate.airflow_stack import STACK_FILE, AirflowStack, airflow_env
from hbase_migrate.cli import cli


def stack_in(folder: Path) -> AirflowStack:
    (folder / "airflow").mkdir(parents=True)
    env = airflow_env(folder, 18080, extra={"AIRFLOW__X__ODD": "it's $HOME \"quoted\""})
    return AirflowStack(folder, 18080, env)


def test_the_exports_give_a_bare_shell_the_stacks_variables(tmp_path: Path) -> None:
    stack = stack_in(tmp_path / "stack with space")
    path = write_shell_env(stack)
    assert path.stat().st_mode & 0o777 == 0o600  # a Celery stack's database URL: a password
    (stack.home / STACK_FILE).write_text("{}")
    emitted = CliRunner().invoke(cli, ["airflow", "env", "--dir", str(stack.folder)])
    assert emitted.exit_code == 0, emitted.output
    assert emitted.output.splitlines() == exports(path)
    shown = subprocess.run(["bash", "-c", emitted.output + "\nenv -0"], capture_output=True,
                           check=True, env={"PATH": "/usr/bin:/bin"}).stdout.decode()
    got = dict(line.split("=", 1) for line in shown.split("\0") if "=" in line)
    wanted = {k: v for k, v in stack.env.items() if k.startswith(("AIRFLOW", "HBASE_MIGRATE_"))
              and k not in ("AIRFLOW__API_AUTH__JWT_SECRET", "AIRFLOW__API__SECRET_KEY")}
    assert {k: got.get(k) for k in wanted} == wanted
    assert "AIRFLOW__API_AUTH__JWT_SECRET" not in got and "AIRFLOW__API__SECRET_KEY" not in got
    assert got["PATH"].split(":")[0] == stack.env["PATH"].split(":")[0]  # airflow's bin first
    for key in ("AIRFLOW_HOME", "AIRFLOW__CORE__DAGS_FOLDER", "AIRFLOW__CORE__PLUGINS_FOLDER",
                "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"):
        assert got[key] == stack.env[key]


def test_up_prints_the_line_a_shell_evals(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                          ) -> None:
    from hbase_migrate.commands.airflow import _echo_shell

    stack = stack_in(tmp_path)
    write_shell_env(stack)
    _echo_shell(stack, tmp_path)
    printed = capsys.readouterr().out.splitlines()
    assert f'  eval "$(hbase-migrate airflow env --dir {tmp_path})"' in printed
    assert [line.strip() for line in printed if line.strip().startswith("export ")] == \
        exports(stack.home / SHELL_FILE)


def test_env_without_a_stack_says_so_in_one_line(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "hbase_migrate", "airflow", "env", "--dir",
                             str(tmp_path)], capture_output=True, text=True, check=False)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (f"hbase-migrate: error: airflow env: no Airflow runs for "
                             f"{tmp_path} (start one: hbase-migrate airflow up --dir "
                             f"{tmp_path})\n")


def test_up_names_no_spark_master_unless_told() -> None:
    """``airflow up`` without ``--spark-master`` leaves ``spark_default`` to the stack's
    default (``auto``, tested on a live stack in test_live_stack)."""
    from hbase_migrate.commands.airflow import up

    option = next(p for p in up.params if p.name == "spark_master")
    assert option.default is None


def test_up_refuses_celery_on_sqlite_before_starting_anything(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["airflow", "up", "--dir", str(tmp_path), "--executor",
                                      "celery", "--database", "sqlite"])
    assert result.exit_code == 2, result.output
    assert "--executor celery needs --database postgres" in result.output
    assert not (tmp_path / "airflow").exists()


def test_up_without_postgresql_names_both_ways_out_before_starting_anything(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import hbase_migrate.airflow_stack as stack

    monkeypatch.setattr(stack, "find_pg_bin", lambda: None)
    with pytest.raises(stack.AirflowStackError) as refused:
        stack.start_airflow(tmp_path, connections=[])
    assert "apt-get install postgresql" in str(refused.value)
    assert "--database sqlite" in str(refused.value)
    assert not (tmp_path / "airflow" / STACK_FILE).exists()
