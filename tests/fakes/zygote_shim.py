"""``python -SE zygote_shim.py SOCKET SCRIPT ARGS...``: run ``SCRIPT ARGS`` as a fork of the
:mod:`tests.fakes.zygote` server listening on ``SOCKET``, and end as the fork ends.

Standard library only (it runs without ``site``). It hands the server its stdin, stdout and
stderr, its environment, working directory and ``ARGS``; forwards the signals a caller sends
(``SIGINT``, ``SIGTERM``, ``SIGHUP``, ``SIGQUIT``, ``SIGUSR1``, ``SIGUSR2``, ``SIGWINCH``,
``SIGALRM``) to the fork; and exits with the fork's code, or kills itself with the signal that
ended it. On a terminal, without a server, or when the server answers ``fallback``, it
``exec``s ``SCRIPT`` itself: the run is then the console script's own.
"""

import json
import os
import signal
import socket
import sys

FORWARDED = (
    signal.SIGINT,
    signal.SIGTERM,
    signal.SIGHUP,
    signal.SIGQUIT,
    signal.SIGUSR1,
    signal.SIGUSR2,
    signal.SIGWINCH,
    signal.SIGALRM,
)


def main() -> None:
    path, script, args = sys.argv[1], sys.argv[2], sys.argv[3:]

    def itself() -> None:
        os.execv(script, [script, *args])

    try:
        if any(os.isatty(fd) for fd in (0, 1, 2)):
            itself()
        channel = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        channel.connect(path)
    except OSError:
        itself()
    pid = 0
    pending = []

    def forward(signo: int, _frame: object) -> None:
        if not pid:
            pending.append(signo)
            return
        try:
            os.kill(pid, signo)
        except ProcessLookupError:
            pass

    for signo in FORWARDED:
        signal.signal(signo, forward)
    request = {"script": script, "argv": args, "env": dict(os.environ), "cwd": os.getcwd()}
    try:
        socket.send_fds(channel, [json.dumps(request).encode()], [0, 1, 2])
        reply = json.loads(channel.recv(4096) or b"{}")
    except OSError:
        reply = {"fallback": "no answer"}
    if "pid" not in reply:
        channel.close()
        for signo in FORWARDED:
            signal.signal(signo, signal.SIG_DFL)
        itself()
    pid = reply["pid"]
    for signo in pending:
        forward(signo, None)
    data = channel.recv(4096)
    if not data:
        sys.stderr.write("zygote_shim: the codebot fork server ended during the run\n")
        os._exit(1)
    code = json.loads(data)["exit"]
    if code < 0:
        signal.signal(-code, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [-code])
        os.kill(os.getpid(), -code)
        code = 128 - code
    os._exit(code)


main()
