"""An index directory gets its source's permission (spark.hsbloom.index.permissions, docs/security.md).

Read access to an index is read access to membership of the indexed values, so these tests check what another
OS user can do: a second user (`hsbloom_other`, created if absent: the tests run as root, as CI does) tries to
list every directory and read every file of an index, through `runuser`. Of a table closed with `chmod 700` it
gets nothing; of an open table (755), or of one whose group it is in, everything.

pytest's temporary directories are 0o700 for root, which would close every path under them to the other user
whatever hsbloom does, and pytest makes its common parent 0o700 again whenever any session starts. So the tables
and the system path of each test live in a directory of their own under /tmp (which every user traverses), made
0o755 and removed afterwards.
"""

from __future__ import annotations

import grp
import json
import os
import pwd
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path
from typing import Iterator

import pytest

from hsbloom import BFIndexConfig, Hyperspace, settings
from hsbloom.errors import IndexPermissionsError
from jar_log import Log

OTHER_USER = "hsbloom_other"

# Run as the other user: list each directory, read each file; print what happened to each path.
_TRY_AS_OTHER = """
import json, os, sys
results = {}
for path, is_dir in json.loads(sys.argv[1]):
    try:
        os.listdir(path) if is_dir else open(path, "rb").read()
        results[path] = "ok"
    except OSError as e:
        results[path] = type(e).__name__
print(json.dumps(results))
"""


@pytest.fixture(scope="module")
def other_user() -> str:
    """The second OS user, created if absent (without a home or a login shell)."""
    try:
        pwd.getpwnam(OTHER_USER)
    except KeyError:
        created = subprocess.run(
            ["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", OTHER_USER], capture_output=True, text=True
        )
        try:  # another process may have created it meanwhile: what counts is that it exists now
            pwd.getpwnam(OTHER_USER)
        except KeyError:
            pytest.fail(f"cannot create the OS user {OTHER_USER} (these tests run as root): {created.stderr.strip()}")
    return OTHER_USER


@pytest.fixture
def shared(spark, system_path) -> Iterator[Path]:
    """A directory every user can traverse, holding the test's tables and (re-pointed there) its system path;
    the `system_path` fixture sets the setting back afterwards."""
    root = Path(tempfile.mkdtemp(prefix="hsbloom-permissions-", dir="/tmp"))
    root.chmod(0o755)
    spark.conf.set(settings.SYSTEM_PATH, str(root / "indexes"))
    try:
        yield root
    finally:
        spark.conf.unset(settings.INDEX_PERMISSIONS)
        shutil.rmtree(root)


@pytest.fixture
def hs(spark) -> Hyperspace:
    return Hyperspace(spark)


def write_table(spark, shared: Path, name: str, mode: int, group: str | None = None) -> Path:
    """A small Parquet table in `shared`, its directory given `mode` (and `group`)."""
    path = shared / name
    spark.range(0, 100, numPartitions=2).write.parquet(str(path))
    if group is not None:
        os.chown(path, -1, grp.getgrnam(group).gr_gid)
    path.chmod(mode)
    return path


def create_index(spark, hs: Hyperspace, table: Path, name: str) -> Path:
    hs.create_index(spark.read.parquet(str(table)), BFIndexConfig(name, ["id"]))
    return Path(spark.conf.get(settings.SYSTEM_PATH)) / name


def other_user_access(index_dir: Path) -> dict[str, str]:
    """What the other user gets listing each directory and reading each file of `index_dir` (the directory
    itself included): "ok" or the error's name."""
    paths = [(str(index_dir), True)]
    for parent, dirs, files in os.walk(index_dir):
        paths += [(os.path.join(parent, d), True) for d in dirs] + [(os.path.join(parent, f), False) for f in files]
    assert any(p.endswith(".json") for p, _ in paths) and any(p.endswith(".parquet") for p, _ in paths), paths
    done = subprocess.run(
        ["runuser", "-u", OTHER_USER, "--", "/usr/bin/python3", "-c", _TRY_AS_OTHER, json.dumps(paths)],
        capture_output=True, text=True, cwd="/", check=True,
    )
    return json.loads(done.stdout)


def mode_and_group(path: Path) -> tuple[str, str]:
    status = os.stat(path)
    return stat.filemode(status.st_mode), grp.getgrgid(status.st_gid).gr_name


