"""`make cluster` (deploy/cluster.py) supervises what it starts: a port counts as served only by the
process it started, what dies is started again after a pause that doubles, the workers never go
through PgBouncer's transaction mode, and every process reaches the primary of a failover cluster
through one libpq multi-host URL."""

import socket
import sys
import time

import pytest
from psycopg.conninfo import conninfo_attempts, conninfo_to_dict, make_conninfo

from config.settings.database import database_parse
from deploy import cluster as cluster_module
from deploy.cluster import Cluster, ClusterError, Group


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def cluster(tmp_path):
    made = Cluster(home=tmp_path, ha=False)
    made.logs.mkdir(parents=True)
    yield made
    for group in made.groups.values():
        group.stop(timeout=5)


def serve(cluster, name: str, port: int) -> Group:
    return cluster._start(name, [sys.executable, "-m", "http.server", "-b", "127.0.0.1", str(port)], env={})


def test_a_port_counts_as_served_only_by_the_process_started_for_it(cluster):
    port = free_port()
    serve(cluster, "web1", port)
    cluster._wait_port(port, "web1", timeout=30)
    assert cluster.groups["web1"].owns(port)

    # Another process started for the same port: it cannot bind, exits, and is not taken for served.
    cluster._start("web2", [sys.executable, "-m", "http.server", "-b", "127.0.0.1", str(port)], env={})
    with pytest.raises(ClusterError, match="web2 exited"):
        cluster._wait_port(port, "web2", timeout=30)


def test_a_process_that_never_listens_is_not_taken_for_one_that_does(cluster):
    port = free_port()
    serve(cluster, "other", port)
    cluster._wait_port(port, "other", timeout=30)
    cluster._start("redis", [sys.executable, "-c", "import time; time.sleep(60)"], env={})

    with pytest.raises(ClusterError, match=r"redis did not listen .*not started as redis"):
        cluster._wait_port(port, "redis", timeout=1)


def test_what_dies_is_started_again_after_a_pause_that_doubles(cluster, monkeypatch):
    monkeypatch.setattr(cluster_module, "RESTART_FIRST", 0.2)
    cluster._start("work", [sys.executable, "-c", "raise SystemExit(3)"], env={})
    group = cluster.groups["work"]
    group.process.wait(timeout=30)

    said = cluster.supervise()
    assert said == [f"work (pid {group.pid}) exited with 3; starting it again in 0 s"]
    assert group.pause == pytest.approx(0.2) and group.starts == 1
    time.sleep(0.25)
    assert "work started again (start 2" in cluster.supervise()[0]

    group.process.wait(timeout=30)
    cluster.supervise()
    assert group.pause == pytest.approx(0.4)  # it keeps dying: a longer pause each time


def test_workers_never_go_through_pgbouncers_transaction_mode(cluster):
    cluster.pooling = "pgbouncer"
    web, worker = cluster.django_env(), cluster.django_env(worker=True)

    assert web["DATABASE_URL"].endswith(f":{cluster.pgbouncer_port}/joyback")
    assert web["DB_SERVER_PREPARE"] == "0"
    assert worker["DATABASE_URL"].endswith(f":{cluster.pgbouncer_port}/joyback_session")
    assert "DB_SERVER_PREPARE" not in worker
    cluster._pgbouncer_write()
    ini = (cluster.home / "pgbouncer" / "pgbouncer.ini").read_text()
    assert "joyback_session = host=127.0.0.1" in ini and "pool_mode=session" in ini
    assert "server_reset_query = DISCARD ALL" in ini


def test_a_failover_cluster_is_one_multi_host_url_that_psycopg_tries_in_turn():
    url = Cluster(ha=True).primary_url
    config = database_parse(url)

    assert config["HOST"] == "127.0.0.1,127.0.0.1"
    assert config["PORT"] == f"{cluster_module.PORT_BASE + 1},{cluster_module.PORT_BASE + 2}"
    assert config["NAME"] == "joyback" and config["USER"] == "postgres"
    assert config["OPTIONS"] == {"target_session_attrs": "read-write", "connect_timeout": 2}
    # What Django hands psycopg: one attempt per host, each asking for a read-write session.
    conninfo = make_conninfo(host=config["HOST"], port=config["PORT"], **config["OPTIONS"])
    attempts = conninfo_attempts(conninfo_to_dict(conninfo))
    assert [attempt["port"] for attempt in attempts] == config["PORT"].split(",")
    assert all(attempt["target_session_attrs"] == "read-write" for attempt in attempts)
    assert database_parse("postgres://u@db1/x")["HOST"] == "db1"  # one host: as before
    assert database_parse("postgres://u@db1,db2/x")["PORT"] == ""
