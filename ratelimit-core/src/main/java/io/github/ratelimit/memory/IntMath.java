package io.github.ratelimit.memory;

/**
 * Rounding up in integer division, as the Lua scripts do it, so both stores round the same way.
 */
final class IntMath {

	private IntMath() {
	}

	/**
	 * Return {@code ⌈a / b⌉} for {@code a ≥ 0}, {@code b > 0}. ({@code Math.ceilDiv} is Java 18+.)
	 */
	static long ceilDiv(long a, long b) {
		return (a + b - 1) / b;
	}

}
