package hsbloom.log

import java.util.concurrent.{CyclicBarrier, TimeUnit}

import hsbloom.format.State

/**
 * A seam for the tests that stop a writer at a step of its operation, as a crash would, and for the tests of
 * writers racing for one log entry (`CrashStepsSuite`, `RacesSuite`, tests/test_index_management.py's writer
 * process, tests/test_refresh.py). Off unless a test sets it:
 * then one volatile read per append. Steps: "transient" (right after an operation's transient entry is written),
 * "built" (right before its completing entry is written), "first-removal" (right after a vacuum removed its first
 * data directory: `reached`).
 */
object LogSteps {
  /**
   * Thrown at a step: it is not `NonFatal`, so no rollback runs on its way out, as after a kill. Its message is a
   * method, not a constructor argument: `ControlThrowable` is a trait in Scala 2.12 and a class in 2.13.
   */
  final class StepReached(step: String) extends scala.util.control.ControlThrowable {
    override def getMessage: String = s"hsbloom test: the writer stopped at step '$step'"
  }

  @volatile private var stop: Option[String] = None
  @volatile private var barrier: Option[CyclicBarrier] = None
  private val waited = java.util.concurrent.ConcurrentHashMap.newKeySet[java.lang.Long]() // threads that have waited

  /**
   * At `step`, throw `StepReached`. The writer's JVM lives on; a real process death is a test killing that JVM
   * afterwards (tests/test_index_management.py), which leaves the log as a death at the step would.
   */
  def stopAt(step: String): Unit = {
    require(Seq("transient", "built", "first-removal").contains(step), step)
    stop = Some(step)
  }

  /** Every thread waits, before its first transient entry, until `parties` threads are there (a race on one id). */
  def raceBeforeTransient(parties: Int): Unit = { waited.clear(); barrier = Some(new CyclicBarrier(parties)) }

  def clear(): Unit = { stop = None; barrier = None; waited.clear() }

  private[log] def beforeAppend(previous: Option[State], next: State): Unit = {
    if (previous.exists(!_.stable) && next.stable) reached("built")
    barrier.foreach { b =>
      if (!next.stable && waited.add(Thread.currentThread.getId)) b.await(300, TimeUnit.SECONDS)
    }
  }

  private[log] def afterAppend(next: State, written: Boolean): Unit = if (written && !next.stable) reached("transient")

  /** Stops here if a test asked for `step`. */
  def reached(step: String): Unit = if (stop.contains(step)) throw new StepReached(step)
}
