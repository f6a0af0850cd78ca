"""The fork server the end-to-end tests run ``codebot`` through (``tests/fakes/zygote.py``): a
fork must be what the console script would be, as its caller sees it (arguments, environment,
directory, streams, exit code, signals), or fall back to the console script itself."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.fakes import zygote
from tests.fakes.procs import CODEBOT, alive, wait_until

PROBE = """\
import json, os, signal, sys, time
what = sys.argv[1]
if what == "report":
    print(json.dumps({
        "argv": sys.argv, "cwd": os.getcwd(), "env": dict(os.environ), "path0": sys.path[0],
        "stdin": sys.stdin.read(), "encoding": sys.stdout.encoding,
        "line_buffering": [sys.stdout.line_buffering, sys.stderr.line_buffering],
        "write_through": sys.stdout.write_through, "openai": "openai" in sys.modules,
        "sigint": signal.getsignal(signal.SIGINT) is signal.default_int_handler,
        "sigterm": signal.getsignal(signal.SIGTERM) == signal.SIG_DFL,
        "sigpipe": signal.getsignal(signal.SIGPIPE) == signal.SIG_IGN,
        "mask": sorted(signal.pthread_sigmask(signal.SIG_BLOCK, [])),
    }))
    print("to stderr", file=sys.stderr)
elif what == "exit":
    sys.stdout.write("unflushed")
    sys.exit(int(sys.argv[2]))
elif what == "message":
    sys.exit("a message")
elif what == "raise":
    raise ValueError("boom")
elif what == "wait":
    import atexit
    atexit.register(lambda: print("atexit ran", flush=True))
    open(sys.argv[2], "w").write(str(os.getpid()))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(7))
    time.sleep(60)
"""


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "probe"
    path.write_text(f"#!{sys.executable}\n{PROBE}")
    path.chmod(0o755)
    return path


def both(script: Path, *args: str, **kwargs: object) -> list[subprocess.CompletedProcess[str]]:
    """The same run through the fork server and as the script itself."""
    return [
        subprocess.run([*prefix, *args], capture_output=True, text=True, timeout=60, **kwargs)  # type: ignore[call-overload]
        for prefix in (zygote.command(script), [str(script)])
    ]


def test_a_fork_sees_what_the_script_itself_sees(script: Path, tmp_path: Path) -> None:
    env = {**os.environ, "ZYGOTE_TEST": "yes", "PYTHONUNBUFFERED": "1"}
    env.pop("ZYGOTE_ABSENT", None)
    forked, itself = both(script, "report", "x y", cwd=tmp_path, env=env, input="typed\n")
    assert forked.returncode == itself.returncode == 0
    assert forked.stderr == itself.stderr == "to stderr\n"
    seen, expected = json.loads(forked.stdout), json.loads(itself.stdout)
    assert seen.pop("openai") and not expected.pop("openai")  # preloaded: the one difference
    assert seen == expected
    assert seen["argv"] == [str(script), "report", "x y"] and seen["stdin"] == "typed\n"
    assert seen["env"]["ZYGOTE_TEST"] == "yes" and seen["cwd"] == str(tmp_path)
    assert seen["write_through"] and seen["sigint"] and seen["sigpipe"] and not seen["mask"]


@pytest.mark.parametrize(
    ("args", "code", "out", "err"),
    [
        (("exit", "3"), 3, "unflushed", ""),
        (("exit", "0"), 0, "unflushed", ""),
        (("message",), 1, "", "a message\n"),
        (("raise",), 1, "", "ValueError: boom\n"),
    ],
)
def test_exit_codes_and_last_words_are_the_scripts(
    script: Path, args: tuple[str, ...], code: int, out: str, err: str
) -> None:
    forked, itself = both(script, *args)
    for done in (forked, itself):
        assert done.returncode == code and done.stdout == out
        assert done.stderr.endswith(err)
    assert ("Traceback" in forked.stderr) == ("Traceback" in itself.stderr)


@pytest.mark.parametrize(("signo", "code"), [(signal.SIGTERM, 7), (signal.SIGKILL, None)])
def test_signals_reach_the_fork_and_a_killed_shim_takes_it_along(
    script: Path, tmp_path: Path, signo: int, code: int | None
) -> None:
    pidfile = tmp_path / "pid"
    shim = subprocess.Popen(
        [*zygote.command(script), "wait", str(pidfile)],
        stdout=subprocess.PIPE,
        text=True,
    )
    wait_until(lambda: pidfile.exists() and pidfile.read_text() != "", 30, "the fork to run")
    fork = int(pidfile.read_text())
    assert fork != shim.pid
    shim.send_signal(signo)
    out, _ = shim.communicate(timeout=30)
    if code is None:  # the shim is gone without a word: the fork goes too
        assert shim.returncode == -signal.SIGKILL
        wait_until(lambda: not alive(fork), 10, "the fork to be killed")
    else:  # forwarded: the script's handler ran, then its atexit
        assert shim.returncode == code and out == "atexit ran\n"
        assert not alive(fork)


def test_an_uncaught_interrupt_ends_by_sigint_as_python_does(script: Path, tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    codes = []
    for prefix in (zygote.command(script), [str(script)]):
        pidfile.unlink(missing_ok=True)
        proc = subprocess.Popen(
            [*prefix, "wait", str(pidfile)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        wait_until(lambda: pidfile.exists() and pidfile.read_text() != "", 30, "the run")
        time.sleep(0.1)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
        assert b"KeyboardInterrupt" in err
        codes.append(proc.returncode)
    assert codes == [-signal.SIGINT, -signal.SIGINT]


def test_an_environment_that_changes_how_python_starts_runs_the_script_itself(
    script: Path,
) -> None:
    env = {**os.environ, "PYTHONHASHSEED": "7"}
    forked, itself = both(script, "report", env=env, input="")
    assert json.loads(forked.stdout) == json.loads(itself.stdout)  # openai not preloaded: itself


def test_codebot_through_the_fork_server_answers_as_the_console_script(tmp_path: Path) -> None:
    for argv in (["--version"], ["nosuch"], ["--cwd", str(tmp_path), "mcp", "list", "--json"]):
        forked, itself = (
            subprocess.run([*prefix, *argv], capture_output=True, text=True, timeout=60)
            for prefix in (zygote.command(), [str(CODEBOT)])
        )
        assert (forked.returncode, forked.stdout, forked.stderr) == (
            itself.returncode,
            itself.stdout,
            itself.stderr,
        ), argv
