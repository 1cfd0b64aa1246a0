package hsbloom.format

/**
 * The state a log entry records. Stable states end an operation (the latest stable entry describes the index);
 * transient ones begin one and are always followed by a stable entry: the state the operation completes to, or
 * the state it started from (a rollback or a cancel). The names are `Layout`'s, which the query side reads too.
 *
 * {{{
 *             create                 delete                  vacuum
 *   (none) ──CREATING──> ACTIVE ──DELETING──> DELETED ──VACUUMING──> DOESNOTEXIST
 *   DOESNOTEXIST ─┘        ^  │                  │                      │
 *                          │  └──VACUUMING──> ACTIVE (old versions gone)│
 *                          └──────RESTORING──────┘                      └─ create again
 *   ACTIVE ──REFRESHING──> ACTIVE
 * }}}
 */
sealed abstract class State(val name: String, val stable: Boolean) {
  override def toString: String = name
}

object State {
  case object Creating extends State(Layout.Creating, stable = false)
  case object Active extends State(Layout.Active, stable = true)
  case object Deleting extends State(Layout.Deleting, stable = false)
  case object Deleted extends State(Layout.Deleted, stable = true)
  case object Restoring extends State(Layout.Restoring, stable = false)
  case object Vacuuming extends State(Layout.Vacuuming, stable = false)
  case object Refreshing extends State(Layout.Refreshing, stable = false)
  case object DoesNotExist extends State(Layout.DoesNotExist, stable = true)

  val all: Seq[State] = Seq(Creating, Active, Deleting, Deleted, Restoring, Vacuuming, Refreshing, DoesNotExist)

  def of(name: String): Option[State] = all.find(_.name == name)

  /**
   * For each transient state: the stable states an operation may start from (None: an empty log) and the stable
   * states that complete it. A transient entry may instead be followed by its starting state again.
   */
  private val transitions: Map[State, (Set[Option[State]], Set[State])] = Map(
    Creating -> ((Set(None, Some(DoesNotExist)), Set(Active))),
    Deleting -> ((Set(Some(Active)), Set(Deleted))),
    Restoring -> ((Set(Some(Deleted)), Set(Active))),
    Vacuuming -> ((Set(Some(Active), Some(Deleted), Some(DoesNotExist)), Set(Active, DoesNotExist))),
    Refreshing -> ((Set(Some(Active)), Set(Active))))

  /** Throws IllegalArgumentException unless an entry in `next` may follow one in `previous` (None: an empty log). */
  def checkTransition(previous: Option[State], next: State): Unit = previous match {
    case Some(p) if !p.stable =>
      if (!next.stable) throw new IllegalArgumentException(s"$next cannot follow the transient $p; a stable state must")
    case _ =>
      val allowed = transitions.get(next).exists(_._1.contains(previous))
      if (next.stable || !allowed) {
        throw new IllegalArgumentException(s"$next cannot follow ${previous.map(_.name).getOrElse("an empty log")}")
      }
  }
}
