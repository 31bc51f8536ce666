package io.github.ratelimit;

/**
 * A source of the current time in milliseconds since the epoch. Tests inject a controllable one; production uses
 * {@link #system()}. Stores that keep time themselves (Redis uses its own {@code TIME}) ignore it.
 *
 * @since 0.1.0
 */
@FunctionalInterface
public interface TimeSource {

	/**
	 * Return the current time.
	 * @return milliseconds since the epoch
	 */
	long currentTimeMillis();

	/**
	 * Return the time on a clock that never goes back, for durations: what a wall clock stepped back (NTP, a virtual
	 * machine resumed) must not stretch. By default the current time, for a source that is never stepped back.
	 * @return milliseconds since an arbitrary origin
	 * @since 0.4.0
	 */
	default long monotonicMillis() {
		return currentTimeMillis();
	}

	/**
	 * Return the system clock.
	 * @return a time source backed by {@link System#currentTimeMillis()}
	 */
	static TimeSource system() {
		return SystemTimeSource.INSTANCE;
	}

}
