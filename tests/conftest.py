"""Shared pytest configuration: hypothesis profile kept small so the suite stays fast."""

from hypothesis import HealthCheck, settings

settings.register_profile(
    "dpnoise",
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)
settings.load_profile("dpnoise")


# ------------------------------------------------------------------ Spark
import os  # noqa: E402
import shutil  # noqa: E402
import sys  # noqa: E402

import pytest  # noqa: E402


def _no_spark(reason: str) -> None:
    """In CI (CI=true) a missing JVM or pyspark is a FAILURE, never a silent skip."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"Spark tests cannot run: {reason} (CI=true: install Java 17 and "
                    'pip install -e ".[dev,spark]")', pytrace=False)
    pytest.skip(f"Spark tests skipped: {reason}")


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


#: the Spark Connect URL of the test JVM's Connect server (set by the ``spark`` fixture)
CONNECT: dict[str, str] = {}


@pytest.fixture(scope="session")
def spark():  # type: ignore[no-untyped-def]
    """ONE local SparkSession for the whole test session: local[2], 2 shuffle
    partitions, no UI, ANSI mode left ON (PySpark 4's default), so the typed view's
    casts are proven not to fail.  The same JVM also serves Spark Connect (the
    SparkConnectPlugin, on a free local port): the ``spark_connect`` fixture's client
    talks to it through gRPC exactly as to a remote cluster -- one JVM for both, since
    a process with a classic SparkContext cannot start a second, local Connect server."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        _no_spark("pyspark is not installed")
    java = os.path.join(os.environ["JAVA_HOME"], "bin", "java") \
        if os.environ.get("JAVA_HOME") else shutil.which("java")
    if not java or not os.path.exists(java):
        _no_spark("no Java runtime found (set JAVA_HOME or put java on PATH)")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # workers: this venv
    port = _free_port()
    builder = SparkSession.builder
    try:
        import pyspark.sql.connect.session  # noqa: F401  # the client: grpcio & co.

        builder = builder.config("spark.plugins",
                                 "org.apache.spark.sql.connect.SparkConnectPlugin") \
            .config("spark.connect.grpc.binding.address", "127.0.0.1") \
            .config("spark.connect.grpc.binding.port", str(port)) \
            .config("spark.connect.grpc.port.maxRetries", "64")
        CONNECT["url"] = ""  # the port actually bound is read from the JVM below
    except ImportError:
        CONNECT.pop("url", None)
    session = (builder.master("local[2]").appName("dpnoise-tests")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.default.parallelism", "2")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.ansi.enabled", "true")
               .config("spark.driver.memory", "1g")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    if "url" in CONNECT:
        # The free port can be taken between probing it and the JVM binding it (by
        # the JVM's own driver or block-manager ports, or another test worker's JVM):
        # the server retries upward, and the port it really bound is asked of it.
        service = getattr(session._jvm.org.apache.spark.sql.connect.service,
                          "SparkConnectService$").__getattr__("MODULE$")
        CONNECT["url"] = f"sc://127.0.0.1:{int(service.localPort())}"
    yield session
    if "url" in CONNECT:  # the Connect client first, while its server still runs
        from pyspark.sql.connect.session import SparkSession as ConnectSession

        client = ConnectSession._get_default_session()
        if client is not None:
            client.stop()
    session.stop()


@pytest.fixture(scope="session")
def spark_connect(spark):  # type: ignore[no-untyped-def]
    """The Spark Connect URL of the test JVM (a client session of it is made by the
    engine itself from ``spark_remote``, the path ``--spark-remote`` takes)."""
    if "url" not in CONNECT:
        _no_spark('the Spark Connect client is not installed (pip install "pyspark[connect]")')
    return CONNECT["url"]
