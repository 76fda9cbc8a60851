"""py4j errors in a process that runs two engines: each gateway's errors go through its own
library's hook, and a message is read from the Java throwable whichever hook ran."""

from __future__ import annotations

import py4j.java_gateway
import py4j.protocol
import pytest

from nexmark.engines import py4j_errors
from nexmark.engines.py4j_errors import forget_errors, java_message, own_errors


@pytest.fixture
def restored_hook():
    saved, hooks = py4j.java_gateway.get_return_value, dict(py4j_errors._HOOKS)
    yield
    py4j.java_gateway.get_return_value = saved
    py4j_errors._HOOKS.clear()
    py4j_errors._HOOKS.update(hooks)


def test_each_gateway_keeps_the_hook_its_library_installed(restored_hook):
    flink_client, spark_client, other = object(), object(), object()
    seen = []

    def library_hook(tag):
        return lambda answer, client, *a: seen.append((tag, client)) or tag

    py4j.java_gateway.get_return_value = library_hook("flink")  # PyFlink installs its hook
    own_errors(flink_client)
    py4j.java_gateway.get_return_value = library_hook("spark")  # then PySpark replaces it
    own_errors(spark_client)
    dispatch = py4j.java_gateway.get_return_value
    assert dispatch("answer", flink_client) == "flink"
    assert dispatch("answer", spark_client) == "spark"
    assert seen == [("flink", flink_client), ("spark", spark_client)]
    forget_errors(spark_client)
    # an unknown (or forgotten) client gets py4j's own converter
    assert py4j_errors._HOOKS.get(id(other)) is None and id(spark_client) not in py4j_errors._HOOKS
    with pytest.raises(py4j.protocol.Py4JError):
        dispatch("x", other, "t", "n")  # "x" is no valid answer for py4j itself


def test_a_message_says_the_first_line_and_the_root_cause():
    text = "org.example.Outer: failed\n\tat a.b(C.java:1)\nCaused by: java.io.IOException: full"
    assert java_message(RuntimeError(text)) == (
        "org.example.Outer: failed ... java.io.IOException: full"
    )
    assert java_message(RuntimeError("")) == "RuntimeError"
