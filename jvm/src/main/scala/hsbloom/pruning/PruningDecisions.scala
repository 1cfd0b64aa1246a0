package hsbloom.pruning

import hsbloom.rules.ThreadLines

/**
 * Scans the pruning rules left unpruned on purpose while a query was planned
 * in this thread (below a nondeterministic operator, `Nondeterminism`), one
 * line each, for `hs.explain`'s "Indexes not used". Otherwise recording costs
 * nothing.
 */
object PruningDecisions extends ThreadLines(once = true)
