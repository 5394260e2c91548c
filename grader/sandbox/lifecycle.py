"""A submission's child in its jail: started fresh (a fork), its strays swept, all of it killed at the end."""

from __future__ import annotations

from grader.core.submission import LoadError
from grader.sandbox.jail import Jail, Limits
from grader.sandbox.pipes import ChildPipes
from grader.sandbox.renice import SlowCalls
from grader.sandbox.wire import ProtocolError

LOAD_TIMEOUT = 10.0  # seconds the fork server may take to kill the last child and fork the next


class Lifecycle:
    """Start, restart and end one submission's child, in a jail of its own or one lent for a while."""

    def __init__(self, jail: Jail | None, limits: Limits, mode: str) -> None:
        self.own_jail = jail is None
        self.jail = jail or Jail(limits, mode)
        self.slow = SlowCalls(self.jail.submission_processes)
        self.pipes = ChildPipes(self.jail, self.slow)
        self.closed = False

    def fresh_child(self) -> None:
        """Kill whatever the submission runs, and fork a new child that waits for its code; LoadError if it cannot."""
        jail, pipes = self.jail, self.pipes
        event = None
        for _ in range(2):
            if not jail.alive():
                jail.close()
                jail.start()
            try:
                if jail.clean:
                    event = {"event": "killed"}  # the last submission's close killed all of it
                else:
                    pipes.send(jail.ctl_w, {"op": "kill"})
                    event = pipes.control(lambda e: e.get("event") == "killed", LOAD_TIMEOUT)
                jail.clean = False
                if event is not None:
                    pipes.forget_answers()
                    pipes.send(jail.ctl_w, {"op": "spawn"})
                    event = pipes.control(lambda e: e.get("event") == "spawned" and type(e.get("pid")) is int, LOAD_TIMEOUT)
            except (OSError, ProtocolError):
                event = None
            if event is not None:
                break
            # The server is gone (the submission may have killed it): a new jail, once.
            jail.close()
        if event is None:
            raise LoadError("the sandbox did not start")
        pipes.reset(event["pid"])

    def sweep(self) -> None:
        """Kill any process the submission left running, keeping the child that answers calls."""
        try:
            self.pipes.send(self.jail.ctl_w, {"op": "sweep"})
            self.pipes.control(lambda e: e.get("event") == "swept", 5.0)
        except (OSError, ProtocolError):
            pass

    def close(self) -> None:
        """End every process of this submission (and the jail, unless it was lent)."""
        if self.closed:
            return  # a lent jail may serve another submission by now: leave it alone
        self.closed = True
        if not self.own_jail and self.jail.alive():
            try:
                self.pipes.send(self.jail.ctl_w, {"op": "kill"})
                if self.pipes.control(lambda e: e.get("event") == "killed", 5.0) is not None:
                    self.jail.clean = True
                    return
            except (OSError, ProtocolError):
                pass
        self.jail.close()
