package io.github.ratelimit.redis;

/**
 * The whole conformance suite on a real Redis through Jedis, through the store's non-blocking methods.
 */
class JedisRedisRateLimitStoreNonBlockingConformanceTests extends JedisRedisRateLimitStoreConformanceTests {

	@Override
	protected boolean nonBlocking() {
		return true;
	}

}
