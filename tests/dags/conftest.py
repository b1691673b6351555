"""Airflow runs against a throw-away home for the DAG tests; nothing touches the user's."""

from tests.airflow_home import configure

configure()
