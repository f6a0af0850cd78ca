"""The shadow store and checkpoints against real files: what a snapshot holds and skips, what a
rewind may and may not write, two stores sharing one directory, pruning with the session."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from codebot_mcp.core.agent.history import sessions_dir
from codebot_mcp.core.checkpoints import turns as cp
from codebot_mcp.core.checkpoints.shadow import ShadowStore, Snapshot, SnapshotSkipped, StoreError
from codebot_mcp.core.checkpoints.turns import Checkpoints, prune
from codebot_mcp.core.model.stream import ToolCall
from codebot_mcp.core.tools.builtin import builtin_tools

pytestmark = pytest.mark.anyio


def backdate(root: Path) -> None:
    """Files older than the racy window, as in any project that existed before the session."""
    old = time.time() - 3600
    for path in root.rglob("*"):
        if not path.is_symlink():
            os.utime(path, (old, old))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    for i in range(20):
        (root / "src" / f"m{i}.py").write_text(f"x = {i}\n" * 50)
    (root / ".gitignore").write_text("*.log\nbig/\n")
    (root / "run.log").write_text("ignored\n")
    (root / "big").mkdir()
    (root / "big" / "data.bin").write_bytes(b"\0" * 100_000)
    backdate(root)
    return root


def store(project: Path, **limits: int) -> ShadowStore:
    return ShadowStore(project.parent / "store", project, **limits)


def taken(result: Snapshot | SnapshotSkipped) -> Snapshot:
    assert isinstance(result, Snapshot), result
    return result


def test_a_second_snapshot_reads_only_what_changed(project: Path) -> None:
    shadow = store(project)
    first = taken(shadow.snapshot())
    assert first.files == 21 and first.hashed == 21  # 20 modules and .gitignore
    again = taken(shadow.snapshot())
    assert again.tree == first.tree and again.hashed == 0
    (project / "src" / "m3.py").write_text("changed\n")
    (project / "new.py").write_text("new\n")
    third = taken(shadow.snapshot())
    assert third.hashed == 2
    with shadow.locked(write=False):
        changes = {p: (a is None, b is None) for p, a, b in shadow.changed(first.tree, third.tree)}
        assert changes == {"new.py": (True, False), "src/m3.py": (False, False)}
        assert "run.log" not in shadow.flatten(third.tree)  # gitignored: never stored


def test_a_new_store_object_reuses_the_stat_cache_on_disk(project: Path) -> None:
    taken(store(project).snapshot())
    assert taken(store(project).snapshot()).hashed == 0  # another process: nothing re-read


def test_a_cap_skips_the_whole_snapshot_and_writes_nothing(project: Path) -> None:
    skipped = store(project, max_files=5).snapshot()
    assert isinstance(skipped, SnapshotSkipped)
    assert "more than 5 files (checkpoints.max_files)" in skipped.reason
    skipped = store(project, max_bytes=5_000).snapshot()
    assert isinstance(skipped, SnapshotSkipped) and "checkpoints.max_size_mb" in skipped.reason
    assert not (project.parent / "store" / "objects.pack").exists()


def test_two_stores_on_one_directory_see_each_others_objects(project: Path) -> None:
    a, b = store(project), store(project)
    first = taken(a.snapshot())
    (project / "src" / "m0.py").write_text("by b\n")
    second = taken(b.snapshot())
    (project / "src" / "m1.py").write_text("by a\n")
    third = taken(a.snapshot())  # appends after b's objects, offsets intact
    with a.locked(write=False):
        for tree in (first.tree, second.tree, third.tree):
            for entry in a.flatten(tree).values():
                assert a.pack.get(entry.digest)  # each object reads back, its digest checked


def test_a_forged_tree_cannot_name_a_path_outside(project: Path) -> None:
    shadow = store(project)
    taken(shadow.snapshot())
    with shadow.locked(write=True), shadow.pack.writing():
        pending: list[bytes] = []
        forged = shadow.pack.put(b'{"..":["f","' + b"0" * 64 + b'",420]}', pending)
        shadow.pack.flush(pending)
    with shadow.locked(write=False), pytest.raises(StoreError, match=r"invalid entry '\.\.'"):
        shadow.flatten(forged)


async def run_turn(checkpoints: Checkpoints, root: Path, change: object) -> None:
    """A turn whose one call is a bash call (write capability): snapshot, change, end."""
    tools = {t.name: t for t in builtin_tools(root)}
    await checkpoints.begin("a turn")
    await checkpoints.before_calls([ToolCall("c1", "bash", "{}")], tools.get)
    change()  # type: ignore[operator]
    checkpoints.end()
    await checkpoints.settle()


async def test_a_read_only_turn_takes_no_snapshot(project: Path) -> None:
    checkpoints = Checkpoints(project, "s1")
    tools = {t.name: t for t in builtin_tools(project)}
    await checkpoints.begin("just look")
    await checkpoints.before_calls([ToolCall("c1", "read", "{}")], tools.get)
    checkpoints.end()
    [turn] = checkpoints.turns()
    assert turn.before is None and checkpoints.last is None
    assert checkpoints.changes(turn) == []


async def test_a_symlink_planted_in_a_parent_is_not_followed(project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    checkpoints = Checkpoints(project, "s1")

    def change() -> None:
        (project / "src" / "m1.py").write_text("changed\n")
        (project / "src" / "m2.py").unlink()
        (project / "top.py").write_text("new\n")

    await run_turn(checkpoints, project, change)
    # After the turn, someone swaps src/ for a link to a directory outside the project.
    os.rename(project / "src", tmp_path / "src-moved")
    os.symlink(outside, project / "src")
    plan = checkpoints.plan(1)
    restored = checkpoints.restore(plan)
    assert sorted(p for p, _ in restored.failed) == ["src/m1.py", "src/m2.py"]
    assert all("is a symlink now; not followed" in why for _, why in restored.failed)
    assert [a.path for a in restored.done] == ["top.py"] and not (project / "top.py").exists()
    assert list(outside.iterdir()) == []  # nothing was written through the link


async def test_the_plan_says_what_changed_after_the_turn(project: Path) -> None:
    checkpoints = Checkpoints(project, "s1")
    await run_turn(checkpoints, project, lambda: (project / "src" / "m1.py").write_text("t\n"))
    (project / "src" / "m1.py").write_text("edited by hand after the turn\n")
    (project / "src" / "m5.py").write_text("a file no turn touched\n")
    plan = checkpoints.plan(1)
    assert [(a.path, a.do, a.changed_since) for a in plan.actions] == [
        ("src/m1.py", "restore", True)
    ]
    checkpoints.restore(plan)
    assert (project / "src" / "m1.py").read_text() == "x = 1\n" * 50
    assert (project / "src" / "m5.py").read_text() == "a file no turn touched\n"


async def test_checkpoints_go_with_their_session(project: Path, tmp_path: Path) -> None:
    os.environ["CODEBOT_HOME"] = str(tmp_path / "home")  # the conftest's, made explicit
    sessions = sessions_dir(project)
    sessions.mkdir(parents=True)
    (sessions / "kept.jsonl").write_text("{}\n")
    kept, gone = Checkpoints(project, "kept"), Checkpoints(project, "gone")
    await run_turn(kept, project, lambda: (project / "src" / "m1.py").write_text("k\n"))
    big = os.urandom(1_500_000)  # incompressible: the pack grows by as much
    await run_turn(gone, project, lambda: (project / "src" / "m2.py").write_bytes(big))
    await run_turn(gone, project, lambda: (project / "src" / "m2.py").write_text("small\n"))
    pack = kept.store.pack_path
    size = pack.stat().st_size
    assert prune(project) == 0  # "gone" has no session file, but it is fresh
    old = time.time() - cp.ORPHAN_AFTER_SECONDS - 10
    os.utime(gone.path, (old, old))
    assert prune(project) == 1
    assert not gone.path.exists() and kept.path.exists()
    assert pack.stat().st_size < size / 2  # the big object only "gone" used is collected
    plan = kept.plan(1)  # the session that stays still rewinds
    assert [a.path for a in plan.actions] == ["src/m1.py"]
    kept.restore(plan)
    assert (project / "src" / "m1.py").read_text() == "x = 1\n" * 50


def test_gitignore_rules_as_git_reads_them(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "sub" / "deep").mkdir(parents=True)
    (root / ".gitignore").write_text("*.log\n!keep.log\nnode_modules/\n")
    (root / "sub" / ".gitignore").write_text("local.txt\n/only-here.txt\n")
    for name in ("a.log", "keep.log", "sub/local.txt", "sub/deep/local.txt", "sub/only-here.txt"):
        (root / name).write_text(name)
    (root / "sub" / "deep" / "only-here.txt").write_text("kept: the rule is anchored")
    (root / "node_modules" / "x").mkdir(parents=True)
    (root / "node_modules" / "x" / "i.js").write_text("ignored")
    (root / "odd\nname.log").write_text("a newline in a name")
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    shadow = store(root)
    snapshot = taken(shadow.snapshot())
    with shadow.locked(write=False):
        paths = sorted(shadow.flatten(snapshot.tree))
    assert paths == [".gitignore", "keep.log", "sub/.gitignore", "sub/deep/only-here.txt"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a directory whatever its mode")
async def test_an_unreadable_directory_is_recorded_as_such_and_never_touched(
    project: Path,
) -> None:
    locked = project / "locked"
    locked.mkdir()
    (locked / "inside.txt").write_text("not ours to read\n")
    locked.chmod(0)
    try:
        checkpoints = Checkpoints(project, "s1")

        def change() -> None:
            locked.chmod(0o755)  # readable after the turn: its files must not look "added"
            (project / "src" / "m1.py").write_text("changed\n")

        await run_turn(checkpoints, project, change)
        plan = checkpoints.plan(1)
        assert [a.path for a in plan.actions] == ["src/m1.py"]
        checkpoints.restore(plan)
        assert (locked / "inside.txt").read_text() == "not ours to read\n"
    finally:
        locked.chmod(0o755)


def test_a_directory_unreadable_on_either_side_is_not_compared(project: Path) -> None:
    """What the walk records for a directory it cannot open (runs as root too, unlike the
    test above): an ``x`` entry, whose subtree no diff or flatten ever opens."""
    shadow = store(project)
    readable = taken(shadow.snapshot())
    with shadow.locked(write=True), shadow.pack.writing():
        pending: list[bytes] = []
        top = shadow.tree(readable.tree)
        unread = {name: list(value) for name, value in top.items()}
        unread["src"] = ["x", "0" * 64, 0]
        blob = json.dumps(unread, sort_keys=True, separators=(",", ":")).encode()
        unreadable = shadow.pack.put(blob, pending)
        shadow.pack.flush(pending)
    with shadow.locked(write=False):
        assert list(shadow.changed(readable.tree, unreadable)) == []
        assert list(shadow.changed(unreadable, readable.tree)) == []
        assert not any(p.startswith("src/") for p in shadow.flatten(unreadable))
        assert shadow.entry(unreadable, "src/m1.py") is None