@pytest.mark.parametrize(
    ("table_mode", "table_group", "index_mode", "other_user_gets"),
    [
        pytest.param(0o700, "root", "drwx------", "PermissionError", id="closed"),
        pytest.param(0o755, "root", "drwxr-xr-x", "ok", id="open"),
        # Open to its group only, which the other user is in (useradd made the user's own group).
        pytest.param(0o750, OTHER_USER, "drwxr-x---", "ok", id="open-to-its-group"),
    ],
)
def test_an_index_is_as_open_to_other_users_as_its_table(
    spark, hs, shared, other_user, table_mode, table_group, index_mode, other_user_gets
):
    table = write_table(spark, shared, "table", table_mode, group=table_group)
    index_dir = create_index(spark, hs, table, "table_ids")

    assert mode_and_group(index_dir) == mode_and_group(table) == (index_mode, table_group)
    access = other_user_access(index_dir)
    assert set(access.values()) == {other_user_gets}, access


@pytest.mark.parametrize("mode", ["full", "incremental", "quick"])
def test_a_refresh_closes_the_index_of_a_table_closed_since(spark, hs, shared, other_user, mode):
    table = write_table(spark, shared, "events", 0o755)
    index_dir = create_index(spark, hs, table, "events_ids")
    assert set(other_user_access(index_dir).values()) == {"ok"}

    table.chmod(0o700)
    result = hs.refresh_index("events_ids", mode)

    assert not result.refreshed  # no file changed: the refresh has nothing else to do
    assert mode_and_group(index_dir) == ("drwx------", "root")
    access = other_user_access(index_dir)
    assert set(access.values()) == {"PermissionError"}, access


def test_inherit_leaves_the_index_to_the_umask(spark, hs, shared, other_user):
    """Under `inherit` the index directory has the mode the umask gives and the group of the user who made it,
    not the table's (with `source` it would be ("drwx------", other_user))."""
    spark.conf.set(settings.INDEX_PERMISSIONS, "inherit")
    table = write_table(spark, shared, "secrets", 0o700, group=other_user)
    index_dir = create_index(spark, hs, table, "secrets_ids")

    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(os.stat(index_dir).st_mode) == 0o777 & ~umask
    assert mode_and_group(index_dir)[1] == "root"


def test_a_permission_that_cannot_be_read_fails_the_refresh_before_it_writes(spark, hs, shared):
    table = write_table(spark, shared, "events", 0o755)
    index_dir = create_index(spark, hs, table, "events_ids")
    log = Log(spark, index_dir)
    entries = log.ids()
    shutil.rmtree(table)

    with pytest.raises(IndexPermissionsError) as raised:
        hs.refresh_index("events_ids", "full")

    message = str(raised.value)
    assert str(table) in message and "must exist" in message, message
    assert f"{settings.INDEX_PERMISSIONS} to inherit" in message, message  # the other way out
    assert log.ids() == entries


def test_an_unknown_setting_fails_the_create_before_it_writes(spark, hs, shared):
    spark.conf.set(settings.INDEX_PERMISSIONS, "public")
    table = write_table(spark, shared, "events", 0o755)

    with pytest.raises(IndexPermissionsError, match=rf"{settings.INDEX_PERMISSIONS} must be one of source, inherit"):
        create_index(spark, hs, table, "events_ids")
    assert not (shared / "indexes" / "events_ids").exists()


def test_a_table_inside_a_closed_directory_gets_a_closed_index(spark, hs, shared, other_user):
    """A 755 table inside a 700 directory is closed to other users by that directory; so is its index."""
    home = shared / "home"
    home.mkdir(mode=0o700)
    home.chmod(0o700)
    table = write_table(spark, home, "table", 0o755)
    index_dir = create_index(spark, hs, table, "home_ids")

    assert mode_and_group(index_dir) == ("drwx------", "root")
    access = other_user_access(index_dir)
    assert set(access.values()) == {"PermissionError"}, access


def test_delete_restore_and_vacuum_follow_the_table_too(spark, hs, shared, other_user):
    """Not only create and refresh: every operation that writes the log gives the index its table's permission
    again, and the index of a table that is gone is closed to its owner (and can still be deleted)."""
    table = write_table(spark, shared, "events", 0o755)
    index_dir = create_index(spark, hs, table, "events_ids")

    table.chmod(0o700)
    hs.delete_index("events_ids")
    assert mode_and_group(index_dir) == ("drwx------", "root")

    table.chmod(0o755)
    hs.restore_index("events_ids")
    assert mode_and_group(index_dir) == ("drwxr-xr-x", "root")
    assert set(other_user_access(index_dir).values()) == {"ok"}

    shutil.rmtree(table)
    hs.delete_index("events_ids")
    assert mode_and_group(index_dir) == ("drwx------", "root")
    hs.vacuum_index("events_ids")
    assert not any(p.name.startswith("v__=") for p in index_dir.iterdir())
