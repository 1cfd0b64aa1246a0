"""The JIT setting of the tests' short-lived JVMs: writer processes, the standalone cluster's daemons, driver and
executors, the spark-sql shell and the Spark Connect server.

They live for one test file or less, on a 2-core machine busy with other tests, where the server compiler (C2)
spends CPU on code that runs too briefly to repay it. The tests' main sessions (conftest) keep the JVM's default:
they live for the whole run. Measurements: docs/design/decisions.md, "The test run".
"""

SHORT_LIVED_JVM = "-XX:TieredStopAtLevel=1"
