#!/usr/bin/env bash
# make package-check: the wheel as a user installs it. Builds it (pyproject's backend: the
# Cython hot loops compiled in by hatch_build.py), installs it with its [airflow,spark]
# extras into a fresh venv, the versions of uv.lock as constraints (from uv's cache, else
# PyPI), or with AIRFLOW=X.Y.Z into a venv that holds that Airflow release first (which
# must stay) with the extras the Cloud Composer recipe installs ([airflow,bigtable], no
# constraint: docs/guides/bigtable.md), then runs, away from the checkout: hbase-migrate
# --version (every hot path compiled), scripts/check_installed.py (the provider's hooks,
# every DAG, providers list) and, in the fresh venv, the demo, which must end GO.
set -euo pipefail
cd "$(dirname "$0")/.."
UV=${UV:-.tools/bin/uv}
PYTHON=${PYTHON:-python3}
OUT=${OUT:-build/package-check}
AIRFLOW=${AIRFLOW:-}
root=$PWD

rm -rf "$OUT"
mkdir -p "$OUT"
"$UV" build --quiet --wheel -o "$OUT/dist"
wheel=$(ls "$OUT"/dist/hbase_migrate-*.whl)
echo "built $(basename "$wheel")"
case "$(basename "$wheel")" in *-py3-none-any.whl)
    echo "package-check: the wheel is pure Python (no compiled module)"; exit 1;; esac

"$UV" venv --quiet --python "$PYTHON" "$OUT/venv"
export VIRTUAL_ENV=$root/$OUT/venv
if [ -n "$AIRFLOW" ]; then
    # a user's Airflow first, then the wheel as the Composer recipe installs it, with no
    # constraint: pip must keep that Airflow
    "$UV" pip install --quiet "apache-airflow==$AIRFLOW"
    "$UV" pip install --quiet "$wheel[airflow,bigtable]"
else
    "$UV" export --quiet --frozen --no-dev --all-extras --no-emit-project --no-hashes \
        -o "$OUT/constraints.txt"
    "$UV" pip install --quiet -c "$OUT/constraints.txt" "$wheel[airflow,spark]"
fi

cd "$OUT"  # nothing of the checkout on the import path
venv/bin/hbase-migrate --version | tee version.txt
grep -q "^hot paths: all [0-9]* compiled" version.txt || {
    echo "package-check: not every hot path runs compiled"; exit 1; }
venv/bin/python "$root/scripts/check_installed.py" ${AIRFLOW:+--airflow-version "$AIRFLOW"}
if [ -z "$AIRFLOW" ]; then
    # the main job from the installed package alone, on its embedded stack
    venv/bin/hbase-migrate demo --no-airflow --dir demo | tee demo.txt
    grep -q "^cutover gate: GO" demo.txt || { echo "package-check: the demo did not end GO"; exit 1; }
fi
echo "package-check: OK"
