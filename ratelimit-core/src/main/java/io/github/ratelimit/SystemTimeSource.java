package io.github.ratelimit;

/**
 * The system clock.
 */
enum SystemTimeSource implements TimeSource {

	INSTANCE;

	@Override
	public long currentTimeMillis() {
		return System.currentTimeMillis();
	}

	@Override
	public long monotonicMillis() {
		return System.nanoTime() / 1_000_000;
	}

}
