"""How often a thread that holds the interpreter lock hands it over: set
by runpoller and runagent, whose poll threads share it with a reload, a
writer and (in an agent) a sender."""

# A worker thread drives up to 50 polls and hands the interpreter lock back
# several times a poll (epoll, libcurl calls). While another thread runs
# Python without a pause (a reload of 300,000 projects takes seconds),
# each time it wants the lock back it waits up to the switch interval: at
# CPython's default 5 ms, about 100 µs a time measured here, and polling
# fell to a fraction of its pace for the reload's length. 0.5 ms makes
# that wait about ten times shorter.
GIL_SWITCH_SECONDS = 0.0005
