"""What Flink needs to read from and checkpoint to an S3 store, as the probes
(tests/engines/test_s3_probes.py) found it working against s3proxy; docs/object-store.md.

The engine takes it when a run is on a store (`Engine.use_object_store`, called by
`protocol.preparation.prepare` for `--data s3://` or `--checkpoints s3://`): the
`flink-s3-fs-hadoop` plugin in `<plugins>/s3-fs-hadoop/` (never lib/), the `s3.*` options in the
configuration the file systems are initialized with. A cluster's processes (`jobmanager.sh`,
`taskmanager.sh`) initialize them at start from FLINK_PLUGINS_DIR and their config.yaml;
PyFlink's embedded cluster does not: the gateway must call
`FileSystem.initialize(configuration, pluginManager)` itself (`initialize_plugins`).

The options hold the secret key: they go into a config.yaml of mode 600 in the run's scratch
folder, never into a result (`engines.support.redacted` masks it).
"""

from __future__ import annotations

from pathlib import Path

from nexmark.maven import link_into
from nexmark.storage.jars import JARS
from nexmark.storage.s3 import S3Settings

PLUGIN = "s3-fs-hadoop"  # the plugin's folder under plugins/


def plugins_dir(root: Path, extra: Path | None = None, fetch: bool = True) -> Path:
    """A plugins folder at `root` holding `s3-fs-hadoop/` (the jar linked from the cache),
    and the plugins of `extra` (a distribution's plugins/) linked beside it."""
    link_into(root / PLUGIN, JARS.ensure(["flink-s3"], fetch=fetch))
    if extra is not None and extra.is_dir():
        for plugin in extra.iterdir():
            if plugin.is_dir() and not (root / plugin.name).exists():
                (root / plugin.name).symlink_to(plugin, target_is_directory=True)
    return root


def options(settings: S3Settings) -> dict[str, str]:
    """Flink's `s3.*` options (forwarded by the plugin to S3A as `fs.s3a.*`)."""
    options = {"s3.path.style.access": "true"}
    if settings.endpoint:
        options["s3.endpoint"] = settings.endpoint
        options["s3.endpoint.region"] = settings.region
    if settings.access_key:
        options["s3.access-key"] = settings.access_key
    if settings.secret_key:
        options["s3.secret-key"] = settings.secret_key
    return options


# Table options for a Parquet source on s3://: the planner's statistics report reads the files'
# footers through Hadoop's own FileSystem (the parquet format's hadoop-common, not Flink's
# plugin), which knows no s3:// (measured: a NoClassDefFoundError logged as a warning, the
# statistics skipped, the query unaffected). Off, the planner does not try.
TABLE_OPTIONS = {"table.optimizer.source.report-statistics-enabled": "false"}


def gateway_env(
    root: Path, settings: S3Settings, own: dict[str, str] | None = None, fetch: bool = True
) -> dict[str, str]:
    """The environment of a PyFlink gateway whose embedded cluster reaches the store: under
    `root`, `plugins/` (the S3 plugin) and `conf/` (PyFlink's config.yaml plus the `s3.*`
    options, mode 600: it holds the secret). FLINK_HOME set: PyFlink then keeps our
    FLINK_PLUGINS_DIR. `own`: s3.* options that win over `settings` (the user's). Call
    `initialize_plugins` once the gateway runs."""
    import pyflink
    import yaml

    dist = Path(pyflink.__file__).parent
    plugins = plugins_dir(root / "plugins", fetch=fetch)
    conf = root / "conf"
    conf.mkdir(parents=True, exist_ok=True)
    for item in (dist / "conf").iterdir():
        if item.is_file() and item.name != "config.yaml":
            (conf / item.name).write_bytes(item.read_bytes())
    config = yaml.safe_load((dist / "conf" / "config.yaml").read_text()) or {}
    config.update({**options(settings), **(own or {})})
    target = conf / "config.yaml"
    target.touch(mode=0o600)
    target.chmod(0o600)
    target.write_text(yaml.safe_dump(config))
    return {"FLINK_HOME": str(dist), "FLINK_PLUGINS_DIR": str(plugins), "FLINK_CONF_DIR": str(conf)}


def cluster_setup(settings: S3Settings, fetch: bool = True) -> tuple[list[Path], dict]:
    """What every JobManager and TaskManager of a Flink cluster needs to reach the store: the
    plugin's jars (into `<FLINK_PLUGINS_DIR>/s3-fs-hadoop/`, never lib/) and the options for
    its config.yaml (mode 600: the secret is in them). A cluster's processes initialize their
    file systems with both at start."""
    return JARS.ensure(["flink-s3"], fetch=fetch), options(settings)


def initialize_plugins(jvm) -> None:
    """In a PyFlink gateway (`jvm` its py4j view): load FLINK_PLUGINS_DIR and initialize
    Flink's file systems with them and FLINK_CONF_DIR's configuration, as a cluster
    entry point does at start (the embedded cluster skips it: `s3://` is then unknown)."""
    conf = jvm.org.apache.flink.configuration.GlobalConfiguration.loadConfiguration()
    plugins = jvm.org.apache.flink.core.plugin.PluginUtils.createPluginManagerFromRootFolder(conf)
    jvm.org.apache.flink.core.fs.FileSystem.initialize(conf, plugins)
