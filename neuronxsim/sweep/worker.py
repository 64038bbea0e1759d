"""A local worker process of a sweep: ``python -m neuronxsim.sweep.worker``.

It reads batches of jobs from its stdin and writes their results to its stdout, both as
``multiprocessing.connection`` messages (a length, then a pickle), until stdin closes or a
message is None. Anything else written to stdout (a kernel's print) goes to stderr instead, so
it cannot corrupt the messages. It is a fresh interpreter, not a fork: it shares nothing with
the process that started it (threads, locks, ``__main__``).
"""

from __future__ import annotations

import os
import signal
import sys
from multiprocessing.connection import Connection


def main() -> int:
    out_fd = os.dup(1)
    os.dup2(2, 1)  # print() now goes to stderr; the messages to the saved descriptor
    sys.stdout = sys.stderr
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when the sweep stops
    receive = Connection(0, writable=False)
    send = Connection(out_fd, readable=False)

    from neuronxsim.sweep import job

    while True:
        try:
            batch = receive.recv()
        except EOFError:
            return 0
        if batch is None:
            return 0
        send.send(job.run_many(batch))


if __name__ == "__main__":
    sys.exit(main())
