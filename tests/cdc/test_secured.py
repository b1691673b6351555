"""The CDC stream to a secured real Kafka broker: one broker for the module with a SASL
GSSAPI listener (principals from its own MIT KDC) and a SCRAM-SHA-512 listener over TLS
(its own CA), beside the PLAINTEXT listener the tests create topics and read back through.

* The secured listeners refuse clients without credentials (raw clients: the proof).
* Over GSSAPI (kafka-python, logged in from the keytab) and over SCRAM/TLS (confluent-kafka)
  the messages read back are what ``wal dump`` says the WAL files hold.
* Bad credentials, a wrong CA: one line naming broker (and principal), exit 2, from the real
  command line.
* No keytab key and no SCRAM password in the ledger, ``status``, the logs or ``ps``.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient

from hbase_migrate.config import load_config
from hbase_migrate.lifecycle.cdc import cdc
from realstack.kafka import KafkaBroker, KafkaSettings
from realstack.kafka.security import certificates
from tests.realstack.fixtures import (
    kerberos_environment,
    keytab_keys,
    leaks,
    skip_without_kdc,
    skip_without_real_stack,
)
from tests.support.cdc import (
    TABLE,
    Source,
    consume,
    create_topic,
    expected_messages,
    identity,
    plain,
)

pytestmark = [pytest.mark.integration, pytest.mark.realstack]
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaBroker]:
    skip_without_real_stack()
    skip_without_kdc()
    with kerberos_environment():
        broker = KafkaBroker(tmp_path_factory.mktemp("securekafka"), KafkaSettings(
            auto_create_topics=False, kerberos=True, tls=True))
        with broker.start():
            assert broker.kdc is not None
            os.environ["KRB5_CONFIG"] = str(broker.kdc.krb5_conf)  # the realm, for clients
            yield broker


def gssapi_producer(broker: KafkaBroker, **overrides: str) -> str:
    """``[cdc] producer`` for the GSSAPI listener, as a TOML inline table."""
    settings = {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanisms": "GSSAPI",
                "sasl.kerberos.service.name": "kafka",
                "sasl.kerberos.principal": broker.client_principal,
                "sasl.kerberos.keytab": str(broker.client_keytab), **overrides}
    return "producer = { " + ", ".join(f'"{k}" = "{v}"' for k, v in settings.items()) + " }\n"


def scram_producer(broker: KafkaBroker, ca: Path) -> str:
    settings = {"security.protocol": "SASL_SSL", "sasl.mechanisms": "SCRAM-SHA-512",
                "sasl.username": broker.scram_user, "sasl.password": password(broker),
                "ssl.ca.location": str(ca)}
    return "producer = { " + ", ".join(f'"{k}" = "{v}"' for k, v in settings.items()) + " }\n"


def password(broker: KafkaBroker) -> str:
    return broker.scram_password_file.read_text(encoding="utf-8").strip()


def what_a_user_sees(config: Path) -> str:
    """The ledger, ``status``, the audit report, and every process's arguments."""
    folder = config.parent
    status = cli("status", "--config", str(config))
    report = cli("report", "--config", str(config), "--out", str(folder / "report.html"))
    assert status.returncode == 0 and report.returncode == 0, status.stderr + report.stderr
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True,
                        check=True).stdout
    return "\n".join([(folder / "ledger.db").read_bytes().decode(errors="replace"),
                      status.stdout, status.stderr, report.stdout, report.stderr,
                      (folder / "report.html").read_text(encoding="utf-8"), ps])


def secrets_of(broker: KafkaBroker) -> list[str]:
    assert broker.kdc is not None
    return [*keytab_keys(broker.kdc, broker.client_keytab), password(broker)]


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hbase_migrate", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=300, check=False,
                          env=env)


def errors(stderr: str) -> list[str]:
    """The command's error lines (librdkafka's own log lines aside)."""
    return [line for line in stderr.splitlines() if line.startswith("hbase-migrate: error:")]


def test_secured_listeners_refuse_clients_without_credentials(secured: KafkaBroker) -> None:
    for bootstrap, extra in ((secured.gssapi_bootstrap, {}),
                             (secured.tls_bootstrap, {"security.protocol": "SSL",
                                                      "ssl.ca.location": str(secured.ca_file)})):
        admin = AdminClient({"bootstrap.servers": bootstrap, **extra})
        with pytest.raises(KafkaException):
            admin.list_topics(timeout=5)
    # the PLAINTEXT listener answers the same client: the refusals are the security's
    assert AdminClient({"bootstrap.servers": secured.bootstrap}).list_topics(timeout=30).brokers


