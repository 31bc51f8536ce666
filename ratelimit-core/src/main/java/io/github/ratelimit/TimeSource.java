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
	 * Return the system clock.
	 * @return a time source backed by {@link System#currentTimeMillis()}
	 */
	static TimeSource system() {
		return SystemTimeSource.INSTANCE;
	}

}
