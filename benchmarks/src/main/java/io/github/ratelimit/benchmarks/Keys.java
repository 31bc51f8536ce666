package io.github.ratelimit.benchmarks;

/**
 * Precomputed keys, so that no benchmark measures string building.
 */
final class Keys {

	private Keys() {
	}

	static String[] of(int count) {
		String[] keys = new String[count];
		for (int i = 0; i < count; i++) {
			keys[i] = "client-" + i;
		}
		return keys;
	}

}
