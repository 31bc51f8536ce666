package io.github.ratelimit.internal;

import java.time.Duration;

/**
 * Formatting and rounding of durations for messages and headers.
 */
public final class Durations {

	private Durations() {
	}

	/**
	 * Format a duration the way it would be written in configuration ({@code 500ms}, {@code 30s}, {@code 1m}).
	 * @param duration the duration
	 * @return the shortest exact form with a single unit
	 */
	public static String format(Duration duration) {
		if (duration.getNano() % 1_000_000 != 0) {
			return duration.toString();
		}
		long millis = duration.getSeconds() * 1000 + duration.getNano() / 1_000_000;
		if (millis == 0) {
			return "0s";
		}
		if (millis % 86_400_000 == 0) {
			return millis / 86_400_000 + "d";
		}
		if (millis % 3_600_000 == 0) {
			return millis / 3_600_000 + "h";
		}
		if (millis % 60_000 == 0) {
			return millis / 60_000 + "m";
		}
		if (millis % 1000 == 0) {
			return millis / 1000 + "s";
		}
		return millis + "ms";
	}

	/**
	 * Round milliseconds up to whole seconds, so that a client told to wait never retries too early.
	 * @param millis a non-negative number of milliseconds
	 * @return the number of seconds, rounded up
	 */
	public static long toSecondsRoundedUp(long millis) {
		// Math.ceilDiv is Java 18+.
		return (millis <= 0) ? 0 : (millis + 999) / 1000;
	}

}
