package io.github.ratelimit.redis;

/**
 * The whole conformance suite on a real Redis, through the store's non-blocking methods.
 */
class RedisRateLimitStoreNonBlockingConformanceTests extends RedisRateLimitStoreConformanceTests {

	@Override
	protected boolean nonBlocking() {
		return true;
	}

}
