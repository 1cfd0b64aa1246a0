package hsbloom.pruning

import hsbloom.rules.ThreadLines

/**
 * The pruned listings made in this thread while `collecting` runs, one line
 * each (the files listed, before and after pruning), for
 * `StatementExplain`: a Delta DELETE, UPDATE or MERGE plans its scans only
 * while it runs, so what they read is known only then. Otherwise recording
 * costs nothing.
 */
object PruningReports extends ThreadLines(once = false)
