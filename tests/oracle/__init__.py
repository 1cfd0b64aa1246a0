"""Reference implementations in Python of what the jar does: the Parquet SBBF and its hash.

The product builds and probes filters on the JVM only (hsbloom.sbbf). These independent implementations,
vectorized with numpy, are the tests' oracle: they check the jar's filters bit for bit, and are themselves
checked against the `xxhash` package, parquet-java and pyarrow (tests/test_sbbf_*.py, tests/test_hashing.py).
"""
