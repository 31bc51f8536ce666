package io.github.ratelimit.internal;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * Argument checks whose messages name the attribute and show the bad value.
 */
public final class Checks {

	private Checks() {
	}

	public static String hasText(@Nullable String value, String attribute) {
		if (value == null || value.isBlank()) {
			throw new IllegalArgumentException("'" + attribute + "' must not be empty");
		}
		return value;
	}

	public static <T> T notNull(@Nullable T value, String attribute) {
		if (value == null) {
			throw new IllegalArgumentException("'" + attribute + "' must not be null");
		}
		return value;
	}

	public static long atLeast(long value, long minimum, String attribute) {
		if (value < minimum) {
			throw new IllegalArgumentException("'" + attribute + "' must be at least " + minimum + " but was " + value);
		}
		return value;
	}

	public static Duration positiveWholeMillis(@Nullable Duration duration, String attribute) {
		Duration value = notNull(duration, attribute);
		if (value.isNegative() || value.isZero()) {
			throw new IllegalArgumentException(
					"'" + attribute + "' must be a positive duration but was '" + Durations.format(value) + "'");
		}
		if (value.compareTo(Duration.ofMillis(1)) < 0) {
			throw new IllegalArgumentException(
					"'" + attribute + "' must be at least 1ms but was '" + Durations.format(value) + "'");
		}
		if (value.getNano() % 1_000_000 != 0) {
			throw new IllegalArgumentException("'" + attribute + "' must be a whole number of milliseconds but was '"
					+ Durations.format(value) + "'");
		}
		return value;
	}

}
