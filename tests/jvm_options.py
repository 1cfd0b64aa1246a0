"""The JIT setting of the tests' short-lived JVMs: writer processes, the standalone cluster's daemons, driver and
executors, the spark-sql shell and the Spark Connect server.

They live for one test file or less, on a 2-core machine busy with other tests: the server compiler (C2) spends
CPU on code that then runs too briefly to repay it. With the client compiler only, the cluster test took 87 s
instead of 125 s and the crash-step tests 141 s instead of 154 s (quiet machine, one run each). The tests' main
sessions (conftest) keep the JVM's default: they live for the whole run.
"""

SHORT_LIVED_JVM = "-XX:TieredStopAtLevel=1"