def test_gssapi_stream_equals_the_wal_and_leaks_nothing(
        source: Source, secured: KafkaBroker, tmp_path: Path,
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    topic = create_topic(secured.bootstrap)
    config = source.config(tmp_path, secured.gssapi_bootstrap, topic, gssapi_producer(secured))
    summary = cdc(load_config(config), start=source.start).to_json()
    assert summary["exit_code"] == 0, summary
    paths = [f["path"] for f in summary["files"]]
    expected = expected_messages(paths, TABLE, source.start)
    assert expected
    got = consume(secured.bootstrap, topic)
    assert sorted(map(plain, got), key=identity) == sorted(expected, key=identity)
    # the broker saw our principal log in over GSSAPI
    assert secured.kdc is not None
    kdc_log = (secured.kdc.data_dir / "kdc-events.log").read_text(errors="replace")
    assert f"{secured.client_principal} for kafka/127.0.0.1@" in kdc_log

    assert leaks(what_a_user_sees(config) + caplog.text, secrets_of(secured)) == []


def test_bad_kerberos_credentials_one_line_exit_2(source: Source, secured: KafkaBroker,
                                                  tmp_path: Path) -> None:
    topic = create_topic(secured.bootstrap)
    assert secured.kdc is not None
    stranger = secured.kdc.principal("nobody")
    no_keytab = gssapi_producer(secured).replace(
        f', "sasl.kerberos.keytab" = "{secured.client_keytab}"', "")
    # without a keytab: the ticket cache, here an empty one
    empty_cache = {k: v for k, v in os.environ.items() if not k.startswith(("KRB5", "HBASE"))}
    empty_cache.update(KRB5_CONFIG=os.environ["KRB5_CONFIG"],
                       KRB5CCNAME=f"FILE:{tmp_path / 'empty.ccache'}")
    cases = {
        "wrong principal": (gssapi_producer(
            secured, **{"sasl.kerberos.principal": stranger}), None,
            f"cluster '[cdc]', Kafka broker {secured.gssapi_bootstrap}, principal {stranger}: "
            "wrong principal"),
        "no ticket": (no_keytab, empty_cache,
                      f"cluster '[cdc]', Kafka broker {secured.gssapi_bootstrap}, principal "
                      f"{secured.client_principal}: no ticket"),
        "unknown service": (gssapi_producer(
            secured, **{"sasl.kerberos.service.name": "nokafka"}) + 'delivery_timeout = "5s"\n',
            None,
            f"Kafka broker {secured.gssapi_bootstrap} refused this client "
            f"({secured.client_principal}): ", "nokafka/127.0.0.1@"),
        "unreadable keytab": (gssapi_producer(
            secured, **{"sasl.kerberos.keytab": str(tmp_path / "missing.keytab")}), None,
            f"cluster '[cdc]': keytab {tmp_path / 'missing.keytab'} is unreadable"),
    }
    for name, (producer, env, *expected) in cases.items():
        config = source.config(tmp_path / name.replace(" ", "-"), secured.gssapi_bootstrap,
                               topic, producer)
        done = cli("cdc", "--config", str(config), "--start", str(source.start), env=env)
        lines = errors(done.stderr)
        assert done.returncode == 2 and len(lines) == 1, (name, done.stderr)
        assert all(part in lines[0] for part in expected), (name, lines)
    assert consume(secured.bootstrap, topic) == []  # nothing got through


def test_scram_over_tls_and_a_wrong_ca(source: Source, secured: KafkaBroker, tmp_path: Path,
                                       caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    topic = create_topic(secured.bootstrap)
    config = source.config(tmp_path / "ok", secured.tls_bootstrap, topic,
                           scram_producer(secured, secured.ca_file))
    summary = cdc(load_config(config), start=source.start).to_json()
    assert summary["exit_code"] == 0, summary
    paths = [f["path"] for f in summary["files"]]
    got = consume(secured.bootstrap, topic)
    assert sorted(map(plain, got), key=identity) == sorted(
        expected_messages(paths, TABLE, source.start), key=identity)

    other_ca, _ = certificates(tmp_path / "other-ca")
    wrong = source.config(tmp_path / "wrong", secured.tls_bootstrap, topic,
                          scram_producer(secured, other_ca) + "delivery_timeout = \"5s\"\n")
    done = cli("cdc", "--config", str(wrong), "--start", str(source.start))
    error = errors(done.stderr)
    assert done.returncode == 2 and len(error) == 1, done.stderr
    assert f"Kafka broker {secured.tls_bootstrap} refused this client" in error[0], error
    assert "certificate verify failed" in error[0] and "ssl.ca.location" in error[0], error
    bad_password = source.config(tmp_path / "password", secured.tls_bootstrap, topic,
                                 scram_producer(secured, secured.ca_file).replace(
                                     password(secured), "not-the-password")
                                 + 'delivery_timeout = "5s"\n')
    done = cli("cdc", "--config", str(bad_password), "--start", str(source.start))
    error = errors(done.stderr)
    assert done.returncode == 2 and len(error) == 1, done.stderr
    assert f"Kafka broker {secured.tls_bootstrap} refused this client: SASL authentication " \
        "error" in error[0], error
    # the SCRAM password is in the config file (where the scan finds it) and nowhere else
    assert leaks(config.read_text(encoding="utf-8"), secrets_of(secured)) == [password(secured)]
    seen = what_a_user_sees(config) + done.stdout + done.stderr + json.dumps(summary)
    assert leaks(seen + caplog.text, secrets_of(secured)) == []
