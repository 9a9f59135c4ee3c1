"""django-q2's cluster in one process, for a small install (`Q_WORKERS=1`).

django-q2 runs one worker as five processes: qcluster, a sentinel that
guards the others, a pusher (queue to worker), a monitor (worker to the
results table) and the worker. Each holds its own copy of every page
Python touches, about 20 MiB apiece idle (docs/benchmarks.md, "make run
footprint"). Here the same four functions of django-q2 (`pusher`,
`worker`, `monitor`, `scheduler`) run as threads of one process, so the
queue, signing, retries, results, schedules and the admin are django-q2's
own:

- the worker in the main thread, where SIGALRM can interrupt a task past
  its timeout (django-q2's `TimeoutHandler`);
- the pusher and the monitor in threads, restarted by the guard if they
  die, as the sentinel restarts their processes;
- the guard in a thread that waits for SIGTERM or SIGINT (blocked in every
  thread, so no handler runs in the middle of a task) and runs the
  scheduler every SCHEDULER_SECONDS.

A stop lets the tasks in hand finish, as the multi-process cluster does.
What one process cannot do: kill a task stuck in C code past Q_TIMEOUT
(the alarm interrupts Python code only); `Q_WORKERS` of 2 or more runs
django-q2's own cluster, whose sentinel can.
"""

from __future__ import annotations

import queue
import signal
import threading
import time
from multiprocessing import Value

from django_q.brokers import Broker, get_broker
from django_q.conf import Conf, logger
from django_q.monitor import monitor
from django_q.pusher import pusher
from django_q.scheduler import scheduler
from django_q.worker import worker

from django.db import connections

# django-q2's sentinel looks at the schedules every 30 s; so does this.
SCHEDULER_SECONDS = 30
# The worker's timer after worker() returns: what it was doing.
RECYCLED, TIMED_OUT = -2, 0
STOP = "STOP"  # django-q2's pill: worker() and monitor() end on it


class OneProcessCluster:
    def __init__(self, stop_signals: set[int], on_start=None, on_stop=None):
        self.stop_signals = stop_signals
        # Called once the broker answers, and with the stop signal's number.
        self.on_start = on_start or (lambda: None)
        self.on_stop = on_stop or (lambda signum: None)
        self.broker: Broker = get_broker()
        bound = Conf.QUEUE_LIMIT or 0
        self.task_queue: queue.Queue = queue.Queue(maxsize=bound)
        self.result_queue: queue.Queue = queue.Queue()
        self.stop_pushing = threading.Event()
        self.pusher = self.monitor = None

    def run(self) -> None:
        """Work until a stop signal, then finish the tasks in hand. The
        stop signals must be blocked in the calling thread already, so
        that every thread started here inherits that."""
        self.broker.ping()
        self.pusher = self.start_thread("pusher", self.push)
        self.monitor = self.start_thread("monitor", self.save_results)
        self.start_thread("guard", self.watch)
        self.on_start()
        try:
            self.work()
        finally:
            self.result_queue.put(STOP)
            self.monitor.join()

    def work(self) -> None:
        """django-q2's worker, run again after it recycles itself or a task
        timed out (a process would be replaced then; a thread can go on)."""
        timer = Value("f", -1)
        while True:
            worker(self.task_queue, self.result_queue, timer, Conf.TIMEOUT)
            if timer.value not in (RECYCLED, TIMED_OUT):
                return
            timer.value = -1

    def push(self) -> None:
        pusher(self.task_queue, self.stop_pushing, self.broker)

    def save_results(self) -> None:
        try:
            monitor(self.result_queue, self.broker)
        finally:
            connections.close_all()

    def watch(self) -> None:
        """The guard: the schedules, the helpers' health, the stop signal."""
        next_schedule = time.monotonic()
        while True:
            if time.monotonic() >= next_schedule:
                self.schedule()
                # From now: after a stall (a suspended machine), one round,
                # not one for each 30 s missed.
                next_schedule = time.monotonic() + SCHEDULER_SECONDS
            self.restart_dead_helpers()
            received = signal.sigtimedwait(self.stop_signals, Conf.GUARD_CYCLE)
            if received is not None:
                break
        self.on_stop(received.si_signo)
        self.stop_pushing.set()
        self.pusher.join()
        # After every task the pusher queued, so those are done first.
        self.task_queue.put(STOP)
        connections.close_all()

    def schedule(self) -> None:
        try:
            scheduler(broker=self.broker)
        except Exception:
            # The database may be away for a moment; the next round retries.
            logger.exception("The scheduler failed")

    def restart_dead_helpers(self) -> None:
        if not self.pusher.is_alive() and not self.stop_pushing.is_set():
            logger.critical("restarted the pusher after its death")
            self.pusher = self.start_thread("pusher", self.push)
        if not self.monitor.is_alive():
            logger.critical("restarted the monitor after its death")
            self.monitor = self.start_thread("monitor", self.save_results)

    @staticmethod
    def start_thread(name: str, target) -> threading.Thread:
        """A helper thread, started with SIGALRM blocked (a thread inherits
        its creator's mask): the alarm of a task past its timeout must
        reach the worker's thread. The kernel gives a process's signal to
        any thread not blocking it, and a task sleeping in the main thread
        is not woken when another thread takes it (in a trial with such
        helper threads, 1 alarm in 20)."""
        blocked_before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
        try:
            thread = threading.Thread(target=target, name=f"tasks-{name}", daemon=True)
            thread.start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked_before)
        return thread
