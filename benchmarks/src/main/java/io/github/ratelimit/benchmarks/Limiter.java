package io.github.ratelimit.benchmarks;

/**
 * One rate limiter under measurement, behind the smallest common interface, so that ours and the peers run the
 * same benchmark code.
 */
interface Limiter extends AutoCloseable {

	/**
	 * Decide one request for the key.
	 * @return whether it may pass
	 */
	boolean tryAcquire(String key);

	@Override
	default void close() {
	}

}
