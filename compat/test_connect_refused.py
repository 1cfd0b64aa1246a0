"""Where the running Spark's Connect server cannot take hsbloom (Spark 3.5: no Connect server plugins), asking for
one is refused before anything starts, with an error that names the Spark version and the feature.

Collected only where `running_line().connect` is false; elsewhere test_connect.py runs the round trip.
"""

from __future__ import annotations

import re

import pytest
import pyspark

import hsbloom
from conftest import free_port
from hsbloom.errors import HsbloomError


@pytest.mark.parametrize("start", [hsbloom.connect_server_command, hsbloom.start_connect_server])
def test_spark_connect_is_refused_naming_the_spark_version_and_the_feature(line, start, tmp_path):
    with pytest.raises(HsbloomError) as refused:
        if start is hsbloom.start_connect_server:
            start(port=free_port(), log_path=tmp_path / "server.log").stop()  # stopped, should it start after all
        else:
            start(port=free_port())
    message = str(refused.value)
    assert "Spark Connect" in message, message
    assert re.search(rf"Spark {re.escape(line.minor)}\b|{re.escape(pyspark.__version__)}", message), message
