package hsbloom.join

import hsbloom.rules.ThreadLines

/**
 * What the join rule decided for each join it looked at, for `hs.explain`:
 * while `collecting` runs (planning a query in this thread), `JoinFilterRule`
 * records one line per feature and join; otherwise recording costs nothing.
 */
object JoinDecisions extends ThreadLines(once = true)
